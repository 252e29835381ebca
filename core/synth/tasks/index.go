package tasks

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"

	"github.com/weft-dev/weft/core/state"
)

// entityIndex holds the seed's values by key for sampling bindings: every
// column value and every JSON leaf (under its object key) of every row.
type entityIndex struct {
	rows  []entityRow
	byKey map[string][]any // distinct values, first-seen order
	// top lists, per column name, the rows holding it as a column.
	top map[string][]int
}

type entityRow struct {
	table string
	vals  map[string][]any // key -> values anywhere in the row
}

func buildIndex(v *state.Version) (*entityIndex, error) {
	var buf bytes.Buffer
	if err := v.Export(&buf); err != nil {
		return nil, err
	}
	var doc struct {
		Tables []struct {
			Name    string   `json:"name"`
			Columns []string `json:"columns"`
			Rows    [][]any  `json:"rows"`
		} `json:"tables"`
	}
	d := json.NewDecoder(&buf)
	d.UseNumber()
	if err := d.Decode(&doc); err != nil {
		return nil, err
	}
	ix := &entityIndex{byKey: map[string][]any{}, top: map[string][]int{}}
	seen := map[string]map[string]bool{}
	add := func(r *entityRow, k string, x any) {
		r.vals[k] = append(r.vals[k], x)
		s := seen[k]
		if s == nil {
			s = map[string]bool{}
			seen[k] = s
		}
		if t := scalarText(x); !s[t] {
			s[t] = true
			ix.byKey[k] = append(ix.byKey[k], x)
		}
	}
	for _, t := range doc.Tables {
		for _, row := range t.Rows {
			r := entityRow{table: t.Name, vals: map[string][]any{}}
			for i, x := range row {
				if i >= len(t.Columns) {
					break
				}
				c := t.Columns[i]
				if isScalar(x) {
					add(&r, c, x)
				}
				if s, ok := x.(string); ok {
					if ts := strings.TrimSpace(s); len(ts) > 1 && (ts[0] == '{' || ts[0] == '[') {
						var j any
						dj := json.NewDecoder(strings.NewReader(ts))
						dj.UseNumber()
						if dj.Decode(&j) == nil {
							walkLeaves(c, j, func(k string, y any) { add(&r, k, y) })
						}
					}
				} else {
					walkLeaves(c, x, func(k string, y any) { add(&r, k, y) })
				}
			}
			ix.rows = append(ix.rows, r)
			for _, c := range t.Columns {
				ix.top[c] = append(ix.top[c], len(ix.rows)-1)
			}
		}
	}
	return ix, nil
}

func isScalar(x any) bool {
	switch x.(type) {
	case string, json.Number, bool:
		return true
	}
	return false
}

// walkLeaves calls f(key, value) for every scalar under an object key of x
// (key is the nearest object key; elements of arrays inherit it).
func walkLeaves(key string, x any, f func(string, any)) {
	switch v := x.(type) {
	case map[string]any:
		ks := make([]string, 0, len(v))
		for k := range v {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		for _, k := range ks {
			y := v[k]
			if isScalar(y) {
				f(k, y)
			}
			walkLeaves(k, y, f)
		}
	case []any:
		for _, y := range v {
			if isScalar(y) {
				f(key, y)
			}
			walkLeaves(key, y, f)
		}
	}
}

func scalarText(x any) string {
	switch v := x.(type) {
	case string:
		return "s:" + v
	case json.Number:
		return "n:" + v.String()
	case bool:
		if v {
			return "b:true"
		}
		return "b:false"
	}
	return ""
}

// singular drops a plural "s" ("item_ids" -> "item_id").
func singular(k string) string {
	if strings.HasSuffix(k, "ies") {
		return strings.TrimSuffix(k, "ies") + "y"
	}
	if strings.HasSuffix(k, "s") && len(k) > 1 {
		return strings.TrimSuffix(k, "s")
	}
	return k
}
