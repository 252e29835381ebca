package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"

	"github.com/weft-dev/weft/core/state"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func seedVersion(ctx context.Context, store *state.Store, involved []string, config map[string]json.RawMessage) (*state.Version, error) {
	rows, files, err := seedRows(involved, config)
	if err != nil {
		return nil, err
	}
	v, err := store.LoadJSON(ctx, schemaSQL, bytes.NewReader(rows))
	if err != nil || len(files) == 0 {
		return v, err
	}
	fs := make([]state.File, len(files))
	for i, e := range files {
		fs[i] = state.File{Path: e.path, Dir: e.dir}
		if !e.dir {
			fs[i].Data = []byte(e.content)
		}
	}
	return v.WithFiles(fs)
}
