// Package paritytest holds the Go tests of the C retail module
// (examples/modules/retail-c, which as a folder of C sources cannot hold Go
// files itself): every call of both tau2 retail oracle files through the C
// module and the Go module (examples/modules/retail) compiled to wasm, on
// forks of the same seed, their answers compared byte for byte (text
// content, structured content, error flag) and their final states by the
// export hook; hostile arguments; determinism; the manifest; and a fuzz
// test of the C JSON argument scanner.
package paritytest
