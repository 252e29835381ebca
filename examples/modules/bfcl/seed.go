package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
)

//go:embed schema.sql
var schemaSQL string

// seedRows is the seed of a starting configuration in state.LoadJSON's
// rows layout: one bfcl_class row per involved class (and per class of
// config), config holding the class's initial_config as JSON text ({}
// when it has none).
func seedRows(involved []string, config map[string]json.RawMessage) ([]byte, error) {
	names := slices.Clone(involved)
	for n := range config {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	rows := []map[string]any{}
	for _, n := range names {
		if classes[n] == nil {
			return nil, fmt.Errorf("bfcl: unknown class %q", n)
		}
		cfg := "{}"
		if raw, ok := config[n]; ok && len(bytes.TrimSpace(raw)) > 0 {
			var buf bytes.Buffer
			if err := json.Compact(&buf, raw); err != nil {
				return nil, fmt.Errorf("bfcl: %s config: %w", n, err)
			}
			cfg = buf.String()
		}
		rows = append(rows, map[string]any{"name": n, "config": cfg, "state": nil})
	}
	return json.Marshal(map[string]any{"bfcl_class": rows})
}
