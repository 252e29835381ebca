// Package filetest holds the end-to-end tests of workspace files through a
// tool module: a module written against the guest SDK (tool.Files)
// registered in this test binary, run natively by module.NewNative with the
// real weft_fs_v1 host library on a state workspace. A package of its own
// so its module registration (the SDK's registry is process-wide) does not
// change the other module tests' manifests.
package filetest
