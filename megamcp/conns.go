package megamcp

import (
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Limits are the HTTP-level bounds of weft serve (docs/api.md, "Limits").
// The zero value of each field is its default.
type Limits struct {
	// MaxConnections bounds open HTTP connections (default 1024). When a
	// connection arrives at the bound, the connection idle the longest
	// (keep-alive between requests, or opened with no request yet) for at
	// least MinIdleForEviction is closed to make room; when there is none,
	// the new connection gets "HTTP 503, code at_capacity" and is closed.
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
	cl := &connLimiter{Listener: ln, lim: lim, met: s.met, conns: map[net.Conn]*connEntry{}}
	srv := &http.Server{
		Handler:           deadlines(h, lim),
		ReadHeaderTimeout: lim.ReadHeaderTimeout,
		IdleTimeout:       lim.IdleTimeout,
		ConnState:         cl.state,
		ErrorLog:          nil,
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
}

type connEntry struct {
	state   http.ConnState
	since   time.Time // of the state
	evicted bool
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
		go func() {
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
	live := 0
	var victim net.Conn
	var oldest time.Time
	for k, e := range c.conns {
		if e.evicted {
			continue
		}
		live++
		if (e.state == http.StateIdle || e.state == http.StateNew) && now.Sub(e.since) >= c.lim.MinIdleForEviction &&
			(victim == nil || e.since.Before(oldest)) {
			victim, oldest = k, e.since
		}
	}
	if live >= c.lim.MaxConnections {
		if victim == nil {
			return false
		}
		c.conns[victim].evicted = true
		victim.Close()
		if c.met != nil {
			c.met.connsRefused.WithLabelValues("evicted_idle").Inc()
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
