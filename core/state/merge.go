package state

import (
	"fmt"
	"slices"
)

// Merge returns a version holding the tables and files of every version in vs, in the
// order given: the seed state of a lifecycle group whose modules each bring
// their own tables. A table present in several versions must be identical in
// all of them (same schema and rows), else the error is an *Error of kind
// ErrBadArgument naming it (likewise a file path holding different
// entries); versions of another store give ErrForeignStore.
// O(total tables); rows are shared, not copied. Merge of one version returns
// it unchanged.
func Merge(vs ...*Version) (*Version, error) {
	if len(vs) == 0 {
		return nil, &Error{Kind: ErrBadArgument, Err: fmt.Errorf("state: Merge needs at least one version")}
	}
	if len(vs) == 1 {
		return vs[0], nil
	}
	s := vs[0].store
	cat := &catalog{index: map[string]int{}}
	var tables []*tableData
	for _, v := range vs {
		if v.store != s {
			return nil, &Error{Kind: ErrForeignStore}
		}
		for _, td := range v.tables {
			if slot, ok := cat.index[td.schema.lname]; ok {
				other := tables[slot]
				if other != td && (other.schema.canonical() != td.schema.canonical() || other.sum != td.sum || other.rows.Len() != td.rows.Len()) {
					return nil, &Error{Kind: ErrBadArgument, Err: fmt.Errorf("state: table %s differs between the merged versions", td.schema.name)}
				}
				continue
			}
			cat.index[td.schema.lname] = len(tables)
			tables = append(tables, td)
		}
		for _, st := range v.cat.ddl {
			if !slices.Contains(cat.ddl, st) {
				cat.ddl = append(cat.ddl, st)
			}
		}
	}
	var trees []*fileTree
	for _, v := range vs {
		trees = append(trees, v.files)
	}
	files, err := mergeFiles(trees)
	if err != nil {
		return nil, err
	}
	return s.newVersionFiles(cat, tables, files), nil
}
