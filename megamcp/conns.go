package megamcp

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Limits are the HTTP-level bounds of weft serve (docs/api.md, "Limits").
// The zero value of each field is its default.
type Limits struct {
	// MaxConnections bounds open HTTP connections (default 1024). When a
	// connection arrives at the bound, one is closed to make room: one
	// that never sent a request, idle the longest; else one whose request
	// body arrives slower than MinBodyRate; else a keep-alive connection
	// idle the longest (idle kinds only after MinIdleForEviction). When
	// there is none, the new connection gets "HTTP 503, code at_capacity"
	// and is closed.
	MaxConnections int
	// MinIdleForEviction: an idle connection is evicted only after this
	// long (default 1 s), so the short pauses of an active client between
	// its calls never cost it its connection.
	MinIdleForEviction time.Duration
	// ReadHeaderTimeout bounds reading a request's headers (default 10 s).
	ReadHeaderTimeout time.Duration
	// BodyTimeout bounds reading a request's body (default 30 s): a slow
	// body is cut and its connection closed.
	BodyTimeout time.Duration
	// WriteTimeout bounds writing a response other than an MCP stream
	// (default 60 s). MCP POST responses (a tool call, which may be an SSE
	// stream for its progress) and MCP GET streams are bounded instead by
	// the call timeout and by the MCP session's idle timeout.
	WriteTimeout time.Duration
	// IdleTimeout closes keep-alive connections idle this long (default
	// 60 s).
	IdleTimeout time.Duration
}

// Defaults of Limits.
const (
	DefaultMaxConnections    = 1024
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 60 * time.Second
)

func (l Limits) withDefaults() Limits {
	if l.MaxConnections <= 0 {
		l.MaxConnections = DefaultMaxConnections
	}
	if l.MinIdleForEviction <= 0 {
		l.MinIdleForEviction = time.Second
	}
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if l.BodyTimeout <= 0 {
		l.BodyTimeout = DefaultBodyTimeout
	}
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = DefaultWriteTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	return l
}

// HTTPServer returns an *http.Server for h under lim and the listener to
// serve it on (ln wrapped by the connection bound): srv.Serve(l).
//
// Server-wide ReadTimeout and WriteTimeout are not set: MCP streams
// (Streamable HTTP GET, SSE responses) are long-lived by design. The body
// and write deadlines are set per request instead (see Limits).
func (s *Server) HTTPServer(h http.Handler, ln net.Listener, lim Limits) (*http.Server, net.Listener) {
	lim = lim.withDefaults()
	cl := &connLimiter{Listener: ln, lim: lim, met: s.met, conns: map[net.Conn]*connEntry{}, refusing: make(chan struct{}, MaxRefusing)}
	srv := &http.Server{
		Handler:           deadlines(h, lim),
		ReadHeaderTimeout: lim.ReadHeaderTimeout,
		IdleTimeout:       lim.IdleTimeout,
		ConnState:         cl.state,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			cl.mu.Lock()
			e := cl.conns[c]
			cl.mu.Unlock()
			if e == nil {
				return ctx
			}
			return context.WithValue(ctx, connKey{}, e)
		},
	}
	return srv, cl
}

// deadlines sets each request's body deadline and, outside MCP, its write
// deadline.
func deadlines(h http.Handler, lim Limits) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		now := time.Now()
		if r.Body != nil && r.Body != http.NoBody {
			_ = rc.SetReadDeadline(now.Add(lim.BodyTimeout))
			if e, ok := r.Context().Value(connKey{}).(*connEntry); ok {
				e.bodyBytes.Store(0)
				e.bodyStart.Store(now.UnixNano())
				defer e.bodyStart.Store(0)
				r.Body = &bodyMeter{r.Body, e}
			}
		}
		if !isMCPPath(r.URL.Path) {
			_ = rc.SetWriteDeadline(now.Add(lim.WriteTimeout))
		}
		h.ServeHTTP(w, r)
	})
}

func isMCPPath(p string) bool {
	return p == "/mcp" || len(p) > len("/mcp/") && p[:len("/mcp/")] == "/mcp/"
}

// connLimiter bounds the open connections of an http.Server: Accept
// admits a connection while under the bound, else evicts the longest-idle
// one, else refuses with a 503.
type connLimiter struct {
	net.Listener
	lim Limits
	met *Metrics

	mu    sync.Mutex
	conns map[net.Conn]*connEntry

	refusing chan struct{} // refusals being written (at most MaxRefusing)
}

// MaxRefusing bounds the refusals (503 at_capacity, then close) being
// written at once; over it a connection is closed without a response.
// Each holds its descriptor for at most one second.
const MaxRefusing = 64

type connEntry struct {
	state   http.ConnState
	since   time.Time // of the state
	evicted bool
	// A request body being read: since when and how many bytes so far
	// (set by the handler wrapper, read by admit).
	bodyStart atomic.Int64 // Unix ns; 0: no body being read
	bodyBytes atomic.Int64
}

// MinBodyRate is the slowest a request body may arrive (bytes per second,
// averaged from its start) before its connection may be evicted to make
// room at the connection bound; bodies get one second before it applies.
const MinBodyRate = 1024

type connKey struct{}

// slowBody reports whether e is reading a body slower than MinBodyRate,
// and how slow (bytes per second).
func (e *connEntry) slowBody(now time.Time) (float64, bool) {
	st := e.bodyStart.Load()
	if st == 0 {
		return 0, false
	}
	el := now.Sub(time.Unix(0, st)).Seconds()
	if el < 1 {
		return 0, false
	}
	rate := float64(e.bodyBytes.Load()) / el
	return rate, rate < MinBodyRate
}

// bodyMeter counts a request body's bytes into its connection's entry.
type bodyMeter struct {
	io.ReadCloser
	e *connEntry
}

func (b *bodyMeter) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.e.bodyBytes.Add(int64(n))
	if err != nil {
		b.e.bodyStart.Store(0)
	}
	return n, err
}

// refusalBody and refusal are the response of a connection over the
// bound: a complete HTTP/1.1 response, then the connection is closed.
const refusalBody = `{"error":{"code":"at_capacity","message":"too many open connections: the server is at its connection limit; retry"}}` + "\n"

var refusal = fmt.Sprintf("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(refusalBody), refusalBody)

func (c *connLimiter) Accept() (net.Conn, error) {
	for {
		conn, err := c.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if c.admit(conn) {
			return conn, nil
		}
		if c.met != nil {
			c.met.connsRefused.WithLabelValues("at_capacity").Inc()
		}
		select {
		case c.refusing <- struct{}{}:
		default:
			// Too many refusals in flight: close without a response
			// rather than hold another descriptor.
			conn.Close()
			continue
		}
		go func() {
			defer func() { <-c.refusing }()
			_ = conn.SetDeadline(time.Now().Add(time.Second))
			_, _ = conn.Write([]byte(refusal))
			if tc, ok := conn.(*net.TCPConn); ok {
				_ = tc.CloseWrite()
			}
			// Drain what the client sent so the close does not reset the
			// response away.
			buf := make([]byte, 4096)
			for {
				if _, err := conn.Read(buf); err != nil {
					break
				}
			}
			conn.Close()
		}()
	}
}

// admit registers conn if there is room (evicting an idle connection if
// needed) and reports whether it was admitted.
func (c *connLimiter) admit(conn net.Conn) bool {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	// Victims, in order: a connection that never sent a request, idle the
	// longest; one whose body arrives slower than MinBodyRate, slowest
	// first; a keep-alive connection idle the longest. Each idle kind only
	// after MinIdleForEviction.
	live := 0
	var victim net.Conn
	rank, key := 4, 0.0 // lower rank wins; within a rank, lower key
	for k, e := range c.conns {
		if e.evicted {
			continue
		}
		live++
		r, kv := 4, 0.0
		idle := now.Sub(e.since) >= c.lim.MinIdleForEviction
		if rate, slow := e.slowBody(now); slow {
			r, kv = 2, rate
		} else if e.state == http.StateNew && idle {
			r, kv = 1, float64(e.since.UnixNano())
		} else if e.state == http.StateIdle && idle {
			r, kv = 3, float64(e.since.UnixNano())
		}
		if r < rank || r == rank && kv < key {
			victim, rank, key = k, r, kv
		}
	}
	if live >= c.lim.MaxConnections {
		if victim == nil {
			return false
		}
		c.conns[victim].evicted = true
		victim.Close()
		if c.met != nil {
			reason := "evicted_idle"
			if rank == 2 {
				reason = "evicted_slow_body"
			}
			c.met.connsRefused.WithLabelValues(reason).Inc()
		}
	}
	c.conns[conn] = &connEntry{state: http.StateNew, since: now}
	if c.met != nil {
		c.met.connections.Set(float64(len(c.conns)))
	}
	return true
}

// state is the http.Server's ConnState hook.
func (c *connLimiter) state(conn net.Conn, st http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch st {
	case http.StateClosed, http.StateHijacked:
		delete(c.conns, conn)
	default:
		if e := c.conns[conn]; e != nil {
			e.state, e.since = st, time.Now()
		}
	}
	if c.met != nil {
		c.met.connections.Set(float64(len(c.conns)))
	}
}

// open reports the connections the limiter holds (tests).
func (c *connLimiter) open() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.conns)
}
