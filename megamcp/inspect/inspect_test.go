package inspect_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dolthub/vitess/go/mysql"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/core/state"
	"github.com/weft-dev/weft/megamcp"
	"github.com/weft-dev/weft/megamcp/inspect"
	"github.com/weft-dev/weft/megamcp/megamcptest"
)

// A megamcp server is what Serve is for.
var _ inspect.Sessions = (*megamcp.Server)(nil)

func newMegamcp(t *testing.T) *megamcp.Server {
	t.Helper()
	ctx := context.Background()
	rt, err := module.NewRuntime(ctx, module.Config{CallTimeout: 2 * time.Second, CacheDir: megamcptest.CacheDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(ctx) })
	s, err := megamcp.Open(ctx, megamcp.Config{Runtime: rt, Registry: megamcptest.Registry(t), CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func addNote(t *testing.T, s *megamcp.Server, id, text string) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"text": text})
	r, err := s.Call(context.Background(), id, megamcp.CallRequest{Tool: "add_note", Arguments: args})
	if err != nil || r.Result.IsError {
		t.Fatalf("add_note(%s): %v %+v", text, err, r)
	}
}

func dial(port int, token, db string) (*mysql.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return mysql.Connect(ctx, &mysql.ConnParams{Host: "127.0.0.1", Port: port, Uname: "weft", Pass: token, DbName: db})
}

func column(t *testing.T, c *mysql.Conn, q string) []string {
	t.Helper()
	res, err := c.ExecuteFetch(q, 1000, false)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var out []string
	for _, r := range res.Rows {
		out = append(out, r[0].ToString())
	}
	return out
}

func errNum(err error) int {
	var se *mysql.SQLError
	if errors.As(err, &se) {
		return se.Number()
	}
	return 0
}

func TestServeMegamcpSessions(t *testing.T) {
	s := newMegamcp(t)
	ctx := context.Background()
	a, err := s.Create(ctx, megamcp.CreateOptions{Modules: []string{"hello"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Create(ctx, megamcp.CreateOptions{Modules: []string{"hello"}})
	if err != nil {
		t.Fatal(err)
	}
	addNote(t, s, a.ID, "first")

	token, err := inspect.NewToken()
	if err != nil || len(token) != 32 {
		t.Fatalf("NewToken = %q, %v", token, err)
	}
	srv, err := inspect.Serve(s, inspect.Config{Address: "127.0.0.1:0", Token: token})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	port := srv.Addr().(*net.TCPAddr).Port

	c, err := dial(port, token, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := column(t, c, "SHOW TABLES"); !slices.Equal(got, []string{"notes"}) {
		t.Errorf("SHOW TABLES = %v", got)
	}
	if got := column(t, c, "SELECT text FROM notes ORDER BY id"); !slices.Equal(got, []string{"first"}) {
		t.Errorf("notes = %v", got)
	}
	// The next statement sees the next call's commit.
	addNote(t, s, a.ID, "second")
	if got := column(t, c, "SELECT text FROM notes ORDER BY id"); !slices.Equal(got, []string{"first", "second"}) {
		t.Errorf("notes after a call = %v", got)
	}
	if got := column(t, c, "SELECT COUNT(*) FROM `"+b.ID+"`.notes"); !slices.Equal(got, []string{"0"}) {
		t.Errorf("other session's notes = %v", got)
	}
	dbs := column(t, c, "SHOW DATABASES")
	if !slices.Contains(dbs, a.ID) || !slices.Contains(dbs, b.ID) {
		t.Errorf("SHOW DATABASES = %v, want both sessions", dbs)
	}

	// Writes are refused and the session is unchanged.
	before, err := s.Current(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"INSERT INTO notes (text) VALUES ('x')", "DELETE FROM notes", "DROP TABLE notes", "CREATE TABLE t (id INT PRIMARY KEY)"} {
		if _, err := c.ExecuteFetch(q, 10, false); errNum(err) != mysql.EROptionPreventsStatement || !strings.Contains(err.Error(), "read-only") {
			t.Errorf("%s: err = %v, want read-only error", q, err)
		}
	}
	after, err := s.Current(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if after.Hash() != before.Hash() {
		t.Error("a refused statement changed the session")
	}

	// A deleted session is an unknown database; a wrong token is refused.
	if err := s.Delete(ctx, b.ID, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecuteFetch("SELECT COUNT(*) FROM `"+b.ID+"`.notes", 10, false); errNum(err) != mysql.ERBadDb {
		t.Errorf("deleted session: err = %v, want error %d", err, mysql.ERBadDb)
	}
	if _, err := dial(port, token+"x", a.ID); errNum(err) != mysql.ERAccessDeniedError {
		t.Errorf("wrong token: err = %v, want access denied", err)
	}
}

// fakeSessions serves one fixed version as session "s1".
type fakeSessions struct {
	store *state.Store
	v     *state.Version
}

func (f fakeSessions) Store() *state.Store { return f.store }
func (f fakeSessions) Sessions() []string  { return []string{"s1"} }
func (f fakeSessions) Current(_ context.Context, id string) (*state.Version, error) {
	if id != "s1" {
		return nil, errors.New("no such session")
	}
	return f.v, nil
}

func TestServeConfig(t *testing.T) {
	st := state.NewStore()
	defer st.Close()
	v, err := st.Load(context.Background(), "CREATE TABLE t (id INT PRIMARY KEY)", state.TableRows{Table: "t", Columns: []string{"id"}, Rows: [][]any{{7}}})
	if err != nil {
		t.Fatal(err)
	}
	s := fakeSessions{st, v}
	if _, err := inspect.Serve(nil, inspect.Config{Token: "t"}); err == nil {
		t.Error("nil sessions: no error")
	}
	if _, err := inspect.Serve(s, inspect.Config{Address: "127.0.0.1:0"}); err == nil || !strings.Contains(err.Error(), "Token") {
		t.Errorf("no token: err = %v", err)
	}
	if _, err := inspect.Serve(s, inspect.Config{Address: "0.0.0.0:0", Token: "t"}); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("all interfaces: err = %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := inspect.Serve(s, inspect.Config{Listener: l, Token: "t", User: "ops"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mysql.Connect(ctx, &mysql.ConnParams{Host: "127.0.0.1", Port: l.Addr().(*net.TCPAddr).Port, Uname: "ops", Pass: "t", DbName: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := column(t, c, "SELECT id FROM t"); !slices.Equal(got, []string{"7"}) {
		t.Errorf("SELECT id FROM t = %v", got)
	}
}

// TestServeHandshakeTimeoutAndConnCap: a connection that never logs in is
// closed after HandshakeTimeout; one that logged in may idle longer; a
// connection over MaxConns gets MySQL error 1040 (issue 15 item 11).
func TestServeHandshakeTimeoutAndConnCap(t *testing.T) {
	st := state.NewStore()
	defer st.Close()
	v, err := st.Load(context.Background(), "CREATE TABLE t (id INT PRIMARY KEY)", state.TableRows{Table: "t", Columns: []string{"id"}, Rows: [][]any{{7}}})
	if err != nil {
		t.Fatal(err)
	}
	const hs = 500 * time.Millisecond
	srv, err := inspect.Serve(fakeSessions{st, v}, inspect.Config{Address: "127.0.0.1:0", Token: "t", HandshakeTimeout: hs, MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	addr := srv.Addr().(*net.TCPAddr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// A logged-in client idles past the handshake timeout and goes on.
	c, err := mysql.Connect(ctx, &mysql.ConnParams{Host: "127.0.0.1", Port: addr.Port, Uname: "weft", Pass: "t", DbName: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A silent connection: greeted, then closed at the handshake timeout.
	start := time.Now()
	raw, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetReadDeadline(time.Now().Add(10 * time.Second))
	greeting := make([]byte, 4096)
	n, _ := raw.Read(greeting)
	if n < 5 || greeting[4] != 0x0a {
		t.Fatalf("greeting: % x", greeting[:n])
	}
	// Both slots are taken now: a third connection is refused with 1040.
	third, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	third.SetReadDeadline(time.Now().Add(5 * time.Second))
	b, _ := io.ReadAll(third)
	third.Close()
	if len(b) < 7 || b[4] != 0xff || b[5] != 0x10 || b[6] != 0x04 || !strings.Contains(string(b), "Too many connections") {
		t.Fatalf("third connection: % x", b)
	}
	if _, err := io.ReadAll(raw); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("silent connection: %v", err)
	}
	if el := time.Since(start); el < hs || el > hs+3*time.Second {
		t.Fatalf("silent connection closed after %v, want about %v", el, hs)
	}
	time.Sleep(hs)
	if got := column(t, c, "SELECT id FROM t"); !slices.Equal(got, []string{"7"}) {
		t.Errorf("after idling past the handshake timeout: %v", got)
	}
}
