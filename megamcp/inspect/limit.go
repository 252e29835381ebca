package inspect

import (
	"net"
	"sync"
	"time"
)

// Defaults of Config's connection bounds.
const (
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultMaxConns         = 64
)

// limitListener bounds the inspection server's connections: at most max
// open (more are answered with MySQL error 1040 "Too many connections" and
// closed), and each must finish the MySQL handshake (greeting, login, the
// server's OK) within the handshake timeout, after which the connection
// has no deadline (an interactive client may idle).
type limitListener struct {
	net.Listener
	max       int
	handshake time.Duration

	mu   sync.Mutex
	open int
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		full := l.open >= l.max
		if !full {
			l.open++
		}
		l.mu.Unlock()
		if full {
			go refuseMySQL(c)
			continue
		}
		_ = c.SetDeadline(time.Now().Add(l.handshake))
		return &handshakeConn{Conn: c, l: l}, nil
	}
}

// tooManyConns is the MySQL ERR packet a server sends instead of its
// greeting when it is full: error 1040, as MySQL itself does.
var tooManyConns = func() []byte {
	payload := append([]byte{0xff, 0x10, 0x04}, "Too many connections (weft inspection server)"...)
	return append([]byte{byte(len(payload)), byte(len(payload) >> 8), byte(len(payload) >> 16), 0}, payload...)
}()

func refuseMySQL(c net.Conn) {
	_ = c.SetDeadline(time.Now().Add(time.Second))
	_, _ = c.Write(tooManyConns)
	c.Close()
}

// handshakeConn clears its deadline once the server has written the OK
// packet that ends the handshake: it follows the MySQL packets the server
// writes (3-byte little-endian length, sequence id, payload) until one
// whose payload starts with 0x00 (OK; the greeting starts with 0x0a, an
// auth switch with 0xfe, more auth data with 0x01).
type handshakeConn struct {
	net.Conn
	l *limitListener

	mu     sync.Mutex
	done   bool
	hdr    [4]byte
	nhdr   int
	remain int // payload bytes of the current packet still to skip
	first  bool
	closed bool
}

func (c *handshakeConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if !c.done && c.scan(p) {
		c.done = true
		_ = c.Conn.SetDeadline(time.Time{})
	}
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// scan follows the packets in p; it reports whether an OK packet began.
func (c *handshakeConn) scan(p []byte) bool {
	for len(p) > 0 {
		if c.remain > 0 {
			if c.first {
				c.first = false
				if p[0] == 0x00 {
					return true
				}
			}
			n := min(c.remain, len(p))
			c.remain -= n
			p = p[n:]
			continue
		}
		n := copy(c.hdr[c.nhdr:], p)
		c.nhdr += n
		p = p[n:]
		if c.nhdr == 4 {
			c.nhdr = 0
			c.remain = int(c.hdr[0]) | int(c.hdr[1])<<8 | int(c.hdr[2])<<16
			c.first = true
		}
	}
	return false
}

func (c *handshakeConn) Close() error {
	c.mu.Lock()
	already := c.closed
	c.closed = true
	c.mu.Unlock()
	if !already {
		c.l.mu.Lock()
		c.l.open--
		c.l.mu.Unlock()
	}
	return c.Conn.Close()
}
