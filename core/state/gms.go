package state

import (
	"fmt"
	"io"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"

	"github.com/weft-dev/weft/core/state/internal/ptree"
)

// dbName is the one database every workspace presents to SQL.
const dbName = "weft"

// session is a go-mysql-server session bound to one workspace for the
// duration of a statement. Sessions are pooled by the Store, so any session
// may run any workspace's next statement: nothing a statement leaves in its
// session may reach the next one. A workspace's state is its tables, so
// statements that would set session state (SET, SET NAMES, SELECT ... INTO @v,
// USE) are refused, and what MySQL keeps per connection about the previous
// statement (LAST_INSERT_ID(), ROW_COUNT(), FOUND_ROWS()) is kept per
// workspace and swapped in by bind and out by unbind.
type session struct {
	*sql.BaseSession
	ws *Workspace
	sb *Sandbox // the statement's Sandbox, or nil
	// planned is set once the statement's names are resolved: the engine
	// clears the session's warnings right after building the plan and
	// before analyzing it (ClearWarnings). Later table lookups are the
	// engine's own (a DELETE without WHERE looks up every table).
	planned bool
}

// ClearWarnings marks the end of planning (see planned). Should the engine
// stop calling it there, the check in GetTableInsensitive would also refuse
// the analyzer's own lookups (failing closed), and the randomized scope test
// would catch it being called earlier.
func (s *session) ClearWarnings() {
	s.planned = true
	s.BaseSession.ClearWarnings()
}

// queryInfo is the per-connection record of the previous statement.
type queryInfo struct {
	rowCount, foundRows, lastInsertID int64
	lastInsertUUID                    string
}

// bind attaches the session to w for one statement (w.mu held).
func (s *session) bind(w *Workspace) {
	s.ws = w
	s.SetCurrentDatabase(dbName)
	i := w.info
	if i == nil {
		i = &queryInfo{foundRows: 1} // the engine's initial values
	}
	s.SetLastQueryInfoInt(sql.RowCount, i.rowCount)
	s.SetLastQueryInfoInt(sql.FoundRows, i.foundRows)
	s.SetLastQueryInfoInt(sql.LastInsertId, i.lastInsertID)
	s.SetLastQueryInfoString(sql.LastInsertUuid, i.lastInsertUUID)
}

// unbind saves the statement's query info into its workspace and detaches.
func (s *session) unbind() {
	s.ws.info = &queryInfo{
		rowCount:       s.GetLastQueryInfoInt(sql.RowCount),
		foundRows:      s.GetLastQueryInfoInt(sql.FoundRows),
		lastInsertID:   s.GetLastQueryInfoInt(sql.LastInsertId),
		lastInsertUUID: s.GetLastQueryInfoString(sql.LastInsertUuid),
	}
	s.ws = nil
	s.sb = nil
	s.planned = false
	s.ClearWarnings()
}

func errSessionState(what string) error {
	return &Error{Kind: ErrStatementFailed, Err: fmt.Errorf("%s: session state is not supported; a workspace's state is its tables", what)}
}

func (s *session) SetSessionVariable(_ *sql.Context, name string, _ any) error {
	return errSessionState("setting @@" + name)
}

func (s *session) SetUserVariable(_ *sql.Context, name string, _ any, _ sql.Type) error {
	return errSessionState("setting @" + name)
}

func (s *session) UseDatabase(_ *sql.Context, db sql.Database) error {
	return errSessionState("USE " + db.Name())
}

func wsFrom(ctx *sql.Context) *Workspace {
	if s, ok := ctx.Session.(*session); ok {
		return s.ws
	}
	return nil
}

// errNoDatabase answers lookups of any database but weft's. The engine asks
// for "mysql" on every statement and only checks for an error, so it is made
// once: building a go-mysql-server error captures a stack trace.
var errNoDatabase = sql.ErrDatabaseNotFound.New("only the weft database exists")

// provider routes the database name to the workspace bound to the session.
type provider struct{}

var _ sql.DatabaseProvider = provider{}

func (provider) Database(ctx *sql.Context, name string) (sql.Database, error) {
	if !strings.EqualFold(name, dbName) {
		return nil, errNoDatabase
	}
	ws := wsFrom(ctx)
	if ws == nil {
		return nil, errNoDatabase
	}
	return &database{ws: ws}, nil
}

func (provider) HasDatabase(ctx *sql.Context, name string) bool {
	return strings.EqualFold(name, dbName) && wsFrom(ctx) != nil
}

func (p provider) AllDatabases(ctx *sql.Context) []sql.Database {
	if ws := wsFrom(ctx); ws != nil {
		return []sql.Database{&database{ws: ws}}
	}
	return nil
}

// database exposes a workspace's tables.
type database struct{ ws *Workspace }

var (
	_ sql.Database     = (*database)(nil)
	_ sql.TableCreator = (*database)(nil)
)

func (d *database) Name() string { return dbName }

// GetTableInsensitive resolves a table name. While the statement is being
// planned, the engine asks here only for the names that no CTE or derived
// table in scope defines (it resolves names by scope first), so this is
// where a Sandbox's table policy refuses a statement that names an
// undeclared table, before anything runs. After planning (session.planned)
// the engine looks tables up for its own purposes (a DELETE without WHERE
// asks for every table, for triggers and foreign keys) and nothing is
// refused here; the policy is checked again wherever a statement touches a
// table's contents: its rows (PartitionRows), its statistics (RowCount,
// DataLength: COUNT(*) may be answered from them), its AUTO_INCREMENT
// counter and its edits.
func (d *database) GetTableInsensitive(ctx *sql.Context, name string) (sql.Table, bool, error) {
	stored := name
	if s, ok := ctx.Session.(*session); ok && s.sb != nil {
		if !s.planned && !s.sb.Tables.CanRead(name) {
			return nil, false, s.sb.Tables.readErr(name)
		}
		stored = s.sb.resolve(name)
	}
	i, ok := d.ws.cat.index[strings.ToLower(stored)]
	if !ok {
		return nil, false, nil
	}
	t := &table{ws: d.ws, slot: i, schema: d.ws.tables[i].schema}
	if stored != name {
		// A namespaced table answers to the name the statement wrote, so
		// its qualifiers (users.name) and the policy see that name.
		t.alias = strings.ToLower(name)
	}
	return t, true, nil
}

func (d *database) GetTableNames(ctx *sql.Context) ([]string, error) {
	names := make([]string, len(d.ws.tables))
	for i, t := range d.ws.tables {
		names[i] = t.schema.name
	}
	return names, nil
}

func (d *database) CreateTable(ctx *sql.Context, name string, sch sql.PrimaryKeySchema, collation sql.CollationID, comment string) error {
	if !d.ws.ddl {
		return &Error{Kind: ErrReadOnlySchema, Table: name, Err: fmt.Errorf("CREATE TABLE %s: the schema is fixed when the state is loaded", name)}
	}
	if _, ok := d.ws.cat.index[strings.ToLower(name)]; ok {
		return sql.ErrTableAlreadyExists.New(name)
	}
	ts, err := newTableSchema(name, sch, collation, comment)
	if err != nil {
		return err
	}
	d.ws.addTable(newTableData(ts))
	return nil
}

// table is the engine's handle on one table of a workspace. It reads the
// workspace's current tableData at the time of each call, so edits made
// earlier in the same statement or unit are visible.
type table struct {
	ws     *Workspace
	slot   int
	schema *tableSchema
	lookup *sql.IndexLookup // set on indexed access
	// alias is the name a namespaced table was resolved by (Sandbox.Names),
	// "" when it was named by its stored name.
	alias string
}

var (
	_ sql.Table                 = (*table)(nil)
	_ sql.IndexAddressableTable = (*table)(nil)
	_ sql.IndexedTable          = (*table)(nil)
	_ sql.InsertableTable       = (*table)(nil)
	_ sql.UpdatableTable        = (*table)(nil)
	_ sql.DeletableTable        = (*table)(nil)
	_ sql.ReplaceableTable      = (*table)(nil)
	_ sql.TruncateableTable     = (*table)(nil)
	_ sql.AutoIncrementTable    = (*table)(nil)
	_ sql.IndexAlterableTable   = (*table)(nil)
	_ sql.PrimaryKeyTable       = (*table)(nil)
	_ sql.StatisticsTable       = (*table)(nil)
	_ sql.CommentedTable        = (*table)(nil)
)

func (t *table) data() *tableData { return t.ws.tables[t.slot] }

func (t *table) Name() string {
	if t.alias != "" {
		return t.alias
	}
	return t.schema.name
}
func (t *table) String() string                         { return t.Name() }
func (t *table) Schema() sql.Schema                     { return t.schema.sch.Schema }
func (t *table) PrimaryKeySchema() sql.PrimaryKeySchema { return t.schema.sch }
func (t *table) Collation() sql.CollationID             { return t.schema.collation }
func (t *table) Comment() string                        { return t.schema.comment }

// readable checks the Sandbox's table policy for a read of the table.
func (t *table) readable(ctx *sql.Context) error {
	if sb := sandboxOf(ctx); sb != nil && !sb.Tables.CanRead(t.Name()) {
		return sb.Tables.readErr(t.Name())
	}
	return nil
}

func (t *table) DataLength(ctx *sql.Context) (uint64, error) {
	if err := t.readable(ctx); err != nil {
		return 0, err
	}
	return uint64(t.data().rows.Len()) * uint64(8*len(t.schema.sch.Schema)), nil
}

func (t *table) RowCount(ctx *sql.Context) (uint64, bool, error) {
	if err := t.readable(ctx); err != nil {
		return 0, false, err
	}
	return uint64(t.data().rows.Len()), true, nil
}

type partition struct{ lookup *sql.IndexLookup }

func (p partition) Key() []byte { return []byte("all") }

type partIter struct {
	parts []sql.Partition
}

func (p *partIter) Next(*sql.Context) (sql.Partition, error) {
	if len(p.parts) == 0 {
		return nil, io.EOF
	}
	x := p.parts[0]
	p.parts = p.parts[1:]
	return x, nil
}
func (p *partIter) Close(*sql.Context) error { return nil }

func (t *table) Partitions(*sql.Context) (sql.PartitionIter, error) {
	return &partIter{parts: []sql.Partition{partition{lookup: t.lookup}}}, nil
}

func (t *table) LookupPartitions(ctx *sql.Context, l sql.IndexLookup) (sql.PartitionIter, error) {
	return &partIter{parts: []sql.Partition{partition{lookup: &l}}}, nil
}

func (t *table) PartitionRows(ctx *sql.Context, p sql.Partition) (sql.RowIter, error) {
	td := t.data()
	var l *sql.IndexLookup
	if pp, ok := p.(partition); ok {
		l = pp.lookup
	}
	if err := t.readable(ctx); err != nil {
		return nil, err
	}
	if l == nil || l.Index == nil {
		return &scanIter{it: td.rows.Ascend(), sb: sandboxOf(ctx)}, nil
	}
	it, err := newLookupIter(ctx, td, l)
	if err != nil {
		return nil, err
	}
	if sb := sandboxOf(ctx); sb != nil {
		return &countingIter{RowIter: it, sb: sb}, nil
	}
	return it, nil
}

// countingIter charges every row it passes to the statement's Sandbox.
type countingIter struct {
	sql.RowIter
	sb *Sandbox
}

func (c *countingIter) Next(ctx *sql.Context) (sql.Row, error) {
	r, err := c.RowIter.Next(ctx)
	if err == nil {
		if err = c.sb.chargeRow(ctx); err != nil {
			return nil, err
		}
	}
	return r, err
}

// scanIter streams rows of one snapshot of a table in primary-key order.
type scanIter struct {
	it *ptree.Iter[[]any, sql.Row]
	sb *Sandbox // charged per row; nil: unbounded
}

func (s *scanIter) Next(ctx *sql.Context) (sql.Row, error) {
	_, r, ok := s.it.Next()
	if !ok {
		return nil, io.EOF
	}
	if s.sb != nil {
		if err := s.sb.chargeRow(ctx); err != nil {
			return nil, err
		}
	}
	return r.Copy(), nil
}
func (s *scanIter) Close(*sql.Context) error { return nil }

func (t *table) IndexedAccess(ctx *sql.Context, l sql.IndexLookup) sql.IndexedTable {
	c := *t
	c.lookup = &l
	return &c
}

// PreciseMatch is false: the engine keeps its filters above our lookups, so a
// range we scan too wide can never change a result.
func (t *table) PreciseMatch() bool { return false }

func (t *table) GetIndexes(ctx *sql.Context) ([]sql.Index, error) {
	ts := t.schema
	out := []sql.Index{&index{t: ts, table: t.Name(), name: "PRIMARY", cols: ts.pk, unique: true, primary: true}}
	for i, d := range ts.indexes {
		out = append(out, &index{t: ts, table: t.Name(), name: d.name, cols: d.cols, unique: d.unique, pos: i})
	}
	return out, nil
}

func (t *table) CreateIndex(ctx *sql.Context, def sql.IndexDef) error {
	if !t.ws.ddl {
		return &Error{Kind: ErrReadOnlySchema, Table: t.schema.name, Err: fmt.Errorf("CREATE INDEX on %s: the schema is fixed when the state is loaded", t.schema.name)}
	}
	if def.Constraint != sql.IndexConstraint_None && def.Constraint != sql.IndexConstraint_Unique {
		return sql.ErrUnsupportedFeature.New("only BTREE and UNIQUE indexes are supported")
	}
	if def.Constraint == sql.IndexConstraint_Unique && def.Name == "" {
		def.Name = def.Columns[0].Name
	}
	name := def.Name
	if name == "" {
		name = def.Columns[0].Name
	}
	for _, d := range t.schema.indexes {
		if strings.EqualFold(d.name, name) {
			return sql.ErrDuplicateKey.New(name)
		}
	}
	cols := make([]int, len(def.Columns))
	for i, c := range def.Columns {
		o := t.schema.sch.Schema.IndexOfColName(c.Name)
		if o < 0 {
			return sql.ErrKeyColumnDoesNotExist.New(c.Name)
		}
		cols[i] = o
	}
	td := t.data()
	ts := t.schema.withIndex(name, cols, def.Constraint == sql.IndexConstraint_Unique)
	nt := newTableData(ts)
	nt.autoInc = td.autoInc
	it := td.rows.Ascend()
	for _, r, ok := it.Next(); ok; _, r, ok = it.Next() {
		var err error
		if nt, err = nt.insert(r); err != nil {
			return err
		}
	}
	t.ws.tables[t.slot] = nt
	t.schema = ts
	return nil
}

func (t *table) DropIndex(ctx *sql.Context, name string) error {
	return sql.ErrUnsupportedFeature.New("DROP INDEX")
}

func (t *table) RenameIndex(ctx *sql.Context, from, to string) error {
	return sql.ErrUnsupportedFeature.New("RENAME INDEX")
}

func (t *table) Truncate(ctx *sql.Context) (int, error) {
	if err := (&editor{t: t}).writable(ctx); err != nil {
		return 0, err
	}
	td := t.data()
	n := td.rows.Len()
	nt := newTableData(td.schema)
	nt.autoInc = td.autoInc
	t.ws.tables[t.slot] = nt
	return n, nil
}

func (t *table) PeekNextAutoIncrementValue(ctx *sql.Context) (uint64, error) {
	if err := t.readable(ctx); err != nil {
		return 0, err
	}
	return t.data().autoInc, nil
}

func (t *table) GetNextAutoIncrementValue(ctx *sql.Context, insertVal interface{}) (uint64, error) {
	if err := (&editor{t: t}).writable(ctx); err != nil {
		return 0, err
	}
	td := t.data()
	if insertVal != nil {
		if u, ok := toUint(insertVal); ok && u > 0 {
			return u, nil
		}
	}
	return td.autoInc, nil
}

func toUint(v any) (uint64, bool) {
	switch x := v.(type) {
	case int8:
		return uint64(x), x >= 0
	case int16:
		return uint64(x), x >= 0
	case int32:
		return uint64(x), x >= 0
	case int64:
		return uint64(x), x >= 0
	case int:
		return uint64(x), x >= 0
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	}
	return 0, false
}

func (t *table) AutoIncrementSetter(*sql.Context) sql.AutoIncrementSetter { return &editor{t: t} }
func (t *table) Inserter(*sql.Context) sql.RowInserter                    { return &editor{t: t} }
func (t *table) Updater(*sql.Context) sql.RowUpdater                      { return &editor{t: t} }
func (t *table) Deleter(*sql.Context) sql.RowDeleter                      { return &editor{t: t} }
func (t *table) Replacer(*sql.Context) sql.RowReplacer                    { return &editor{t: t} }

// editor applies row edits straight to the workspace's table slot. Statement
// atomicity comes from the workspace, which restores every table pointer when
// a statement fails, so StatementBegin saves the slot only for the engine's
// own DiscardChanges protocol.
type editor struct {
	t     *table
	saved *tableData
}

func (e *editor) StatementBegin(*sql.Context) { e.saved = e.t.data() }

// writable checks the Sandbox's table policy for a write of the table.
func (e *editor) writable(ctx *sql.Context) error {
	if sb := sandboxOf(ctx); sb != nil && !sb.Tables.CanWrite(e.t.Name()) {
		return sb.Tables.writeErr(e.t.Name())
	}
	return nil
}

func (e *editor) DiscardChanges(ctx *sql.Context, _ error) error {
	if e.saved != nil {
		e.t.ws.tables[e.t.slot] = e.saved
	}
	return nil
}

func (e *editor) StatementComplete(*sql.Context) error { e.saved = nil; return nil }
func (e *editor) Close(*sql.Context) error             { return nil }

func (e *editor) prepare(ctx *sql.Context, row sql.Row) (sql.Row, error) {
	sch := e.t.schema.sch.Schema
	if len(row) != len(sch) {
		return nil, fmt.Errorf("row has %d values, table %s has %d columns", len(row), e.t.schema.name, len(sch))
	}
	out := make(sql.Row, len(row))
	for i, v := range row {
		v, err := normalize(ctx, v)
		if err != nil {
			return nil, err
		}
		if v == nil && !sch[i].Nullable {
			return nil, sql.ErrInsertIntoNonNullableProvidedNull.New(sch[i].Name)
		}
		out[i] = v
	}
	return out, nil
}

func (e *editor) Insert(ctx *sql.Context, row sql.Row) error {
	if err := e.writable(ctx); err != nil {
		return err
	}
	r, err := e.prepare(ctx, row)
	if err != nil {
		return err
	}
	nt, err := e.t.data().insert(r)
	if err != nil {
		return err
	}
	e.t.ws.tables[e.t.slot] = nt
	return nil
}

func (e *editor) Delete(ctx *sql.Context, row sql.Row) error {
	if err := e.writable(ctx); err != nil {
		return err
	}
	nt, err := e.t.data().delete(row)
	if err != nil {
		return err
	}
	e.t.ws.tables[e.t.slot] = nt
	return nil
}

func (e *editor) Update(ctx *sql.Context, old, nw sql.Row) error {
	if err := e.writable(ctx); err != nil {
		return err
	}
	r, err := e.prepare(ctx, nw)
	if err != nil {
		return err
	}
	nt, err := e.t.data().update(old, r)
	if err != nil {
		return err
	}
	e.t.ws.tables[e.t.slot] = nt
	return nil
}

func (e *editor) SetAutoIncrementValue(ctx *sql.Context, v uint64) error {
	if err := e.writable(ctx); err != nil {
		return err
	}
	td := *e.t.data()
	td.autoInc = v
	e.t.ws.tables[e.t.slot] = &td
	return nil
}

func (e *editor) AcquireAutoIncrementLock(*sql.Context) (func(), error) { return func() {}, nil }

// index describes the primary key or a secondary index to the planner.
type index struct {
	t       *tableSchema
	table   string // the table's name as the statement resolved it (table.Name)
	name    string
	cols    []int
	unique  bool
	primary bool
	pos     int // position in tableSchema.indexes for secondary indexes
}

var _ sql.Index = (*index)(nil)

func (ix *index) ID() string       { return ix.name }
func (ix *index) Database() string { return dbName }
func (ix *index) Table() string    { return ix.table }
func (ix *index) Expressions() []string {
	out := make([]string, len(ix.cols))
	for i, o := range ix.cols {
		c := ix.t.sch.Schema[o]
		out[i] = expression.NewGetFieldWithTable(o, 0, c.Type, dbName, ix.table, c.Name, c.Nullable).String()
	}
	return out
}
func (ix *index) IsUnique() bool                             { return ix.unique }
func (ix *index) IsSpatial() bool                            { return false }
func (ix *index) IsFullText() bool                           { return false }
func (ix *index) IsVector() bool                             { return false }
func (ix *index) Comment() string                            { return "" }
func (ix *index) IndexType() string                          { return "BTREE" }
func (ix *index) IsGenerated() bool                          { return false }
func (ix *index) CanSupport(*sql.Context, ...sql.Range) bool { return true }
func (ix *index) CanSupportOrderBy(sql.Expression) bool      { return false }
func (ix *index) PrefixLengths() []uint16                    { return nil }
func (ix *index) ColumnExpressionTypes() []sql.ColumnExpressionType {
	out := make([]sql.ColumnExpressionType, len(ix.cols))
	exprs := ix.Expressions()
	for i, o := range ix.cols {
		out[i] = sql.ColumnExpressionType{Expression: exprs[i], Type: ix.t.sch.Schema[o].Type}
	}
	return out
}
