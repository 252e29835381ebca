package queue

import (
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// EmbeddedOptions configure StartEmbedded.
type EmbeddedOptions struct {
	// Host to listen on ("" = 127.0.0.1).
	Host string
	// Port to listen on: 0 = 4222 (NATS's default), -1 = a free port.
	Port int
	// StoreDir is JetStream's file store (required): a server restarted
	// on the same directory has every stream, consumer and pending job.
	StoreDir string
}

// Embedded is a NATS server with JetStream running in this process.
type Embedded struct {
	s     *server.Server
	store string
}

// StartEmbedded starts a NATS server with JetStream on o's address and
// store, and returns once it accepts connections (at most 10 s).
func StartEmbedded(o EmbeddedOptions) (*Embedded, error) {
	if o.StoreDir == "" {
		return nil, errors.New("queue: embedded NATS needs a store directory")
	}
	host := o.Host
	if host == "" {
		host = "127.0.0.1"
	}
	port := o.Port
	if port == 0 {
		port = 4222
	}
	s, err := server.NewServer(&server.Options{
		Host: host, Port: port, JetStream: true, StoreDir: o.StoreDir,
		NoSigs: true, NoLog: true, ServerName: "weft-embedded",
	})
	if err != nil {
		return nil, fmt.Errorf("queue: embedded NATS: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, fmt.Errorf("queue: embedded NATS on %s:%d did not start within 10s", host, port)
	}
	return &Embedded{s: s, store: o.StoreDir}, nil
}

// URL is the server's client URL, "nats://127.0.0.1:PORT".
func (e *Embedded) URL() string { return e.s.ClientURL() }

// Shutdown stops the server and waits for it.
func (e *Embedded) Shutdown() {
	e.s.Shutdown()
	e.s.WaitForShutdown()
}
