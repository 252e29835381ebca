package queue

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ErrBadURL is the error (errors.Is) of Open for a queue URL it cannot
// read: an "embedded://" one without HOST:PORT or with a port outside
// 0..65535.
var ErrBadURL = errors.New("bad queue URL")

// OpenOptions configure Open: the connection's Options, and where an
// embedded server keeps its JetStream store.
type OpenOptions struct {
	Options
	// StoreDir is the embedded server's store ("" = the user cache
	// directory's weft/nats). Unused for nats:// URLs.
	StoreDir string
}

// IsEmbedded reports whether url names an embedded server ("embedded" or
// "embedded://..."), the URL form a worker cannot use.
func IsEmbedded(url string) bool { return strings.HasPrefix(url, "embedded") }

// ParseEmbedded reads an embedded queue URL: "embedded" is 127.0.0.1:4222,
// "embedded://HOST:PORT" that address (PORT 0 = 4222). ok is false for
// any other URL (nats://...); err wraps ErrBadURL for a malformed one.
func ParseEmbedded(url string) (o EmbeddedOptions, ok bool, err error) {
	if url == "embedded" {
		return EmbeddedOptions{Host: "127.0.0.1", Port: 4222}, true, nil
	}
	rest, found := strings.CutPrefix(url, "embedded://")
	if !found {
		return EmbeddedOptions{}, false, nil
	}
	h, p, found := strings.Cut(rest, ":")
	if !found {
		return EmbeddedOptions{}, true, fmt.Errorf("%w %q: want embedded://HOST:PORT", ErrBadURL, url)
	}
	n, perr := strconv.Atoi(p)
	if perr != nil || n < 0 || n > 65535 {
		return EmbeddedOptions{}, true, fmt.Errorf("%w %q: bad port %q", ErrBadURL, url, p)
	}
	return EmbeddedOptions{Host: h, Port: n}, true, nil
}

// Open opens the queue at url. A nats://HOST:PORT URL is connected to (as
// Connect, waiting up to o.Wait); an embedded URL (ParseEmbedded) first
// starts a NATS server with JetStream on that address and o.StoreDir, then
// connects to it, and returns the server too (nil for nats:// URLs). The
// caller closes the queue before shutting the server down. On error
// nothing is left running: a server Open started is shut down again.
func Open(ctx context.Context, url string, o OpenOptions) (*Queue, *Embedded, error) {
	eo, embedded, err := ParseEmbedded(url)
	if err != nil {
		return nil, nil, err
	}
	var e *Embedded
	if embedded {
		eo.StoreDir = o.StoreDir
		if eo.StoreDir == "" {
			c, err := os.UserCacheDir()
			if err != nil {
				return nil, nil, fmt.Errorf("queue: embedded NATS: no store directory (give one: StoreDir, weft --queue-store): %w", err)
			}
			eo.StoreDir = filepath.Join(c, "weft", "nats")
		}
		if e, err = StartEmbedded(eo); err != nil {
			return nil, nil, err
		}
		url = e.URL()
	}
	q, err := Connect(ctx, url, o.Options)
	if err != nil {
		if e != nil {
			e.Shutdown()
		}
		return nil, nil, err
	}
	return q, e, nil
}

// StoreDir is the store directory the server was started on.
func (e *Embedded) StoreDir() string { return e.store }
