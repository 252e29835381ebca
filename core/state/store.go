package state

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"crypto/sha256"
	"encoding/binary"
	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/memo"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// Store holds the SQL engine shared by all versions and workspaces made from
// it. It is safe for concurrent use; create one per process (or per test).
type Store struct {
	engine *sqle.Engine
	fast   fastCache // analyzed statement texts of the fast path (fast.go)
	// idle holds go-mysql-server sessions between statements (creating one
	// costs ~150 us). The set is bounded and never dropped by the garbage
	// collector: the engine caches prepared statements per session id, so a
	// session that goes away must be closed explicitly (see putSession).
	mu     sync.Mutex
	idle   []*session
	nextID atomic.Uint64
	sessID atomic.Uint32

	fileLimits FileLimits // SetFileLimits; zero fields are defaults
}

// NewStore returns a Store with its own go-mysql-server engine over weft's
// copy-on-write storage backend.
func NewStore() *Store {
	a := analyzer.NewDefault(provider{})
	a.Coster = lookupCoster{Coster: memo.NewDefaultCoster()}
	// go-mysql-server's New (re)initializes process-wide status variables
	// without a lock; stores made concurrently (workers building their
	// experiments at once) raced there under -race.
	newEngineMu.Lock()
	e := sqle.New(a, nil)
	newEngineMu.Unlock()
	return &Store{engine: e}
}

// newEngineMu serializes sqle.New (see NewStore).
var newEngineMu sync.Mutex

// maxIdleSessions bounds the idle session pool; beyond it sessions are
// closed, which frees the engine's per-session caches.
const maxIdleSessions = 64

func (s *Store) getSession() *session {
	s.mu.Lock()
	if n := len(s.idle); n > 0 {
		sess := s.idle[n-1]
		s.idle = s.idle[:n-1]
		s.mu.Unlock()
		return sess
	}
	s.mu.Unlock()
	bs := sql.NewBaseSessionWithClientServer("weft", sql.Client{User: "root", Address: "localhost"}, s.sessID.Add(1))
	bs.SetCurrentDatabase(dbName)
	return &session{BaseSession: bs}
}

func (s *Store) putSession(sess *session) {
	s.mu.Lock()
	if len(s.idle) < maxIdleSessions {
		s.idle = append(s.idle, sess)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	s.engine.CloseSession(sess.ID())
}

// Close releases the engine's background resources.
func (s *Store) Close() error { return s.engine.Close() }

// catalog maps table names to slots; immutable, shared by versions with the
// same schema. ddl holds the statements that created the schema, in order.
type catalog struct {
	index map[string]int // lower-case name -> slot
	ddl   []string
}

var emptyCatalog = &catalog{index: map[string]int{}}

// Version is an immutable state: a schema and the rows of every table. Any
// number of workspaces may be forked from one Version concurrently; nothing
// done to them changes it. Versions are cheap (one pointer per table) and are
// garbage collected when unreferenced.
type Version struct {
	id     uint64
	store  *Store
	cat    *catalog
	tables []*tableData
	files  *fileTree // nil: no files

	hashOnce sync.Once
	hash     Hash
}

// ID returns the version's number, unique within its Store and increasing in
// creation order.
func (v *Version) ID() uint64 { return v.id }

// Store returns the store the version belongs to.
func (v *Version) Store() *Store { return v.store }

// Tables returns the table names in lexical order of their lower-case names.
func (v *Version) Tables() []string { return tableNames(v.tables) }

func tableNames(tables []*tableData) []string {
	out := make([]string, len(tables))
	for i, t := range sortedTables(tables) {
		out[i] = t.schema.name
	}
	return out
}

func sortedTables(tables []*tableData) []*tableData {
	s := slices.Clone(tables)
	slices.SortFunc(s, func(a, b *tableData) int { return strings.Compare(a.schema.lname, b.schema.lname) })
	return s
}

// Schema returns the canonical description of every table's columns,
// primary key and indexes, in table-name order: equal for two versions
// exactly when their schemas are equal, whatever DDL text created them.
func (v *Version) Schema() string {
	var b strings.Builder
	for _, t := range sortedTables(v.tables) {
		b.WriteString(t.schema.canonical())
	}
	return b.String()
}

// RowCount returns the number of rows of a table, or ErrNoSuchTable.
func (v *Version) RowCount(table string) (int, error) {
	i, ok := v.cat.index[strings.ToLower(table)]
	if !ok {
		return 0, &Error{Kind: ErrNoSuchTable, Table: table}
	}
	return v.tables[i].rows.Len(), nil
}

// Hash is a content hash of a state: SHA-256 over the canonical schema of
// every table and its order-independent row-multiset hash (see lanes). Equal
// schemas and rows give equal hashes regardless of insertion order, of which
// fork produced the state, and of the process.
type Hash [32]byte

// String returns the hash in lower-case hex.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// MarshalText encodes the hash as hex.
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// Hash returns the version's content hash. It costs O(number of tables): row
// hashes are maintained incrementally as rows change.
func (v *Version) Hash() Hash {
	v.hashOnce.Do(func() { v.hash = hashState(v.tables, v.files) })
	return v.hash
}

// hashState hashes the tables and, when there are any, the files: a state
// without files hashes as it did before workspace files existed (decision
// 025), so existing version ids and data directories stay valid. The files
// part is "files\n", the entry count, the byte total and the entries'
// additive multiset hash (fileDigest), all maintained incrementally.
func hashState(tables []*tableData, files *fileTree) Hash {
	if files.len() == 0 {
		return hashWith(tables, nil)
	}
	return hashWith(tables, func(h io.Writer) {
		var buf [8]byte
		h.Write([]byte("files\n"))
		binary.BigEndian.PutUint64(buf[:], uint64(files.len()))
		h.Write(buf[:])
		binary.BigEndian.PutUint64(buf[:], uint64(files.bytes))
		h.Write(buf[:])
		for _, l := range files.sum {
			binary.BigEndian.PutUint64(buf[:], l)
			h.Write(buf[:])
		}
	})
}

// hashTables is the hash of a state of these tables and no files.
func hashTables(tables []*tableData) Hash { return hashWith(tables, nil) }

func hashWith(tables []*tableData, extra func(io.Writer)) Hash {
	h := sha256.New()
	h.Write([]byte("weft.state/v1\n"))
	var buf [8]byte
	for _, t := range sortedTables(tables) {
		h.Write([]byte(t.schema.canonical()))
		binary.BigEndian.PutUint64(buf[:], uint64(t.rows.Len()))
		h.Write(buf[:])
		for _, l := range t.sum {
			binary.BigEndian.PutUint64(buf[:], l)
			h.Write(buf[:])
		}
	}
	if extra != nil {
		extra(h)
	}
	var out Hash
	h.Sum(out[:0])
	return out
}

func (s *Store) newVersion(cat *catalog, tables []*tableData) *Version {
	return &Version{id: s.nextID.Add(1), store: s, cat: cat, tables: slices.Clone(tables)}
}

func (s *Store) newVersionFiles(cat *catalog, tables []*tableData, files *fileTree) *Version {
	v := s.newVersion(cat, tables)
	v.files = files
	return v
}

// Fork returns a new private, mutable workspace whose state is v. O(number of
// tables): rows, indexes and the file tree are shared with v until written.
func (s *Store) Fork(v *Version) *Workspace {
	return &Workspace{store: s, cat: v.cat, tables: slices.Clone(v.tables), files: v.files, base: v}
}

// TableRows is bulk data for one table: Rows[i][j] is the value of
// Columns[j] in row i, as a Go value the column type converts from (integers,
// floats, strings, decimal strings, time.Time, []byte, JSON-compatible maps and
// slices for JSON columns, nil for NULL). Columns not listed take their
// default (AUTO_INCREMENT columns are numbered).
type TableRows struct {
	Table   string
	Columns []string
	Rows    [][]any
}

// Load creates a state from DDL (MySQL dialect CREATE TABLE / CREATE INDEX
// statements separated by semicolons; every table needs a primary key) and
// bulk rows, and returns it as the store's first Version of that schema.
// Errors are *Error: ErrSyntax, ErrNoPrimaryKey, ErrNoSuchTable,
// ErrNoSuchColumn, ErrTypeMismatch, ErrNotNull or ErrDuplicateKey, naming the
// table, column and row involved.
func (s *Store) Load(ctx context.Context, ddl string, data ...TableRows) (*Version, error) {
	ws := &Workspace{store: s, cat: emptyCatalog, ddl: true}
	stmts, err := sqlparser.SplitStatementToPieces(ddl)
	if err != nil {
		return nil, &Error{Kind: ErrSyntax, Err: err}
	}
	var done []string
	for _, st := range stmts {
		st = strings.TrimSpace(st)
		if st == "" {
			continue
		}
		if _, _, err := ws.run(ctx, st, nil); err != nil {
			return nil, err
		}
		done = append(done, st)
	}
	c := *ws.cat
	c.ddl = done
	ws.cat = &c
	for _, d := range data {
		if err := ws.bulkLoad(ctx, d); err != nil {
			return nil, err
		}
	}
	ws.ddl = false
	return s.newVersion(ws.cat, ws.tables), nil
}

func (w *Workspace) addTable(td *tableData) {
	c := &catalog{index: make(map[string]int, len(w.cat.index)+1), ddl: w.cat.ddl}
	for k, v := range w.cat.index {
		c.index[k] = v
	}
	c.index[td.schema.lname] = len(w.tables)
	w.cat = c
	w.tables = append(w.tables, td)
}

func (w *Workspace) bulkLoad(ctx context.Context, d TableRows) error {
	slot, ok := w.cat.index[strings.ToLower(d.Table)]
	if !ok {
		return &Error{Kind: ErrNoSuchTable, Table: d.Table, Err: fmt.Errorf("table %q is not in the schema", d.Table)}
	}
	tdc := *w.tables[slot]
	td := &tdc
	ts := td.schema
	sch := ts.sch.Schema
	colIdx := make([]int, len(d.Columns))
	given := make([]bool, len(sch))
	for j, name := range d.Columns {
		o := sch.IndexOfColName(name)
		if o < 0 {
			return &Error{Kind: ErrNoSuchColumn, Table: ts.name, Column: name, Err: fmt.Errorf("table %s has no column %q", ts.name, name)}
		}
		colIdx[j] = o
		given[o] = true
	}
	sctx := sql.NewContext(ctx)
	rows := make([]sql.Row, 0, len(d.Rows))
	for ri, in := range d.Rows {
		if len(in) != len(d.Columns) {
			return &Error{Kind: ErrBadArgument, Table: ts.name, Err: fmt.Errorf("row %d has %d values for %d columns", ri, len(in), len(d.Columns))}
		}
		row := make(sql.Row, len(sch))
		for o, c := range sch {
			if given[o] {
				continue
			}
			switch {
			case c.AutoIncrement:
				row[o] = nil // numbered below
			case c.Default != nil:
				v, err := c.Default.Eval(sctx, nil)
				if err != nil {
					return &Error{Kind: ErrTypeMismatch, Table: ts.name, Column: c.Name, Err: err}
				}
				if v, _, err = c.Type.Convert(sctx, v); err != nil {
					return &Error{Kind: ErrTypeMismatch, Table: ts.name, Column: c.Name, Err: err}
				}
				row[o] = v
			}
		}
		for j, v := range in {
			o := colIdx[j]
			cv, err := convertValue(sctx, sch[o], v)
			if err != nil {
				return &Error{Kind: ErrTypeMismatch, Table: ts.name, Column: sch[o].Name, Err: fmt.Errorf("row %d: %w", ri, err)}
			}
			row[o] = cv
		}
		if ts.autoCol >= 0 && row[ts.autoCol] == nil {
			v, _, err := sch[ts.autoCol].Type.Convert(sctx, td.autoInc)
			if err != nil {
				return &Error{Kind: ErrTypeMismatch, Table: ts.name, Column: sch[ts.autoCol].Name, Err: err}
			}
			row[ts.autoCol] = v
			td.bumpAutoIncPtr(v)
		}
		for o, c := range sch {
			if row[o] == nil && !c.Nullable {
				return &Error{Kind: ErrNotNull, Table: ts.name, Column: c.Name, Err: fmt.Errorf("row %d: column %s is NOT NULL", ri, c.Name)}
			}
		}
		rows = append(rows, row)
	}
	nt, err := td.bulkInsert(rows)
	if err != nil {
		return err
	}
	w.tables[slot] = nt
	return nil
}

// convertValue converts one Go value to the stored representation of col.
func convertValue(ctx *sql.Context, col *sql.Column, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	cv, inRange, err := col.Type.Convert(ctx, v)
	if err != nil {
		return nil, err
	}
	if inRange != sql.InRange {
		return nil, fmt.Errorf("value %v is out of range for %s", v, col.Type.String())
	}
	if types.IsInteger(col.Type) {
		if err := checkExactInteger(v, cv, col.Type); err != nil {
			return nil, err
		}
	}
	return normalize(ctx, cv)
}

func (td *tableData) bumpAutoIncPtr(v any) {
	if u, ok := toUint(v); ok && u >= td.autoInc {
		td.autoInc = u + 1
	}
}

// bulkInsert adds many rows at once: into an empty table it sorts and builds
// balanced trees in O(n log n); otherwise it inserts row by row.
func (td *tableData) bulkInsert(rows []sql.Row) (*tableData, error) {
	ts := td.schema
	if td.rows.Len() > 0 {
		cur := td
		for _, r := range rows {
			n, err := cur.insert(r)
			if err != nil {
				return nil, &Error{Kind: ErrDuplicateKey, Table: ts.name, Err: err}
			}
			cur = n
		}
		return cur, nil
	}
	n := newTableData(ts)
	n.autoInc = td.autoInc
	keys := make([][]any, len(rows))
	for i, r := range rows {
		keys[i] = ts.pkOf(r)
		n.bumpAutoInc(r)
		n.sum = n.sum.add(rowDigest(ts.sch.Schema, r))
	}
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return ts.pkCmp(keys[a], keys[b]) })
	sk := make([][]any, len(rows))
	sv := make([]sql.Row, len(rows))
	for i, o := range order {
		sk[i], sv[i] = keys[o], rows[o]
		if i > 0 && ts.pkCmp(sk[i-1], sk[i]) == 0 {
			return nil, &Error{Kind: ErrDuplicateKey, Table: ts.name, Err: fmt.Errorf("duplicate primary key %s", formatKey(sk[i]))}
		}
	}
	n.rows = ptreeFromSorted(ts.pkCmp, sk, sv)
	for xi, d := range ts.indexes {
		ik := make([][]any, len(rows))
		for i, r := range rows {
			ik[i] = ts.idxKey(d, r)
		}
		slices.SortFunc(ik, d.cmp)
		if d.unique {
			for i := 1; i < len(ik); i++ {
				if sameIndexValue(ts, d, ik[i-1], ik[i]) {
					return nil, &Error{Kind: ErrDuplicateKey, Table: ts.name, Err: fmt.Errorf("duplicate value %s for unique index %s", formatKey(ik[i][:len(d.cols)]), d.name)}
				}
			}
		}
		n.idx[xi] = ptreeFromSortedSet(d.cmp, ik)
	}
	return n, nil
}

func sameIndexValue(ts *tableSchema, d *indexDef, a, b []any) bool {
	for j, o := range d.cols {
		if a[j] == nil || b[j] == nil || ts.colCmps[o](a[j], b[j]) != 0 {
			return false
		}
	}
	return true
}

// checkExactInteger refuses bulk values that an integer column would store as
// a different number: fractions (1.5 would become 2) and values beyond the
// type's range that the engine's conversion wraps (2^63 into BIGINT).
func checkExactInteger(in, stored any, typ sql.Type) error {
	var want *big.Rat
	switch x := in.(type) {
	case string:
		r, ok := new(big.Rat).SetString(strings.TrimSpace(x))
		if !ok {
			return nil // not a number: the conversion's own error applies
		}
		want = r
	case float64:
		want = new(big.Rat)
		if want.SetFloat64(x) == nil {
			return fmt.Errorf("value %v is not a number for %s", x, typ.String())
		}
	case float32:
		want = new(big.Rat)
		if want.SetFloat64(float64(x)) == nil {
			return fmt.Errorf("value %v is not a number for %s", x, typ.String())
		}
	default:
		return nil
	}
	if !want.IsInt() {
		return fmt.Errorf("value %v is not an integer, as %s needs", in, typ.String())
	}
	got, ok := new(big.Rat).SetString(fmt.Sprint(stored))
	if !ok || got.Cmp(want) != 0 {
		return fmt.Errorf("value %v is out of range for %s", in, typ.String())
	}
	return nil
}
