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
	rows, err := seedRows(involved, config)
	if err != nil {
		return nil, err
	}
	return store.LoadJSON(ctx, schemaSQL, bytes.NewReader(rows))
}
