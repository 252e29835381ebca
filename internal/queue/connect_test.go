package queue

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the NATS client's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A server that is not up: Connect says it is waiting (a worker must not
// look alive and idle) and gives up after Options.Wait with the URL and
// the client's error.
func TestConnectWaitingIsLogged(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "nats://" + ln.Addr().String()
	ln.Close() // nothing listens there now

	var logs lockedBuffer
	start := time.Now()
	q, err := Connect(context.Background(), url, Options{Wait: 700 * time.Millisecond, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err == nil {
		q.Close()
		t.Fatal("Connect to a closed port succeeded")
	}
	if !strings.Contains(err.Error(), "queue: connect "+url) {
		t.Errorf("error = %q, want it to name %s", err, url)
	}
	if d := time.Since(start); d < 700*time.Millisecond {
		t.Errorf("Connect gave up after %v, before Options.Wait (700ms)", d)
	}
	out := logs.String()
	if n := strings.Count(out, "queue: waiting for the NATS server"); n != 1 {
		t.Errorf("waiting warnings = %d, want 1 within the first 10 s; log:\n%s", n, out)
	}
	if !strings.Contains(out, "url="+url) {
		t.Errorf("the warning does not name the URL; log:\n%s", out)
	}
}
