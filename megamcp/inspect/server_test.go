package inspect

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/weft-dev/weft/core/state"
)

const inspectDDL = `
CREATE TABLE users (id BIGINT PRIMARY KEY, name VARCHAR(64) NOT NULL, email VARCHAR(128));
CREATE TABLE orders (id BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, total DECIMAL(10,2) NOT NULL, INDEX by_user (user_id))`

const inspectToken = "s3cret-token"

// inspectFixture is a store with sessions the way megamcp keeps them: one
// workspace per session id, resolved to its current snapshot.
type inspectFixture struct {
	store *state.Store
	v0    *state.Version

	// call is held while a unit of work runs, as megamcp holds a session's
	// lock during a call; resolve waits for it, so it returns committed
	// states only.
	call sync.Mutex

	mu  sync.Mutex
	ws  map[string]*state.Workspace
	fix map[string]*state.Version // ids resolved to a fixed version
}

func newInspectFixture(t *testing.T) *inspectFixture {
	t.Helper()
	st := state.NewStore()
	t.Cleanup(func() { st.Close() })
	v0, err := st.Load(context.Background(), inspectDDL,
		state.TableRows{Table: "users", Columns: []string{"id", "name", "email"}, Rows: [][]any{{1, "ann", "ann@example.com"}, {2, "bob", nil}}},
		state.TableRows{Table: "orders", Columns: []string{"id", "user_id", "total"}, Rows: [][]any{{10, 1, "9.50"}, {11, 1, "20.00"}, {12, 2, "3.25"}}})
	if err != nil {
		t.Fatal(err)
	}
	return &inspectFixture{store: st, v0: v0,
		ws:  map[string]*state.Workspace{"sess-a": st.Fork(v0), "sess-b": st.Fork(v0)},
		fix: map[string]*state.Version{"fixed": v0}}
}

func (f *inspectFixture) resolve(id string) (*state.Version, error) {
	f.mu.Lock()
	ws, ok := f.ws[id]
	v := f.fix[id]
	f.mu.Unlock()
	if v != nil {
		return v, nil
	}
	if !ok {
		return nil, fmt.Errorf("no session %q", id)
	}
	f.call.Lock()
	defer f.call.Unlock()
	return ws.Snapshot()
}

// unit runs fn as one unit of work on a session, as a megamcp call does.
func (f *inspectFixture) unit(id string, fn func(u *state.Unit) error) error {
	f.call.Lock()
	defer f.call.Unlock()
	return f.ws[id].Do(fn)
}

func (f *inspectFixture) list() []string { return []string{"fixed", "sess-a", "sess-b", "gone"} }

func (f *inspectFixture) serve(t *testing.T) (*MySQLServer, int) {
	t.Helper()
	srv, err := NewMySQLServer(f.store, MySQLConfig{Password: inspectToken, Resolve: f.resolve, List: f.list})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, srv.Addr().(*net.TCPAddr).Port
}

func dialInspect(port int, user, pass, db string) (*mysql.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return mysql.Connect(ctx, &mysql.ConnParams{Host: "127.0.0.1", Port: port, Uname: user, Pass: pass, DbName: db})
}

func mustDial(t *testing.T, port int, db string) *mysql.Conn {
	t.Helper()
	c, err := dialInspect(port, "weft", inspectToken, db)
	if err != nil {
		t.Fatalf("connect to %q: %v", db, err)
	}
	t.Cleanup(c.Close)
	return c
}

// rowsOf runs q and returns its rows as strings ("NULL" for NULL).
func rowsOf(t *testing.T, c *mysql.Conn, q string) [][]string {
	t.Helper()
	res, err := c.ExecuteFetch(q, 10000, true)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return strRows(res)
}

func strRows(res *sqltypes.Result) [][]string {
	out := [][]string{}
	for _, r := range res.Rows {
		row := make([]string, len(r))
		for i, v := range r {
			if v.IsNull() {
				row[i] = "NULL"
			} else {
				row[i] = v.ToString()
			}
		}
		out = append(out, row)
	}
	return out
}

func flat(rows [][]string) string {
	parts := make([]string, len(rows))
	for i, r := range rows {
		parts[i] = strings.Join(r, ",")
	}
	return strings.Join(parts, ";")
}

func wantRows(t *testing.T, c *mysql.Conn, q, want string) {
	t.Helper()
	if got := flat(rowsOf(t, c, q)); got != want {
		t.Errorf("%s:\n got %s\nwant %s", q, got, want)
	}
}

// sqlErrNum returns the MySQL error number of err, or 0.
func sqlErrNum(err error) int {
	var se *mysql.SQLError
	if errors.As(err, &se) {
		return se.Number()
	}
	return 0
}

func TestMySQLServerReadsVersions(t *testing.T) {
	f := newInspectFixture(t)
	_, port := f.serve(t)
	c := mustDial(t, port, "sess-a")

	wantRows(t, c, "SHOW TABLES", "orders;users")
	wantRows(t, c, "SELECT id, name, email FROM users ORDER BY id", "1,ann,ann@example.com;2,bob,NULL")
	wantRows(t, c, "SELECT u.name, COUNT(*), MAX(o.total) FROM users u JOIN orders o ON o.user_id = u.id GROUP BY u.name ORDER BY u.name", "ann,2,20.00;bob,1,3.25")
	wantRows(t, c, "SELECT id, total FROM orders WHERE user_id = 1 ORDER BY id", "10,9.50;11,20.00")
	wantRows(t, c, "SELECT DATABASE()", "sess-a")
	wantRows(t, c, "SELECT COUNT(*) FROM fixed.orders", "3")

	desc := rowsOf(t, c, "DESCRIBE users")
	if len(desc) != 3 || desc[0][0] != "id" || desc[0][3] != "PRI" || desc[1][0] != "name" || desc[1][2] != "NO" || desc[2][0] != "email" || desc[2][2] != "YES" {
		t.Errorf("DESCRIBE users = %v", desc)
	}
	if got := flat(rowsOf(t, c, "SHOW CREATE TABLE orders")); !strings.Contains(got, "KEY `by_user` (`user_id`)") {
		t.Errorf("SHOW CREATE TABLE orders = %s", got)
	}
	// SHOW DATABASES lists what List names, without resolving; a listed name
	// Resolve does not know ("gone") has no tables.
	wantRows(t, c, "SHOW DATABASES", "fixed;gone;information_schema;sess-a;sess-b")
	wantRows(t, c, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'sess-b' ORDER BY table_name", "orders;users")
	wantRows(t, c, "SELECT table_schema, COUNT(*) FROM information_schema.tables WHERE table_schema <> 'information_schema' GROUP BY table_schema ORDER BY table_schema", "fixed,2;sess-a,2;sess-b,2")
	wantRows(t, c, "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = 'fixed' AND table_name = 'orders'", "3")

	// Result metadata reaches the client.
	res, err := c.ExecuteFetch("SELECT id, total FROM orders LIMIT 1", 10, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Fields) != 2 || res.Fields[0].Name != "id" || res.Fields[0].Type != sqltypes.Int64 || res.Fields[1].Type != sqltypes.Decimal || res.Fields[1].Decimals != 2 {
		t.Errorf("fields = %v", res.Fields)
	}
	// More rows than one batch.
	wantRows(t, c, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 1000) SELECT COUNT(*), SUM(i) FROM n", "1000,500500")
	if got := len(rowsOf(t, c, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 300) SELECT i FROM n")); got != 300 {
		t.Errorf("300-row result has %d rows", got)
	}

	// Session statements that only touch the connection work.
	for _, q := range []string{"SET NAMES utf8mb4", "SET @x = 42", "SET SESSION sql_select_limit = 1000", "SET autocommit = 1", "BEGIN", "COMMIT", "ROLLBACK", "USE `sess-b`", "-- nothing"} {
		if _, err := c.ExecuteFetch(q, 10, false); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	wantRows(t, c, "SELECT @x, DATABASE()", "42,sess-b")
}

func TestMySQLServerSeesLatestCommit(t *testing.T) {
	f := newInspectFixture(t)
	_, port := f.serve(t)
	c := mustDial(t, port, "sess-a")
	ctx := context.Background()
	ws := f.ws["sess-a"]

	wantRows(t, c, "SELECT COUNT(*) FROM users", "2")
	if _, err := ws.Exec(ctx, "INSERT INTO users (id, name) VALUES (?, ?)", 3, "cy"); err != nil {
		t.Fatal(err)
	}
	wantRows(t, c, "SELECT id, name FROM users ORDER BY id", "1,ann;2,bob;3,cy")

	// A unit's commit is seen; a rolled-back unit is not.
	err := f.unit("sess-a", func(u *state.Unit) error {
		_, err := u.Exec(ctx, "UPDATE users SET name = ? WHERE id = ?", "ann2", 1)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, c, "SELECT name FROM users WHERE id = 1", "ann2")
	_ = f.unit("sess-a", func(u *state.Unit) error {
		if _, err := u.Exec(ctx, "DELETE FROM users"); err != nil {
			return err
		}
		return errors.New("roll back")
	})
	wantRows(t, c, "SELECT COUNT(*) FROM users", "3")

	// Other sessions are independent; one statement may read several.
	wantRows(t, c, "SELECT (SELECT COUNT(*) FROM `sess-a`.users), (SELECT COUNT(*) FROM `sess-b`.users), (SELECT COUNT(*) FROM fixed.users)", "3,2,2")
	if _, err := c.ExecuteFetch("USE `sess-b`", 10, false); err != nil {
		t.Fatal(err)
	}
	wantRows(t, c, "SELECT COUNT(*) FROM users", "2")

	// A session that goes away becomes an unknown database.
	f.mu.Lock()
	delete(f.ws, "sess-b")
	f.mu.Unlock()
	if _, err := c.ExecuteFetch("SELECT COUNT(*) FROM users", 10, false); sqlErrNum(err) != mysql.ERBadDb {
		t.Errorf("query on a deleted session: err = %v, want error %d", err, mysql.ERBadDb)
	}
}

func TestMySQLServerRefusesWrites(t *testing.T) {
	f := newInspectFixture(t)
	_, port := f.serve(t)
	ws := f.ws["sess-a"]
	wsHash, v0Hash := ws.Hash(), f.v0.Hash()
	out := filepath.Join(t.TempDir(), "out")

	refused := []string{
		"INSERT INTO users (id, name) VALUES (9, 'mallory')",
		"insert into fixed.users (id, name) values (9, 'mallory')",
		"REPLACE INTO users (id, name) VALUES (1, 'mallory')",
		"UPDATE users SET name = 'mallory'",
		"UPDATE fixed.users SET name = 'mallory'",
		"DELETE FROM users",
		"/* comment */ DELETE FROM orders WHERE id = 10",
		"TRUNCATE TABLE orders",
		"DROP TABLE users",
		"DROP TABLE fixed.users",
		"CREATE TABLE t (id INT PRIMARY KEY)",
		"CREATE INDEX by_name ON users (name)",
		"ALTER TABLE users ADD COLUMN age INT",
		"RENAME TABLE users TO people",
		"CREATE DATABASE other",
		"DROP DATABASE `sess-a`",
		"CREATE VIEW v AS SELECT * FROM users",
		"CREATE USER evil IDENTIFIED BY 'x'",
		"GRANT ALL ON *.* TO weft",
		"SET GLOBAL max_connections = 1",
		"SET @@global.sql_mode = ''",
		"SET @@GLOBAL.sql_mode = ''",
		"SET PERSIST max_connections = 1",
		"SET @a = 1, GLOBAL max_connections = 1",
		"SELECT LOAD_FILE('/etc/hostname')",
		"SELECT `load_file`('/etc/hostname')",
		"SELECT /*!40101 LOAD_FILE('/etc/hostname') */",
		"SELECT * FROM users INTO OUTFILE '" + out + "'",
		"SELECT 1 INTO DUMPFILE '" + out + "'",
		"LOAD DATA INFILE '/etc/hostname' INTO TABLE users",
		"KILL 1",
		"LOCK TABLES users READ",
		"ANALYZE TABLE users",
		"FLUSH PRIVILEGES",
		"PREPARE s FROM 'DELETE FROM users'",
		"CALL p()",
		"EXPLAIN DELETE FROM users",
		"/*!50000 DELETE FROM users */",
	}
	c := mustDial(t, port, "sess-a")
	for _, q := range refused {
		_, err := c.ExecuteFetch(q, 10, false)
		if sqlErrNum(err) != mysql.EROptionPreventsStatement || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("%s: err = %v, want error %d (read-only)", q, err, mysql.EROptionPreventsStatement)
		}
	}
	// The second statement of a multi-statement query is checked too.
	res, _, err := c.ExecuteFetchMulti(context.Background(), "SELECT COUNT(*) FROM users; DELETE FROM users; SELECT 1", 10, false)
	if err != nil || flat(strRows(res)) != "2" {
		t.Fatalf("first statement: %v %v", res, err)
	}
	if _, _, _, err := c.ReadQueryResult(context.Background(), 10, false); sqlErrNum(err) != mysql.EROptionPreventsStatement {
		t.Errorf("DELETE after SELECT: err = %v, want error %d", err, mysql.EROptionPreventsStatement)
	}

	// Nothing changed anywhere, and the connection is still usable.
	if ws.Hash() != wsHash || f.v0.Hash() != v0Hash || f.store.Fork(f.v0).Hash() != v0Hash {
		t.Error("a refused statement changed a workspace or version")
	}
	wantRows(t, c, "SELECT id, name FROM users ORDER BY id", "1,ann;2,bob")
	wantRows(t, c, "SELECT COUNT(*) FROM fixed.orders", "3")
	wantRows(t, c, "SELECT @@global.max_connections = @@global.max_connections", "1")
	if _, err := os.Stat(out); err == nil {
		t.Error("INTO OUTFILE wrote a file")
	}
}

func TestMySQLServerAuth(t *testing.T) {
	f := newInspectFixture(t)
	_, port := f.serve(t)
	for _, tc := range []struct{ user, pass string }{
		{"weft", "wrong"},
		{"weft", ""},
		{"root", inspectToken},
		{"weft", inspectToken + "x"},
	} {
		c, err := dialInspect(port, tc.user, tc.pass, "sess-a")
		if err == nil {
			c.Close()
			t.Errorf("user %q password %q: connected", tc.user, tc.pass)
			continue
		}
		if sqlErrNum(err) != mysql.ERAccessDeniedError || !strings.Contains(err.Error(), "Access denied") {
			t.Errorf("user %q password %q: err = %v, want access denied (%d)", tc.user, tc.pass, err, mysql.ERAccessDeniedError)
		}
	}
	c := mustDial(t, port, "")
	wantRows(t, c, "SELECT 1 + 1", "2")
}

func TestMySQLServerUnknownDatabase(t *testing.T) {
	f := newInspectFixture(t)
	_, port := f.serve(t)
	for _, db := range []string{"nosuch", "gone", "mysql"} {
		_, err := dialInspect(port, "weft", inspectToken, db)
		if sqlErrNum(err) != mysql.ERBadDb || !strings.Contains(err.Error(), db) {
			t.Errorf("connect to %q: err = %v, want error %d naming it", db, err, mysql.ERBadDb)
		}
	}
	c := mustDial(t, port, "")
	for _, q := range []string{"USE nosuch", "SELECT * FROM nosuch.users", "SHOW TABLES FROM nosuch"} {
		if _, err := c.ExecuteFetch(q, 10, false); sqlErrNum(err) != mysql.ERBadDb || !strings.Contains(err.Error(), "nosuch") {
			t.Errorf("%s: err = %v, want error %d", q, err, mysql.ERBadDb)
		}
	}
	if _, err := c.ExecuteFetch("SELECT * FROM users", 10, false); sqlErrNum(err) != mysql.ERNoDb {
		t.Errorf("no database selected: err = %v, want error %d", err, mysql.ERNoDb)
	}
	if _, err := c.ExecuteFetch("SELECT * FROM `sess-a`.nosuch", 10, false); sqlErrNum(err) != mysql.ERNoSuchTable {
		t.Errorf("unknown table: err = %v, want error %d", err, mysql.ERNoSuchTable)
	}
	// Without List, SHOW DATABASES lists the current database only.
	srv, err := NewMySQLServer(f.store, MySQLConfig{Password: inspectToken, Resolve: f.resolve})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c2 := mustDial(t, srv.Addr().(*net.TCPAddr).Port, "sess-b")
	wantRows(t, c2, "SHOW DATABASES", "information_schema;sess-b")
}

// fakeAddrListener is a loopback listener that reports another address.
type fakeAddrListener struct {
	net.Listener
	addr net.Addr
}

func (l fakeAddrListener) Addr() net.Addr { return l.addr }

func TestMySQLServerConfig(t *testing.T) {
	f := newInspectFixture(t)
	for _, tc := range []struct {
		name string
		cfg  MySQLConfig
		want string
	}{
		{"no resolve", MySQLConfig{Password: "x"}, "Resolve"},
		{"no password", MySQLConfig{Resolve: f.resolve}, "Password"},
		{"all interfaces", MySQLConfig{Password: "x", Resolve: f.resolve, Address: "0.0.0.0:0"}, "not loopback"},
		{"empty host", MySQLConfig{Password: "x", Resolve: f.resolve, Address: ":0"}, "not loopback"},
		{"host name", MySQLConfig{Password: "x", Resolve: f.resolve, Address: "db.example.com:3306"}, "not loopback"},
		{"ipv6 any", MySQLConfig{Password: "x", Resolve: f.resolve, Address: "[::]:0"}, "not loopback"},
	} {
		srv, err := NewMySQLServer(f.store, tc.cfg)
		if err == nil {
			srv.Close()
			t.Errorf("%s: no error", tc.name)
		} else if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tc.name, err, tc.want)
		}
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	remote := fakeAddrListener{l, &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 3306}}
	if srv, err := NewMySQLServer(f.store, MySQLConfig{Password: "x", Resolve: f.resolve, Listener: remote}); err == nil {
		srv.Close()
		t.Error("non-loopback listener accepted without AllowRemote")
	}
	srv, err := NewMySQLServer(f.store, MySQLConfig{Password: "x", Resolve: f.resolve, Listener: remote, AllowRemote: true})
	if err != nil {
		t.Fatalf("AllowRemote: %v", err)
	}
	c, err := dialInspect(l.Addr().(*net.TCPAddr).Port, "weft", "x", "sess-a")
	if err != nil {
		t.Fatal(err)
	}
	wantRows(t, c, "SELECT COUNT(*) FROM users", "2")
	c.Close()
	srv.Close()

	for _, addr := range []string{"localhost:0", "[::1]:0"} {
		srv, err := NewMySQLServer(f.store, MySQLConfig{Password: "x", Resolve: f.resolve, Address: addr, User: "ops"})
		if err != nil {
			if addr == "[::1]:0" && strings.Contains(err.Error(), "assign") {
				continue // no IPv6 loopback here
			}
			t.Fatalf("%s: %v", addr, err)
		}
		if !srv.Addr().(*net.TCPAddr).IP.IsLoopback() {
			t.Errorf("%s: listening on %s", addr, srv.Addr())
		}
		srv.Close()
	}
}

func TestMySQLServerClose(t *testing.T) {
	f := newInspectFixture(t)
	srv, port := f.serve(t)
	c := mustDial(t, port, "sess-a")
	wantRows(t, c, "SELECT COUNT(*) FROM users", "2")
	idle, err := net.Dial("tcp", srv.Addr().String()) // connected, never authenticates
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()

	done := make(chan error, 1)
	go func() { done <- srv.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
	if err := srv.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := c.ExecuteFetch("SELECT 1", 10, false); err == nil {
		t.Error("query on a connection of a closed server succeeded")
	}
	if c2, err := dialInspect(port, "weft", inspectToken, "sess-a"); err == nil {
		c2.Close()
		t.Error("connected to a closed server")
	}
	// The store and its workspaces are unaffected.
	if _, err := f.ws["sess-a"].Exec(context.Background(), "INSERT INTO users (id, name) VALUES (3, 'cy')"); err != nil {
		t.Fatal(err)
	}
}

// TestMySQLServerConcurrent reads from several connections while the
// session commits: every statement sees one committed state.
func TestMySQLServerConcurrent(t *testing.T) {
	f := newInspectFixture(t)
	_, port := f.serve(t)
	const commits = 40
	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for r := 0; r < 4; r++ {
		c := mustDial(t, port, "sess-a")
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := 0
			for {
				select {
				case <-stop:
					return
				default:
				}
				// Both counts come from one fork: users and orders grow together.
				res, err := c.ExecuteFetch("SELECT (SELECT COUNT(*) FROM users), (SELECT COUNT(*) FROM orders)", 10, false)
				if err != nil {
					errs <- err
					return
				}
				var u, o int
				fmt.Sscan(res.Rows[0][0].ToString(), &u)
				fmt.Sscan(res.Rows[0][1].ToString(), &o)
				if o-u != 1 || u < last {
					errs <- fmt.Errorf("saw users=%d orders=%d after users=%d", u, o, last)
					return
				}
				last = u
			}
		}()
	}
	ctx := context.Background()
	for i := 0; i < commits; i++ {
		err := f.unit("sess-a", func(u *state.Unit) error {
			if _, err := u.Exec(ctx, "INSERT INTO users (id, name) VALUES (?, ?)", 100+i, "u"); err != nil {
				return err
			}
			_, err := u.Exec(ctx, "INSERT INTO orders (id, user_id, total) VALUES (?, ?, ?)", 100+i, 100+i, "1.00")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Millisecond)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestMySQLServerMariaDBClient drives the server with Debian's MariaDB
// command-line client (package mariadb-client). Skipped when the mariadb
// binary is absent, unless WEFT_REQUIRE_MARIADB=1 (CI) makes that a failure.
func TestMySQLServerMariaDBClient(t *testing.T) {
	bin, err := exec.LookPath("mariadb")
	if err != nil {
		if os.Getenv("WEFT_REQUIRE_MARIADB") == "1" {
			t.Fatal("mariadb client not found (apt-get install mariadb-client)")
		}
		t.Skip("mariadb client not installed (apt-get install mariadb-client)")
	}
	f := newInspectFixture(t)
	_, port := f.serve(t)
	run := func(pass, db, sql string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		args := []string{"--no-defaults", "--protocol=TCP", "-h", "127.0.0.1", "-P", fmt.Sprint(port),
			"-u", "weft", "-p" + pass, "--batch", "--skip-ssl", "-e", sql}
		if db != "" {
			args = append(args, db)
		}
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		return string(out), err
	}

	out, err := run(inspectToken, "sess-a", "SHOW TABLES; SELECT id, name, email FROM users ORDER BY id")
	if err != nil {
		t.Fatalf("mariadb: %v\n%s", err, out)
	}
	want := "Tables_in_sess-a\norders\nusers\nid\tname\temail\n1\tann\tann@example.com\n2\tbob\tNULL\n"
	if out != want {
		t.Errorf("mariadb output:\n%q\nwant\n%q", out, want)
	}

	if _, err := f.ws["sess-a"].Exec(context.Background(), "UPDATE orders SET total = ? WHERE id = ?", "99.99", 12); err != nil {
		t.Fatal(err)
	}
	out, err = run(inspectToken, "", "USE `sess-a`; SELECT SUM(total) AS s FROM orders; DESCRIBE orders")
	if err != nil || !strings.HasPrefix(out, "s\n129.49\n") || !strings.Contains(out, "user_id\tbigint\tNO\tMUL") {
		t.Errorf("mariadb after a commit: %v\n%s", err, out)
	}

	out, err = run(inspectToken, "sess-a", "DELETE FROM users")
	if err == nil || !strings.Contains(out, "ERROR 1290") || !strings.Contains(out, "read-only") {
		t.Errorf("mariadb DELETE: %v\n%s", err, out)
	}
	out, err = run("wrong", "sess-a", "SELECT 1")
	if err == nil || !strings.Contains(out, "ERROR 1045") || !strings.Contains(out, "Access denied") {
		t.Errorf("mariadb wrong password: %v\n%s", err, out)
	}
	out, err = run(inspectToken, "nosuch", "SELECT 1")
	if err == nil || !strings.Contains(out, "ERROR 1049") || !strings.Contains(out, "nosuch") {
		t.Errorf("mariadb unknown database: %v\n%s", err, out)
	}
	wantRowsAfter := "COUNT(*)\n2\n"
	if out, err := run(inspectToken, "sess-a", "SELECT COUNT(*) FROM users"); err != nil || out != wantRowsAfter {
		t.Errorf("mariadb after refused DELETE: %v\n%q", err, out)
	}
}
