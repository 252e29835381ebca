package queue

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestParseEmbedded(t *testing.T) {
	for _, tt := range []struct {
		url      string
		host     string
		port     int
		ok, bad  bool
		embedded bool
	}{
		{url: "embedded", host: "127.0.0.1", port: 4222, ok: true, embedded: true},
		{url: "embedded://0.0.0.0:4333", host: "0.0.0.0", port: 4333, ok: true, embedded: true},
		{url: "embedded://localhost:0", host: "localhost", port: 0, ok: true, embedded: true},
		{url: "embedded://localhost", ok: true, bad: true, embedded: true},
		{url: "embedded://h:65536", ok: true, bad: true, embedded: true},
		{url: "embedded://h:x", ok: true, bad: true, embedded: true},
		{url: "nats://127.0.0.1:4222"},
	} {
		o, ok, err := ParseEmbedded(tt.url)
		if ok != tt.ok || (err != nil) != tt.bad || (err != nil && !errors.Is(err, ErrBadURL)) {
			t.Errorf("ParseEmbedded(%q) = %+v, %v, %v", tt.url, o, ok, err)
			continue
		}
		if !tt.bad && (o.Host != tt.host || o.Port != tt.port) {
			t.Errorf("ParseEmbedded(%q) = %s:%d, want %s:%d", tt.url, o.Host, o.Port, tt.host, tt.port)
		}
		if IsEmbedded(tt.url) != tt.embedded {
			t.Errorf("IsEmbedded(%q) = %v", tt.url, !tt.embedded)
		}
	}
}

// freePort is a TCP port nothing listens on (just now).
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Open of an embedded URL starts the server on that address and store and
// connects to it (the streams exist in the store); Open of its nats:// URL
// only connects, returning no server.
func TestOpenEmbeddedThenNATS(t *testing.T) {
	ctx := context.Background()
	store := t.TempDir()
	port := freePort(t)
	q, e, err := Open(ctx, "embedded://127.0.0.1:"+strconv.Itoa(port), OpenOptions{StoreDir: store})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Shutdown()
	defer q.Close()
	if e == nil || e.URL() != "nats://127.0.0.1:"+strconv.Itoa(port) || e.StoreDir() != store {
		t.Fatalf("embedded server %v", e)
	}
	for _, s := range []string{JobsStream, ResultsStream} {
		if _, err := os.Stat(filepath.Join(store, "jetstream", "$G", "streams", s)); err != nil {
			t.Errorf("stream %s not in the store: %v", s, err)
		}
	}
	q2, e2, err := Open(ctx, e.URL(), OpenOptions{})
	if err != nil || e2 != nil {
		t.Fatalf("Open(%s) = server %v, %v", e.URL(), e2, err)
	}
	q2.Close()
}

// A bad URL and an address already taken are errors that leave nothing
// running: the taken port still belongs to its listener, and a later Open
// on a free port works.
func TestOpenErrorsLeaveNothingRunning(t *testing.T) {
	ctx := context.Background()
	if q, e, err := Open(ctx, "embedded://127.0.0.1", OpenOptions{StoreDir: t.TempDir()}); !errors.Is(err, ErrBadURL) || q != nil || e != nil {
		t.Fatalf("Open(bad URL) = %v, %v, %v", q, e, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().(*net.TCPAddr).Port
	store := t.TempDir()
	if q, e, err := Open(ctx, "embedded://127.0.0.1:"+strconv.Itoa(taken), OpenOptions{StoreDir: store}); err == nil || q != nil || e != nil {
		t.Fatalf("Open on a taken port = %v, %v, %v", q, e, err)
	}
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("the taken port's listener is gone: %v", err)
	}
	c.Close()
	q, e, err := Open(ctx, "embedded://127.0.0.1:"+strconv.Itoa(freePort(t)), OpenOptions{StoreDir: store})
	if err != nil {
		t.Fatalf("Open after a failed one: %v", err)
	}
	q.Close()
	e.Shutdown()
}
