package inspect

import (
	"slices"
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/weft-dev/weft/core/state"
)

// inspectSession is the go-mysql-server session of one inspection
// connection. Between beginStatement and endStatement it pins the fork each
// database name resolved to, so that a statement sees one version of each
// database however often the engine looks it up; the next statement resolves
// afresh.
type inspectSession struct {
	*sql.BaseSession
	mu   sync.Mutex
	pins map[string]sql.Database // lower-case name -> fork, for the running statement
}

func (s *inspectSession) beginStatement() {
	s.mu.Lock()
	s.pins = map[string]sql.Database{}
	s.mu.Unlock()
}

func (s *inspectSession) endStatement() {
	s.mu.Lock()
	s.pins = nil
	s.mu.Unlock()
}

// inspectProvider resolves database names through MySQLConfig.Resolve to a
// fork of the version it returns (core/state's workspace provider is not
// involved: this engine is the inspection server's own).
type inspectProvider struct{ m *MySQLServer }

var _ sql.DatabaseProvider = inspectProvider{}

// reservedDatabase reports names that are never resolved: MySQL's system
// schemas (information_schema is served by the engine itself).
func reservedDatabase(name string) bool {
	switch strings.ToLower(name) {
	case "mysql", "sys", "performance_schema", "information_schema":
		return true
	}
	return false
}

func (p inspectProvider) Database(ctx *sql.Context, name string) (sql.Database, error) {
	db, err := p.m.database(ctx, name)
	if err != nil {
		return nil, err
	}
	return db, nil
}

func (p inspectProvider) HasDatabase(ctx *sql.Context, name string) bool {
	_, err := p.m.database(ctx, name)
	return err == nil
}

// AllDatabases lists the names of MySQLConfig.List (or the current
// database) without resolving them: SHOW DATABASES needs only names, and
// resolving every session would wait for each one's call in progress. The
// tables of each are resolved when asked for (information_schema).
func (p inspectProvider) AllDatabases(ctx *sql.Context) []sql.Database {
	var names []string
	if p.m.cfg.List != nil {
		names = p.m.cfg.List()
	} else if cur := ctx.GetCurrentDatabase(); cur != "" {
		names = []string{cur}
	}
	var out []sql.Database
	seen := map[string]bool{}
	for _, n := range names {
		if n == "" || reservedDatabase(n) || seen[strings.ToLower(n)] {
			continue
		}
		seen[strings.ToLower(n)] = true
		out = append(out, listedDB{m: p.m, name: n})
	}
	slices.SortFunc(out, func(a, b sql.Database) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// listedDB is a database listed by name and resolved on first use in a
// statement; one that cannot be resolved (a session deleted since it was
// listed) has no tables.
type listedDB struct {
	m    *MySQLServer
	name string
}

func (d listedDB) Name() string { return d.name }

func (d listedDB) GetTableInsensitive(ctx *sql.Context, name string) (sql.Table, bool, error) {
	db, err := d.m.database(ctx, d.name)
	if err != nil {
		return nil, false, nil
	}
	return db.GetTableInsensitive(ctx, name)
}

func (d listedDB) GetTableNames(ctx *sql.Context) ([]string, error) {
	db, err := d.m.database(ctx, d.name)
	if err != nil {
		return nil, nil
	}
	return db.GetTableNames(ctx)
}

// database returns the statement's fork for name, resolving and forking on
// the statement's first use of it.
func (m *MySQLServer) database(ctx *sql.Context, name string) (sql.Database, error) {
	if name == "" || reservedDatabase(name) {
		return nil, sql.ErrDatabaseNotFound.New(name)
	}
	key := strings.ToLower(name)
	sess, _ := ctx.Session.(*inspectSession)
	if sess != nil {
		sess.mu.Lock()
		db := sess.pins[key]
		sess.mu.Unlock()
		if db != nil {
			return db, nil
		}
	}
	v, err := m.cfg.Resolve(name)
	if err != nil || v == nil || v.Store() != m.store {
		return nil, sql.ErrDatabaseNotFound.New(name)
	}
	db := m.store.Fork(v).ReadOnlyDatabase(name)
	if sess != nil {
		sess.mu.Lock()
		if sess.pins != nil {
			if prev := sess.pins[key]; prev != nil {
				db = prev
			} else {
				sess.pins[key] = db
			}
		}
		sess.mu.Unlock()
	}
	return db, nil
}

// errReadOnly is the MySQL error for a refused statement: 1290
// (ER_OPTION_PREVENTS_STATEMENT), as MySQL answers writes under --read-only.
func errReadOnly(what string) error {
	return mysql.NewSQLError(mysql.EROptionPreventsStatement, mysql.SSUnknownSQLState,
		"the weft inspection server is read-only: %s is not allowed", what)
}

// checkInspectStatement is the inspection server's gate: it lets through
// statements that only read (SELECT, UNION, SHOW, DESCRIBE, EXPLAIN), USE,
// SET of session and user variables, and transaction statements (no-ops
// here), and refuses everything else before the engine sees it. A refused
// statement gets MySQL error 1290.
func checkInspectStatement(query string, stmt sqlparser.Statement) error {
	if err := allowedStatement(query, stmt); err != nil {
		return err
	}
	if state.HostFileAccess(query) || callsHostFiles(stmt) {
		return errReadOnly("host file access (LOAD_FILE, INTO OUTFILE/DUMPFILE)")
	}
	return nil
}

func allowedStatement(query string, stmt sqlparser.Statement) error {
	switch s := stmt.(type) {
	case *sqlparser.Select, *sqlparser.SetOp, *sqlparser.ParenSelect, *sqlparser.Show, *sqlparser.Use,
		*sqlparser.Begin, *sqlparser.Commit, *sqlparser.Rollback:
		return nil
	case *sqlparser.Explain:
		if s.Statement == nil {
			return nil
		}
		return allowedStatement(query, s.Statement)
	case *sqlparser.Set:
		for _, e := range s.Exprs {
			scope := e.Scope
			if e.Name != nil {
				if _, sc, _, err := sqlparser.VarScopeForColName(e.Name); err == nil && sc != sqlparser.SetScope_None {
					scope = sc
				}
			}
			switch scope {
			case sqlparser.SetScope_None, sqlparser.SetScope_Session, sqlparser.SetScope_User:
			default:
				return errReadOnly("SET " + strings.ToUpper(string(scope)) + " (server variables are shared by the whole process)")
			}
		}
		return nil
	}
	what := strings.ToUpper(state.FirstKeyword(query))
	if what == "" {
		what = "this statement"
	}
	return errReadOnly(what)
}

// callsHostFiles reports LOAD_FILE() calls and INTO OUTFILE/DUMPFILE
// anywhere in the statement (hostFileAccess scans the tokens as well).
func callsHostFiles(stmt sqlparser.Statement) bool {
	found := false
	intoFile := func(i *sqlparser.Into) bool { return i != nil && (i.Outfile != "" || i.Dumpfile != "") }
	_ = sqlparser.Walk(func(n sqlparser.SQLNode) (bool, error) {
		switch n := n.(type) {
		case *sqlparser.FuncExpr:
			if n.Name.Lowered() == "load_file" {
				found = true
			}
		case *sqlparser.Select:
			if intoFile(n.Into) {
				found = true
			}
		case *sqlparser.SetOp:
			if intoFile(n.Into) {
				found = true
			}
		}
		return !found, nil
	}, stmt)
	return found
}
