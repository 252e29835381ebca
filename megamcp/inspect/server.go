package inspect

import (
	"context"
	"crypto/sha1"
	"crypto/subtle"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/weft-dev/weft/core/state"
)

// MySQLConfig configures a read-only MySQL wire-protocol server over versions
// of a state.Store (see NewMySQLServer).
type MySQLConfig struct {
	// Listener, if set, is the listener to serve on; once NewMySQLServer
	// succeeds the server owns it and closes it in Close. Otherwise the
	// server listens on Address (TCP, default "127.0.0.1:0"; Addr reports
	// the port chosen).
	Listener net.Listener
	Address  string
	// AllowRemote permits a listen address that is not loopback. Without it
	// NewMySQLServer refuses one: the server is meant for operators on the
	// same host, and the wire protocol is not encrypted.
	AllowRemote bool

	// User and Password are the only credentials accepted
	// (mysql_native_password). User defaults to "weft"; Password is required.
	User, Password string

	// Resolve returns the version a database name stands for at the moment
	// it is called, or an error (or a nil version) for an unknown name, which
	// the client sees as MySQL error 1049. It is called once per statement
	// for each database the statement touches, so every statement sees the
	// latest version. It must be safe for concurrent use and return versions
	// of this Store. The engine sometimes passes names lower-cased.
	Resolve func(database string) (*state.Version, error)

	// List, if set, returns the database names SHOW DATABASES and
	// information_schema list. Names are resolved only when a statement reads
	// their tables. Without List they list only the current database.
	List func() []string

	// QueryTimeout bounds each statement (default
	// DefaultMySQLQueryTimeout): an inspection query that would run for
	// minutes is cancelled and the client gets an error.
	QueryTimeout time.Duration
}

// DefaultMySQLQueryTimeout is MySQLConfig.QueryTimeout's default.
const DefaultMySQLQueryTimeout = 30 * time.Second

// MySQLServer serves versions of a state.Store over the MySQL wire protocol,
// read-only, so that any MySQL client can inspect them:
//
//	mysql -h 127.0.0.1 -P PORT -u weft -pTOKEN DATABASE
//
// A database is whatever MySQLConfig.Resolve maps its name to. Every
// statement runs on a fresh private fork of the version Resolve returns at
// that moment: the client sees the latest version on its next statement, and
// nothing it does can reach any workspace (it only ever sees forks, which are
// dropped after the statement). Statements that would write (DML, DDL),
// change server-wide state (SET GLOBAL, KILL, LOCK TABLES, ...) or touch host
// files (LOAD_FILE, INTO OUTFILE, LOAD DATA) are refused with MySQL error 1290;
// the engine also runs in read-only mode. Binary-protocol prepared statements
// are refused (error 1235); send statements as text.
//
// The wire layer is vitess's mysql.Listener (what go-mysql-server's own
// server package wraps) with a handler of our own; the SQL engine is a
// go-mysql-server engine over weft's storage backend, separate from the
// Store's.
type MySQLServer struct {
	store    *state.Store
	cfg      MySQLConfig
	engine   *sqle.Engine
	listener *mysql.Listener
	ctx      context.Context // cancelled by Close
	cancel   context.CancelFunc
	accepted chan struct{} // closed when the accept loop returns
	pid      atomic.Uint64

	mu     sync.Mutex
	idle   *sync.Cond // signalled when active drops to zero
	closed bool
	active int                  // connections between NewConnection and ConnectionClosed
	conns  map[uint32]*wireConn // by connection id

	closeOnce sync.Once
	closeErr  error
}

type wireConn struct {
	c    *mysql.Conn
	sess *inspectSession // created on the connection's first command
}

// NewMySQLServer starts serving versions of s over the MySQL wire protocol
// (see MySQLServer). It fails for a configuration without Resolve or
// Password and for a listen address that is not loopback unless AllowRemote.
func NewMySQLServer(s *state.Store, cfg MySQLConfig) (*MySQLServer, error) {
	if cfg.Resolve == nil {
		return nil, errors.New("inspect: MySQLConfig.Resolve is required")
	}
	if cfg.Password == "" {
		return nil, errors.New("inspect: MySQLConfig.Password is required")
	}
	if cfg.User == "" {
		cfg.User = "weft"
	}
	l := cfg.Listener
	if l == nil {
		addr := cfg.Address
		if addr == "" {
			addr = "127.0.0.1:0"
		}
		if !cfg.AllowRemote && !loopbackAddress(addr) {
			return nil, fmt.Errorf("inspect: MySQL inspection address %q is not loopback (set AllowRemote to serve it)", addr)
		}
		var err error
		if l, err = net.Listen("tcp", addr); err != nil {
			return nil, fmt.Errorf("inspect: MySQL inspection server: %w", err)
		}
	}
	if !cfg.AllowRemote && !loopbackAddr(l.Addr()) {
		if cfg.Listener == nil {
			l.Close()
		}
		return nil, fmt.Errorf("inspect: MySQL inspection address %s is not loopback (set AllowRemote to serve it)", l.Addr())
	}

	m := &MySQLServer{store: s, cfg: cfg, conns: map[uint32]*wireConn{}, accepted: make(chan struct{})}
	m.idle = sync.NewCond(&m.mu)
	m.ctx, m.cancel = context.WithCancel(context.Background())
	a := analyzer.NewDefault(inspectProvider{m})
	a.Coster = state.NewCoster()
	m.engine = sqle.New(a, &sqle.Config{IsReadOnly: true})

	sum := sha1.Sum([]byte(cfg.Password))
	stage2 := sha1.Sum(sum[:])
	auth := &wireAuth{user: cfg.User, hash: stage2[:]}
	vl, err := mysql.NewListenerWithConfig(mysql.ListenerConfig{
		Listener:           l,
		AuthServer:         auth,
		Handler:            &wireHandler{m},
		ConnReadBufferSize: mysql.DefaultConnBufferSize,
	})
	if err != nil {
		if cfg.Listener == nil {
			l.Close()
		}
		m.cancel()
		_ = m.engine.Close()
		return nil, fmt.Errorf("inspect: MySQL inspection server: %w", err)
	}
	vl.ServerVersion = mysql.DefaultServerVersion + "-weft-inspect"
	m.listener = vl
	go func() {
		defer close(m.accepted)
		vl.Accept()
	}()
	return m, nil
}

// Addr returns the address the server listens on.
func (m *MySQLServer) Addr() net.Addr { return m.listener.Addr() }

// Close stops accepting connections, closes the open ones (cancelling their
// statements) and releases the server's engine. It never affects the Store
// or its workspaces. Safe to call more than once.
func (m *MySQLServer) Close() error {
	m.closeOnce.Do(func() {
		m.listener.Close()
		<-m.accepted
		m.cancel()
		m.mu.Lock()
		m.closed = true
		for _, wc := range m.conns {
			wc.c.Close()
		}
		for m.active > 0 {
			m.idle.Wait()
		}
		m.mu.Unlock()
		// The engine reports its background context's cancellation as an
		// error on every close.
		if err := m.engine.Close(); err != nil && !errors.Is(err, context.Canceled) {
			m.closeErr = err
		}
	})
	return m.closeErr
}

func loopbackAddress(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func loopbackAddr(a net.Addr) bool {
	switch a := a.(type) {
	case *net.TCPAddr:
		return a.IP.IsLoopback()
	case *net.UnixAddr:
		return true
	}
	return false
}

// wireAuth accepts exactly one user and password, with
// mysql_native_password (what every MySQL and MariaDB client speaks).
type wireAuth struct {
	user string
	hash []byte // SHA1(SHA1(password))
}

var (
	_ mysql.AuthServer    = (*wireAuth)(nil)
	_ mysql.HashStorage   = (*wireAuth)(nil)
	_ mysql.UserValidator = (*wireAuth)(nil)
)

func (a *wireAuth) AuthMethods() []mysql.AuthMethod {
	return []mysql.AuthMethod{mysql.NewMysqlNativeAuthMethod(a, a)}
}

func (a *wireAuth) DefaultAuthMethodDescription() mysql.AuthMethodDescription {
	return mysql.MysqlNativePassword
}

// HandleUser accepts every user name, so that a wrong one is refused like a
// wrong password: with "access denied".
func (a *wireAuth) HandleUser(string, net.Addr) bool { return true }

func (a *wireAuth) UserEntryWithHash(_ []*x509.Certificate, salt []byte, user string, reply []byte, remote net.Addr) (mysql.Getter, error) {
	host := ""
	if remote != nil {
		host, _, _ = net.SplitHostPort(remote.String())
	}
	userOK := subtle.ConstantTimeCompare([]byte(user), []byte(a.user)) == 1
	// A native-password reply is one SHA-1 sized scramble; anything else
	// (including none: no password given) is refused before vitess's
	// verifier, which indexes 20 bytes of it.
	passOK := len(reply) == sha1.Size && mysql.VerifyHashedMysqlNativePassword(reply, salt, a.hash)
	if !userOK || !passOK {
		using := "YES"
		if len(reply) == 0 {
			using = "NO"
		}
		return nil, mysql.NewSQLError(mysql.ERAccessDeniedError, mysql.SSAccessDeniedError,
			"Access denied for user '%s'@'%s' (using password: %s)", user, host, using)
	}
	return sql.MysqlConnectionUser{User: user, Host: host}, nil
}

// wireHandler runs the commands of every connection (mysql.Handler). Each
// connection's commands arrive one at a time on the connection's goroutine.
type wireHandler struct{ m *MySQLServer }

var _ mysql.Handler = (*wireHandler)(nil)

// errNoPrepare answers binary-protocol prepared statements.
func errNoPrepare() error {
	return mysql.NewSQLError(mysql.ERNotSupportedYet, mysql.SSUnknownSQLState,
		"prepared statements are not supported by the weft inspection server: send statements as text (for go-sql-driver, interpolateParams=true)")
}

func (h *wireHandler) NewConnection(c *mysql.Conn) {
	m := h.m
	m.mu.Lock()
	defer m.mu.Unlock()
	m.active++
	m.conns[c.ConnectionID] = &wireConn{c: c}
	if m.closed {
		c.Close()
	}
}

func (h *wireHandler) ConnectionClosed(c *mysql.Conn) {
	m := h.m
	m.engine.CloseSession(c.ConnectionID)
	m.mu.Lock()
	delete(m.conns, c.ConnectionID)
	m.active--
	if m.active == 0 {
		m.idle.Broadcast()
	}
	m.mu.Unlock()
}

func (h *wireHandler) ConnectionAborted(*mysql.Conn, string) error { return nil }

func (h *wireHandler) ComInitDB(c *mysql.Conn, db string) error {
	m := h.m
	sess := m.session(c)
	sess.beginStatement()
	defer sess.endStatement()
	ctx := m.newContext(sess, "")
	if _, err := m.engine.Analyzer.Catalog.Database(ctx, db); err != nil {
		return sql.CastSQLError(err)
	}
	sess.SetCurrentDatabase(db)
	return nil
}

func (h *wireHandler) ComQuery(_ context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) error {
	_, err := h.m.run(c, query, false, cb)
	return err
}

func (h *wireHandler) ComMultiQuery(_ context.Context, c *mysql.Conn, query string, cb mysql.ResultSpoolFn) (string, error) {
	return h.m.run(c, query, true, cb)
}

func (h *wireHandler) ComPrepare(context.Context, *mysql.Conn, string, *mysql.PrepareData) ([]*querypb.Field, error) {
	return nil, errNoPrepare()
}

func (h *wireHandler) ComStmtExecute(context.Context, *mysql.Conn, *mysql.PrepareData, func(*sqltypes.Result) error) error {
	return errNoPrepare()
}

func (h *wireHandler) WarningCount(c *mysql.Conn) uint16 {
	return h.m.session(c).WarningCount()
}

func (h *wireHandler) ComResetConnection(c *mysql.Conn) error {
	m := h.m
	m.mu.Lock()
	wc := m.conns[c.ConnectionID]
	var cur string
	if wc != nil && wc.sess != nil {
		cur = wc.sess.GetCurrentDatabase()
		wc.sess = nil
	}
	m.mu.Unlock()
	m.engine.CloseSession(c.ConnectionID)
	if cur != "" {
		return h.ComInitDB(c, cur)
	}
	return nil
}

func (h *wireHandler) ParserOptionsForConnection(c *mysql.Conn) (sqlparser.ParserOptions, error) {
	ctx := h.m.newContext(h.m.session(c), "")
	return sql.LoadSqlMode(ctx).ParserOptions(), nil
}

// session returns the connection's session, creating it on first use.
func (m *MySQLServer) session(c *mysql.Conn) *inspectSession {
	m.mu.Lock()
	defer m.mu.Unlock()
	wc := m.conns[c.ConnectionID]
	if wc == nil { // not tracked (cannot happen: NewConnection comes first)
		wc = &wireConn{c: c}
	}
	if wc.sess == nil {
		host := ""
		if a := c.RemoteAddr(); a != nil {
			host, _, _ = net.SplitHostPort(a.String())
		}
		client := sql.Client{User: c.User, Address: host, Capabilities: c.Capabilities}
		wc.sess = &inspectSession{BaseSession: sql.NewBaseSessionWithClientServer(m.listener.Addr().String(), client, c.ConnectionID)}
	}
	return wc.sess
}

func (m *MySQLServer) newContext(sess *inspectSession, query string) *sql.Context {
	return sql.NewContext(m.ctx,
		sql.WithSession(sess),
		sql.WithPid(m.pid.Add(1)),
		sql.WithQuery(query),
		sql.WithMemoryManager(m.engine.MemoryManager))
}

// rowsBatch is how many rows go to the client per write.
const rowsBatch = 128

// run executes the first statement of query (all of it unless multi) and
// returns the rest. The statement is checked against the read-only gate
// before the engine sees it, and resolves its databases to fresh forks.
func (m *MySQLServer) run(c *mysql.Conn, query string, multi bool, cb mysql.ResultSpoolFn) (string, error) {
	sess := m.session(c)
	sess.beginStatement()
	defer sess.endStatement()
	ctx := m.newContext(sess, query)
	timeout := m.cfg.QueryTimeout
	if timeout <= 0 {
		timeout = DefaultMySQLQueryTimeout
	}
	tctx, cancel := context.WithTimeout(ctx.Context, timeout)
	defer cancel()
	ctx = ctx.WithContext(tctx)
	stmt, text, rest, err := sql.GlobalParser.ParseWithOptions(ctx, query, ';', multi, sql.LoadSqlMode(ctx).ParserOptions())
	more := rest != ""
	if err != nil {
		if errors.Is(err, sqlparser.ErrEmpty) { // only comments or ';'
			return rest, cb(&sqltypes.Result{}, more)
		}
		return "", sql.CastSQLError(sql.ErrSyntaxError.New(err.Error()))
	}
	if err := checkInspectStatement(text, stmt); err != nil {
		return "", err
	}
	ctx = ctx.WithQuery(text)
	schema, iter, _, err := m.engine.QueryWithBindings(ctx, text, stmt, nil, nil)
	if err != nil {
		return "", wireError(err)
	}
	if err := spool(ctx, schema, iter, more, cb); err != nil {
		return "", err
	}
	return rest, nil
}

// spool sends a statement's result: an OK packet for statements without a
// result set, else the fields and rows in batches. An error before the
// first batch is an ordinary error reply; one after it aborts the
// connection, as in go-mysql-server's handler (the protocol has no way to
// report it mid-stream).
func spool(ctx *sql.Context, schema sql.Schema, iter sql.RowIter, more bool, cb mysql.ResultSpoolFn) (err error) {
	defer func() {
		if cerr := iter.Close(ctx); err == nil && cerr != nil {
			err = wireError(cerr)
		}
	}()
	if len(schema) == 0 || types.IsOkResultSchema(schema) {
		res := &sqltypes.Result{}
		for {
			row, err := iter.Next(ctx)
			if err == io.EOF {
				break
			}
			if err != nil {
				return wireError(err)
			}
			if len(row) == 1 {
				if ok, isOK := row[0].(types.OkResult); isOK {
					res.RowsAffected, res.InsertID = ok.RowsAffected, ok.InsertID
					if ok.Info != nil {
						res.Info = ok.Info.String()
					}
				}
			}
		}
		return cb(res, more)
	}
	res := &sqltypes.Result{Fields: schemaToFields(ctx, schema)}
	sent := false
	for {
		row, err := iter.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return wireError(err)
		}
		vals := make([]sqltypes.Value, len(schema))
		for i, col := range schema {
			if i >= len(row) || row[i] == nil {
				vals[i] = sqltypes.NULL
				continue
			}
			if vals[i], err = col.Type.SQL(ctx, nil, row[i]); err != nil {
				return wireError(err)
			}
		}
		res.Rows = append(res.Rows, vals)
		if len(res.Rows) == rowsBatch {
			if err := cb(res, more); err != nil {
				return err
			}
			sent = true
			res = &sqltypes.Result{}
		}
	}
	if !sent || len(res.Rows) > 0 {
		return cb(res, more)
	}
	return nil
}

// schemaToFields describes result columns to the client, as
// go-mysql-server's handler does.
func schemaToFields(ctx *sql.Context, s sql.Schema) []*querypb.Field {
	charSetResults := ctx.GetCharacterSetResults()
	fields := make([]*querypb.Field, len(s))
	for i, c := range s {
		charset := uint32(sql.Collation_Default.CharacterSet())
		if ct, ok := c.Type.(sql.TypeWithCollation); ok {
			charset = uint32(ct.Collation().CharacterSet())
		}
		if types.IsBinaryType(c.Type) {
			charset = uint32(sql.Collation_binary)
		} else if charSetResults != sql.CharacterSet_Unspecified {
			charset = uint32(charSetResults)
		}
		var flags querypb.MySqlFlag
		if !c.Nullable {
			flags |= querypb.MySqlFlag_NOT_NULL_FLAG
		}
		if c.AutoIncrement {
			flags |= querypb.MySqlFlag_AUTO_INCREMENT_FLAG
		}
		if c.PrimaryKey {
			flags |= querypb.MySqlFlag_PRI_KEY_FLAG
		}
		if types.IsUnsigned(c.Type) {
			flags |= querypb.MySqlFlag_UNSIGNED_FLAG
		}
		f := &querypb.Field{
			Name:         c.Name,
			OrgName:      c.Name,
			Table:        c.Source,
			OrgTable:     c.Source,
			Database:     c.DatabaseSource,
			Type:         c.Type.Type(),
			Charset:      charset,
			ColumnLength: c.Type.MaxTextResponseByteLength(ctx),
			Flags:        uint32(flags),
		}
		if dt, ok := c.Type.(sql.DecimalType); ok && types.IsDecimal(c.Type) {
			f.Decimals = uint32(dt.Scale())
		} else if dt, ok := c.Type.(sql.DatetimeType); ok && types.IsDatetimeType(c.Type) {
			f.Decimals = uint32(dt.Precision())
		}
		fields[i] = f
	}
	return fields
}

// wireError converts an engine error to the MySQL error the client sees.
func wireError(err error) error {
	switch {
	case sql.ErrReadOnly.Is(err): // the engine's own read-only check
		return errReadOnly("this statement")
	case sql.ErrNoDatabaseSelected.Is(err):
		return mysql.NewSQLError(mysql.ERNoDb, mysql.SSNoDB, "No database selected")
	}
	return sql.CastSQLError(err)
}
