// Command notesfs is the workspace-files example module: notes kept both as
// rows (table notes) and as lines of the workspace file notes/log.txt, plus
// plain file tools (read_file, write_file, list_files, remove_file) over
// the workspace paths it declares (notes/** written, README.md read). The
// serving tests' crash test drives it (add_note, list_notes read from the
// file) to show that acknowledged file writes survive kill -9 and
// recovery. Build it with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o notesfs.wasm ./examples/modules/notesfs
//
// schema.sql holds the DDL of its table; seed.json its seed state (a
// weft.state/v1 document whose "files" member carries README.md).
package main
