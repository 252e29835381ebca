package tool

import "io/fs"

// FilesFS is an io/fs file system with ReadFile, ReadDir and Stat.
var (
	_ fs.ReadFileFS = FilesFS{}
	_ fs.ReadDirFS  = FilesFS{}
	_ fs.StatFS     = FilesFS{}
)
