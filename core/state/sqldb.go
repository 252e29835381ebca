package state

import (
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/memo"
)

// What other packages' go-mysql-server engines need of a Store (the
// read-only MySQL inspection server of megamcp/inspect builds its own engine
// over forks of session versions).

// ReadOnlyDatabase returns ws's tables as a go-mysql-server database named
// name. It offers reading only: it implements sql.Database and no write
// interface (no sql.TableCreator), so DDL through it fails; run the engine
// with IsReadOnly as well, since the tables it hands out are ws's own. The
// tables read ws's current state at each call. Give each reader a private
// fork (Store.Fork) so nothing it does reaches a live workspace.
func (ws *Workspace) ReadOnlyDatabase(name string) sql.Database {
	return &readOnlyDatabase{name: name, db: &database{ws: ws}}
}

type readOnlyDatabase struct {
	name string
	db   *database
}

var _ sql.Database = (*readOnlyDatabase)(nil)

func (d *readOnlyDatabase) Name() string { return d.name }

func (d *readOnlyDatabase) GetTableInsensitive(ctx *sql.Context, name string) (sql.Table, bool, error) {
	return d.db.GetTableInsensitive(ctx, name)
}

func (d *readOnlyDatabase) GetTableNames(ctx *sql.Context) ([]string, error) {
	return d.db.GetTableNames(ctx)
}

// NewCoster returns the plan coster the Store's own engine uses: lookup
// joins priced as tree seeks over weft's exact row counts (see
// lookupCoster), everything else as go-mysql-server's default. Set it as
// analyzer.Coster of an engine over ReadOnlyDatabase tables.
func NewCoster() memo.Coster { return lookupCoster{Coster: memo.NewDefaultCoster()} }

// HostFileAccess reports statements that would read or write files of the
// host (LOAD_FILE(), SELECT ... INTO OUTFILE / DUMPFILE, LOAD DATA INFILE),
// by scanning tokens: the check Workspace.Exec applies before the engine.
func HostFileAccess(query string) bool { return hostFileAccess(query) }

// FirstKeyword returns the first keyword of a statement, skipping
// whitespace, '(' and SQL comments ("" if there is none).
func FirstKeyword(query string) string { return firstWord(query) }
