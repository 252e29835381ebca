package state

import (
	"fmt"
	"strings"

	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// ValidNamespace reports whether ns may name a namespace: 1 to 48
// characters of [a-z0-9_], starting with a letter, with no "__" (the
// separator of stored names) and not ending in "_" (which would make one
// with the separator). Errors are *Error of kind ErrBadArgument.
func ValidNamespace(ns string) error {
	bad := func(why string) error {
		return &Error{Kind: ErrBadArgument, Err: fmt.Errorf("state: namespace %q: %s", ns, why)}
	}
	switch {
	case ns == "":
		return bad("empty")
	case len(ns) > 48:
		return bad("longer than 48 characters")
	case ns[0] < 'a' || ns[0] > 'z':
		return bad("must start with a lower-case letter")
	case strings.Contains(ns, NamespaceSep):
		return bad(`contains "__", the separator of namespaced table names`)
	case strings.HasSuffix(ns, "_"):
		return bad(`ends in "_"`)
	}
	for _, r := range ns {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return bad(fmt.Sprintf("character %q is not one of [a-z0-9_]", r))
		}
	}
	return nil
}

// Namespaced returns v with every table stored as ns + "__" + its name
// (NamespacedTable): rows, indexes and files shared, the DDL rewritten to
// the new names (foreign-key references included), so Export and Import of
// the result round-trip. The hash of the result differs from v's (names
// are part of the state). Errors: an invalid ns (ValidNamespace), a table
// whose name already holds "__", DDL that does not parse; all *Error of
// kind ErrBadArgument. v is never changed.
func (v *Version) Namespaced(ns string) (*Version, error) {
	if err := ValidNamespace(ns); err != nil {
		return nil, err
	}
	rename := map[string]string{}
	for _, td := range v.tables {
		if strings.Contains(td.schema.name, NamespaceSep) {
			return nil, &Error{Kind: ErrBadArgument, Table: td.schema.name, Err: fmt.Errorf("state: table %q already holds %q: it cannot be namespaced", td.schema.name, NamespaceSep)}
		}
		rename[td.schema.lname] = NamespacedTable(ns, td.schema.name)
	}
	cat := &catalog{index: make(map[string]int, len(v.tables))}
	tables := make([]*tableData, len(v.tables))
	for i, td := range v.tables {
		ts := *td.schema
		ts.name = rename[td.schema.lname]
		ts.lname = strings.ToLower(ts.name)
		ts.canon = ts.describe()
		nd := *td
		nd.schema = &ts
		tables[i] = &nd
		cat.index[ts.lname] = i
	}
	for _, st := range v.cat.ddl {
		out, err := renameDDL(st, rename)
		if err != nil {
			return nil, &Error{Kind: ErrBadArgument, Err: fmt.Errorf("state: namespacing the DDL %q: %w", firstLine(st), err)}
		}
		cat.ddl = append(cat.ddl, out)
	}
	return v.store.newVersionFiles(cat, tables, v.files), nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// renameDDL rewrites the table names of one CREATE TABLE / CREATE INDEX /
// ALTER TABLE statement by rename (lower-case name -> new name).
func renameDDL(st string, rename map[string]string) (string, error) {
	stmt, err := sqlparser.Parse(st)
	if err != nil {
		return "", err
	}
	name := func(tn *sqlparser.TableName) {
		if n, ok := rename[strings.ToLower(tn.Name.String())]; ok {
			tn.Name = sqlparser.NewTableIdent(n)
		}
	}
	ddl := func(d *sqlparser.DDL) {
		name(&d.Table)
		if d.TableSpec != nil {
			for _, c := range d.TableSpec.Constraints {
				if fk, ok := c.Details.(*sqlparser.ForeignKeyDefinition); ok {
					name(&fk.ReferencedTable)
				}
			}
		}
	}
	switch s := stmt.(type) {
	case *sqlparser.DDL:
		ddl(s)
	case *sqlparser.AlterTable:
		name(&s.Table)
		for _, d := range s.Statements {
			ddl(d)
		}
	default:
		return "", fmt.Errorf("not a schema statement (%T)", stmt)
	}
	return sqlparser.String(stmt), nil
}
