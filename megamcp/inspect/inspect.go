package inspect

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/weft-dev/weft/core/state"
)

// Sessions is what Serve needs of a megamcp server; *megamcp.Server
// provides it.
type Sessions interface {
	// Store is the store the sessions' versions belong to.
	Store() *state.Store
	// Current returns a session's current committed state; it waits for a
	// call in progress to finish (or for ctx to end).
	Current(ctx context.Context, id string) (*state.Version, error)
	// Sessions lists the live session ids.
	Sessions() []string
}

// Config configures the inspection server.
type Config struct {
	// Address to listen on (TCP; default "127.0.0.1:3306"), or Listener to
	// serve on (the server then owns it).
	Address  string
	Listener net.Listener
	// AllowRemote permits a non-loopback address.
	AllowRemote bool
	// User is the MySQL user name (default "weft"); Token its password
	// (required; see NewToken).
	User  string
	Token string
	// HandshakeTimeout bounds the MySQL handshake of each connection, from
	// accept to login (default DefaultHandshakeTimeout): a client that
	// connects and sends nothing is closed.
	HandshakeTimeout time.Duration
	// MaxConns bounds open connections (default DefaultMaxConns); a client
	// over it gets MySQL error 1040 "Too many connections".
	MaxConns int
}

// DefaultAddress is where Serve listens without Config.Address.
const DefaultAddress = "127.0.0.1:3306"

// Serve starts a read-only MySQL server over the sessions of s. Close the
// returned server to stop it; that never affects the sessions.
func Serve(s Sessions, cfg Config) (*MySQLServer, error) {
	if s == nil {
		return nil, errors.New("inspect: no sessions")
	}
	if cfg.Token == "" {
		return nil, errors.New("inspect: Config.Token is required")
	}
	addr := cfg.Address
	if addr == "" && cfg.Listener == nil {
		addr = DefaultAddress
	}
	ln := cfg.Listener
	if ln == nil {
		if !cfg.AllowRemote && !loopback(addr) {
			return nil, fmt.Errorf("inspect: address %q is not loopback (set AllowRemote to serve it)", addr)
		}
		var err error
		if ln, err = net.Listen("tcp", addr); err != nil {
			return nil, fmt.Errorf("inspect: %w", err)
		}
	}
	if cfg.HandshakeTimeout <= 0 {
		cfg.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	lim := &limitListener{Listener: ln, max: cfg.MaxConns, handshake: cfg.HandshakeTimeout}
	ms, err := NewMySQLServer(s.Store(), MySQLConfig{
		Listener:    lim,
		AllowRemote: cfg.AllowRemote,
		User:        cfg.User,
		Password:    cfg.Token,
		Resolve: func(db string) (*state.Version, error) {
			// The wire server resolves a database per statement, with no
			// context of its own; a session's lock is held at most one
			// call timeout.
			return s.Current(context.Background(), db)
		},
		List: s.Sessions,
	})
	if err != nil && cfg.Listener == nil {
		ln.Close()
	}
	return ms, err
}

// loopback reports whether addr's host is a loopback name or address
// (checked before binding, so that a public address is never bound).
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// NewToken returns a random token for Config.Token: 128 bits from
// crypto/rand, hex encoded.
func NewToken() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}
