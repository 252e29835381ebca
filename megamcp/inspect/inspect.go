package inspect

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"

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
}

// DefaultAddress is where Serve listens without Config.Address.
const DefaultAddress = "127.0.0.1:3306"

// Serve starts a read-only MySQL server over the sessions of s. Close the
// returned server to stop it; that never affects the sessions.
func Serve(s Sessions, cfg Config) (*state.MySQLServer, error) {
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
	return s.Store().NewMySQLServer(state.MySQLConfig{
		Address:     addr,
		Listener:    cfg.Listener,
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
