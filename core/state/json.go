package state

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// ExportFormat names the JSON layout written by Version.Export.
const ExportFormat = "weft.state/v1"

// exportDoc is the JSON layout of an exported state:
//
//	{"format": "weft.state/v1",
//	 "ddl": ["CREATE TABLE ...", ...],
//	 "tables": [{"name": "orders", "columns": ["id", ...], "auto_increment": 4,
//	             "rows": [[1, "12.50", ...], ...]}, ...],
//	 "files": [{"path": "docs", "dir": true},
//	           {"path": "docs/a.txt", "data": "text"},
//	           {"path": "logo.png", "base64": "iVBO..."}]}
//
// Tables are ordered by lower-case name, rows by primary key and files by
// path, so equal states export to identical bytes. "files" is omitted when
// the state has none (so states without files export as before); a file
// whose content is valid UTF-8 is written as "data" text, any other as
// "base64".
type exportDoc struct {
	Format string        `json:"format"`
	DDL    []string      `json:"ddl"`
	Tables []exportTable `json:"tables"`
	Files  []exportFile  `json:"files,omitempty"`
}

// exportFile is one workspace entry of an export or delta: exactly one of
// Dir, Data and Base64.
type exportFile struct {
	Path   string  `json:"path"`
	Dir    bool    `json:"dir,omitempty"`
	Data   *string `json:"data,omitempty"`
	Base64 *string `json:"base64,omitempty"`
}

func toExportFile(p string, n *fileNode) exportFile {
	ef := exportFile{Path: p, Dir: n.dir}
	if n.dir {
		return ef
	}
	if utf8.Valid(n.data) {
		s := string(n.data)
		ef.Data = &s
	} else {
		s := base64.StdEncoding.EncodeToString(n.data)
		ef.Base64 = &s
	}
	return ef
}

// fromExportFile decodes one entry (ErrBadImport when malformed).
func fromExportFile(ef exportFile) (File, error) {
	bad := func(why string) (File, error) {
		return File{}, &Error{Kind: ErrBadImport, Path: ef.Path, Err: fmt.Errorf("file %q: %s", ef.Path, why)}
	}
	n := 0
	for _, set := range []bool{ef.Dir, ef.Data != nil, ef.Base64 != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return bad(`needs exactly one of "dir": true, "data" and "base64"`)
	}
	switch {
	case ef.Dir:
		return File{Path: ef.Path, Dir: true}, nil
	case ef.Data != nil:
		return File{Path: ef.Path, Data: []byte(*ef.Data)}, nil
	}
	b, err := base64.StdEncoding.DecodeString(*ef.Base64)
	if err != nil {
		return bad("base64: " + err.Error())
	}
	return File{Path: ef.Path, Data: b}, nil
}

func importFiles(v *Version, efs []exportFile) (*Version, error) {
	if len(efs) == 0 {
		return v, nil
	}
	files := make([]File, 0, len(efs))
	for _, ef := range efs {
		f, err := fromExportFile(ef)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return v.WithFiles(files)
}

type exportTable struct {
	Name          string              `json:"name"`
	Columns       []string            `json:"columns"`
	AutoIncrement uint64              `json:"auto_increment,omitempty"`
	Rows          [][]json.RawMessage `json:"rows"`
}

// jsonEscapeKey wraps JSON column values that would otherwise be ambiguous:
// the JSON literal null (SQL NULL is plain null) and objects whose only key
// is this one.
const jsonEscapeKey = "$json"

// exportValue converts a stored value to its JSON-ready export form:
// integers stay int64/uint64, floats float64 (shortest round-trip form),
// decimals become strings at the column's scale, DATE "2006-01-02",
// DATETIME/TIMESTAMP "2006-01-02 15:04:05.999999" in UTC, binary strings
// []byte (base64 in JSON), JSON columns their decoded value.
func exportValue(col *sql.Column, v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	case uint8:
		return uint64(x)
	case uint16:
		return uint64(x)
	case uint32:
		return uint64(x)
	case uint64:
		return x
	case float32:
		return float64(x)
	case float64:
		return x
	case decimal.Decimal:
		return decimalString(col, x)
	case string:
		return x
	case []byte:
		return x
	case time.Time:
		if col != nil && types.IsDateType(col.Type) {
			return x.Format("2006-01-02")
		}
		return x.UTC().Format("2006-01-02 15:04:05.999999")
	case sql.JSONWrapper:
		val, err := x.ToInterface()
		if err != nil {
			return fmt.Sprint(x)
		}
		if m, ok := val.(map[string]any); val == nil || ok && len(m) == 1 && hasKey(m, jsonEscapeKey) {
			return map[string]any{jsonEscapeKey: val}
		}
		return val
	}
	if col != nil {
		if sv, err := col.Type.SQL(sql.NewEmptyContext(), nil, v); err == nil {
			return sv.ToString()
		}
	}
	return fmt.Sprint(v)
}

// PlainValue converts a value from Rows.Values to plain JSON-ready Go:
// integers as int64 or uint64, floats as float64, decimals as strings,
// DATETIME/TIMESTAMP as "2006-01-02 15:04:05.999999" UTC strings, []byte as
// is, JSON documents as their decoded value, NULL as nil.
func PlainValue(v any) any {
	if w, ok := v.(sql.JSONWrapper); ok {
		x, err := w.ToInterface()
		if err == nil {
			return x
		}
	}
	return exportValue(nil, v)
}

func hasKey(m map[string]any, k string) bool { _, ok := m[k]; return ok }

// Export writes the version as JSON in the ExportFormat layout. It is
// lossless: Import of the output gives a version with the same Hash.
func (v *Version) Export(w io.Writer) error {
	doc := exportDoc{Format: ExportFormat, DDL: v.cat.ddl}
	if doc.DDL == nil {
		doc.DDL = []string{}
	}
	for _, t := range sortedTables(v.tables) {
		ts := t.schema
		et := exportTable{Name: ts.name, Rows: [][]json.RawMessage{}}
		if ts.autoCol >= 0 {
			et.AutoIncrement = t.autoInc
		}
		for _, c := range ts.sch.Schema {
			et.Columns = append(et.Columns, c.Name)
		}
		it := t.rows.Ascend()
		for _, r, ok := it.Next(); ok; _, r, ok = it.Next() {
			row := make([]json.RawMessage, len(r))
			for i, val := range r {
				b, err := marshalNoEscape(exportValue(ts.sch.Schema[i], val))
				if err != nil {
					return fmt.Errorf("export %s.%s: %w", ts.name, ts.sch.Schema[i].Name, err)
				}
				row[i] = b
			}
			et.Rows = append(et.Rows, row)
		}
		doc.Tables = append(doc.Tables, et)
	}
	v.files.under("", func(p string, n *fileNode) bool {
		doc.Files = append(doc.Files, toExportFile(p, n))
		return true
	})
	b, err := marshalNoEscape(doc)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Import reads a state written by Export and returns it as a new Version of
// s. Errors are *Error with Kind ErrBadImport for a malformed document, or the
// kinds Load returns for rows that do not fit the schema.
func (s *Store) Import(ctx context.Context, r io.Reader) (*Version, error) {
	var doc exportDoc
	dec := json.NewDecoder(r)
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, &Error{Kind: ErrBadImport, Err: err}
	}
	if doc.Format != ExportFormat {
		return nil, &Error{Kind: ErrBadImport, Err: fmt.Errorf("format %q, want %q", doc.Format, ExportFormat)}
	}
	for i, st := range doc.DDL {
		if !schemaStatement(st) {
			return nil, &Error{Kind: ErrBadImport, Err: fmt.Errorf("ddl[%d] is not a CREATE TABLE, CREATE INDEX or ALTER TABLE statement: %.60q", i, st)}
		}
	}
	ddl := strings.Join(doc.DDL, ";\n")
	data := make([]TableRows, 0, len(doc.Tables))
	probe, err := s.Load(ctx, ddl)
	if err != nil {
		return nil, err
	}
	for _, et := range doc.Tables {
		i, ok := probe.cat.index[strings.ToLower(et.Name)]
		if !ok {
			return nil, &Error{Kind: ErrBadImport, Table: et.Name, Err: fmt.Errorf("table %q is not created by the ddl", et.Name)}
		}
		sch := probe.tables[i].schema.sch.Schema
		tr := TableRows{Table: et.Name, Columns: et.Columns}
		cols := make([]*sql.Column, len(et.Columns))
		for j, name := range et.Columns {
			o := sch.IndexOfColName(name)
			if o < 0 {
				return nil, &Error{Kind: ErrBadImport, Table: et.Name, Column: name, Err: fmt.Errorf("unknown column %q", name)}
			}
			cols[j] = sch[o]
		}
		for ri, raw := range et.Rows {
			if len(raw) != len(cols) {
				return nil, &Error{Kind: ErrBadImport, Table: et.Name, Err: fmt.Errorf("row %d has %d values for %d columns", ri, len(raw), len(cols))}
			}
			row := make([]any, len(raw))
			for j, rv := range raw {
				val, err := importValue(cols[j], rv)
				if err != nil {
					return nil, &Error{Kind: ErrBadImport, Table: et.Name, Column: cols[j].Name, Err: fmt.Errorf("row %d: %w", ri, err)}
				}
				row[j] = val
			}
			tr.Rows = append(tr.Rows, row)
		}
		data = append(data, tr)
	}
	v, err := s.Load(ctx, ddl, data...)
	if err != nil {
		return nil, err
	}
	for _, et := range doc.Tables {
		if et.AutoIncrement == 0 {
			continue
		}
		i := v.cat.index[strings.ToLower(et.Name)]
		if t := v.tables[i]; et.AutoIncrement > t.autoInc {
			c := *t
			c.autoInc = et.AutoIncrement
			v.tables[i] = &c
		}
	}
	return importFiles(v, doc.Files)
}

// importValue decodes one exported value for column col into a Go value that
// the column type converts exactly.
func importValue(col *sql.Column, raw json.RawMessage) (any, error) {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	if types.IsJSON(col.Type) {
		var val any
		if err := json.Unmarshal(raw, &val); err != nil {
			return nil, err
		}
		if m, ok := val.(map[string]any); ok && len(m) == 1 && hasKey(m, jsonEscapeKey) {
			val = m[jsonEscapeKey]
		}
		return types.JSONDocument{Val: val}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var val any
	if err := dec.Decode(&val); err != nil {
		return nil, err
	}
	switch x := val.(type) {
	case json.Number:
		return string(x), nil
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case string:
		if types.IsBinaryType(col.Type) {
			b, err := base64.StdEncoding.DecodeString(x)
			if err != nil {
				return nil, fmt.Errorf("binary column %s: %w", col.Name, err)
			}
			return b, nil
		}
		return x, nil
	}
	return nil, fmt.Errorf("unexpected JSON %s for column %s (%s)", raw, col.Name, col.Type.String())
}

// LoadJSON is Load with the rows read from a JSON object mapping table names
// to arrays of row objects, e.g. {"users": [{"id": 1, "name": "ann"}]}.
// Values follow the rules of TableRows; numbers are read exactly (decimals
// keep every digit); JSON columns take any JSON value.
func (s *Store) LoadJSON(ctx context.Context, ddl string, r io.Reader) (*Version, error) {
	var doc map[string][]map[string]json.RawMessage
	if err := json.NewDecoder(r).Decode(&doc); err != nil {
		return nil, &Error{Kind: ErrBadImport, Err: err}
	}
	probe, err := s.Load(ctx, ddl)
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(doc))
	for n := range doc {
		names = append(names, n)
	}
	slices.Sort(names)
	var data []TableRows
	for _, name := range names {
		i, ok := probe.cat.index[strings.ToLower(name)]
		if !ok {
			return nil, &Error{Kind: ErrNoSuchTable, Table: name, Err: fmt.Errorf("table %q is not in the schema", name)}
		}
		sch := probe.tables[i].schema.sch.Schema
		for ri, obj := range doc[name] {
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			row := make([]any, len(keys))
			for j, k := range keys {
				o := sch.IndexOfColName(k)
				if o < 0 {
					return nil, &Error{Kind: ErrNoSuchColumn, Table: name, Column: k, Err: fmt.Errorf("row %d: table %s has no column %q", ri, name, k)}
				}
				val, err := importValue(sch[o], obj[k])
				if err != nil {
					return nil, &Error{Kind: ErrTypeMismatch, Table: name, Column: k, Err: fmt.Errorf("row %d: %w", ri, err)}
				}
				row[j] = val
			}
			if n := len(data); n > 0 && data[n-1].Table == name && slices.Equal(data[n-1].Columns, keys) {
				data[n-1].Rows = append(data[n-1].Rows, row)
			} else {
				data = append(data, TableRows{Table: name, Columns: keys, Rows: [][]any{row}})
			}
		}
	}
	return s.Load(ctx, ddl, data...)
}

// schemaStatement reports whether st is a statement an export's "ddl" may
// hold: one CREATE TABLE, CREATE [UNIQUE] INDEX or ALTER TABLE (anything
// else, e.g. an INSERT or a SLEEP smuggled into an import, is refused).
func schemaStatement(st string) bool {
	if strings.Contains(st, "/*!") {
		return false
	}
	// Leading comments (schema files start with some) are skipped.
	for {
		st = strings.TrimSpace(st)
		switch {
		case strings.HasPrefix(st, "--"), strings.HasPrefix(st, "#"):
			_, rest, ok := strings.Cut(st, "\n")
			if !ok {
				return false
			}
			st = rest
			continue
		case strings.HasPrefix(st, "/*"):
			_, rest, ok := strings.Cut(st, "*/")
			if !ok {
				return false
			}
			st = rest
			continue
		}
		break
	}
	f := strings.Fields(strings.ToUpper(st))
	if len(f) < 2 || strings.Contains(st, ";") {
		return false
	}
	switch {
	case f[0] == "CREATE" && (f[1] == "TABLE" || f[1] == "INDEX"):
		return true
	case f[0] == "CREATE" && f[1] == "UNIQUE" && len(f) > 2 && f[2] == "INDEX":
		return true
	case f[0] == "ALTER" && f[1] == "TABLE":
		return true
	}
	return false
}
