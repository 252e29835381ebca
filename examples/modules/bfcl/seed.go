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
// when it has none), state NULL (the first call loads it). The
// GorillaFileSystem's tree is not SQL: its row is loaded already (config
// without "root", its attributes, the side record among them, in
// bfcl_attr), its entries' order is in
// bfcl_fs_entry rows, and files lists the workspace entries the seed
// carries (fsfiles.go).
func seedRows(involved []string, config map[string]json.RawMessage) (rows []byte, files []visEntry, err error) {
	names := slices.Clone(involved)
	for n := range config {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	classRows := []map[string]any{}
	entryRows := []map[string]any{}
	attrRowsOut := []map[string]any{}
	for _, n := range names {
		if classes[n] == nil {
			return nil, nil, fmt.Errorf("bfcl: unknown class %q", n)
		}
		cfg := "{}"
		if raw, ok := config[n]; ok && len(bytes.TrimSpace(raw)) > 0 {
			var buf bytes.Buffer
			if err := json.Compact(&buf, raw); err != nil {
				return nil, nil, fmt.Errorf("bfcl: %s config: %w", n, err)
			}
			cfg = buf.String()
		}
		row := map[string]any{"name": n, "config": cfg, "state": nil}
		if n == "GorillaFileSystem" {
			v, err := decodeValue([]byte(cfg))
			if err != nil {
				return nil, nil, fmt.Errorf("bfcl: %s config: %w", n, err)
			}
			d, _ := v.(*Dict)
			if d == nil {
				d = newDict()
			}
			self, vis, err := fsSeed(d)
			if err != nil {
				return nil, nil, err
			}
			rest := newDict()
			for _, k := range d.Keys() {
				if k != "root" {
					rest.Set(k, d.G(k))
				}
			}
			cb, _ := marshal(rest)
			names, attrs, err := attrRows(self)
			if err != nil {
				return nil, nil, err
			}
			row["config"], row["state"] = string(cb), names
			for _, k := range self.Keys() {
				attrRowsOut = append(attrRowsOut, map[string]any{"class": n, "attr": k, "value": attrs[k]})
			}
			for _, e := range vis {
				entryRows = append(entryRows, map[string]any{"path": e.path, "ord": e.ord})
			}
			files = vis
		}
		classRows = append(classRows, row)
	}
	rows, err = json.Marshal(map[string]any{"bfcl_class": classRows, "bfcl_attr": attrRowsOut, "bfcl_fs_entry": entryRows})
	return rows, files, err
}
