package megamcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxStdioLine bounds one JSON-RPC message on the stdio transport (the
// largest tool-call arguments, MaxArgumentsBytes, plus room for the
// envelope): a longer line is skipped without being buffered and answered
// with -32600.
const MaxStdioLine = MaxArgumentsBytes + 64<<10

// StdioTransport is the MCP stdio transport of weft mcp: newline-delimited
// JSON-RPC 2.0 on in and out, like the MCP Go SDK's mcp.StdioTransport,
// which ends the session on the first line it cannot decode. This one
// answers a bad line and reads on:
//
//   - not JSON, or invalid UTF-8: -32700 (parse error), id null;
//   - JSON that is not a request or response object ([] or another
//     batch, null, a number, "jsonrpc" other than "2.0", a bad id): -32600
//     (invalid request), with the line's id when it has a usable one;
//   - a line over MaxStdioLine bytes: -32600, id null, the line skipped.
//
// At the end of in (EOF), it stops reading but lets the requests already
// read finish: Read reports io.EOF only once every one of them has been
// answered, so a caller that writes the session's state after the server
// returns (weft mcp --state-out) includes their calls.
type StdioTransport struct {
	In  io.Reader
	Out io.Writer
	// DrainTimeout bounds the wait at EOF for requests in flight
	// (default 60 s): a request the server never answers does not keep
	// the process alive.
	DrainTimeout time.Duration
}

// Connect implements mcp.Transport.
func (t *StdioTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c := &stdioConn{r: bufio.NewReaderSize(t.In, 64<<10), w: t.Out, pending: map[string]bool{}, closed: make(chan struct{}), drainTimeout: t.DrainTimeout}
	if c.drainTimeout <= 0 {
		c.drainTimeout = 60 * time.Second
	}
	c.idle = sync.NewCond(&c.mu)
	return c, nil
}

type stdioConn struct {
	r *bufio.Reader

	wmu sync.Mutex // one message written at a time
	w   io.Writer

	mu      sync.Mutex
	idle    *sync.Cond      // signalled when pending shrinks or on close
	pending map[string]bool // ids of requests read and not yet answered
	closed  chan struct{}
	once    sync.Once

	drainTimeout time.Duration
}

func (c *stdioConn) SessionID() string { return "" }

func (c *stdioConn) Close() error {
	c.once.Do(func() {
		close(c.closed)
		c.mu.Lock()
		c.idle.Broadcast()
		c.mu.Unlock()
	})
	return nil
}

// Read returns the next valid message; invalid lines are answered here
// and skipped.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		line, tooLong, err := c.readLine()
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			msg, code, id, why := decodeLine(line, tooLong)
			if msg != nil {
				if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
					c.mu.Lock()
					c.pending[idKey(req.ID)] = true
					c.mu.Unlock()
				}
				return msg, nil
			}
			if werr := c.writeRaw(errorLine(id, code, why)); werr != nil {
				return nil, werr
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, c.drain(ctx)
			}
			return nil, err
		}
	}
}

// drain waits until every request read has been answered (or the
// connection closes, or ctx ends), then reports io.EOF.
func (c *stdioConn) drain(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.drainTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, func() {
		c.mu.Lock()
		c.idle.Broadcast()
		c.mu.Unlock()
	})
	defer stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for len(c.pending) > 0 && ctx.Err() == nil {
		select {
		case <-c.closed:
			return io.EOF
		default:
		}
		c.idle.Wait()
	}
	return io.EOF
}

// readLine reads one line without its newline; a line over MaxStdioLine is
// consumed to its end and reported as tooLong (with no bytes).
func (c *stdioConn) readLine() (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		frag, err := c.r.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(frag) > MaxStdioLine+1 {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, frag...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSuffix(buf, []byte("\n")), tooLong, err
	}
}

// decodeLine decodes one line into a message, or says which error answers
// it (code, the id to answer with, why).
func decodeLine(line []byte, tooLong bool) (jsonrpc.Message, int64, any, string) {
	if tooLong {
		return nil, jsonrpc.CodeInvalidRequest, nil, fmt.Sprintf("message over %d bytes", MaxStdioLine)
	}
	if !utf8.Valid(line) {
		return nil, jsonrpc.CodeParseError, nil, "invalid UTF-8"
	}
	if !json.Valid(line) {
		return nil, jsonrpc.CodeParseError, nil, "not JSON"
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(line, &env); err != nil || env == nil {
		return nil, jsonrpc.CodeInvalidRequest, nil, "a message must be a JSON-RPC 2.0 request or response object (batches are not supported)"
	}
	var id any
	if raw, ok := env["id"]; ok {
		var v any
		if json.Unmarshal(raw, &v) == nil {
			switch v.(type) {
			case string, float64:
				id = v
			}
		}
	}
	if v := string(env["jsonrpc"]); v != `"2.0"` {
		return nil, jsonrpc.CodeInvalidRequest, id, fmt.Sprintf(`"jsonrpc" is %s, want "2.0"`, cmpOr(v, "missing"))
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, jsonrpc.CodeInvalidRequest, id, err.Error()
	}
	return msg, 0, nil, ""
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// errorLine is a JSON-RPC error response.
func errorLine(id any, code int64, msg string) []byte {
	b, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return b
}

func idKey(id jsonrpc.ID) string { b, _ := json.Marshal(id.Raw()); return string(b) }

func (c *stdioConn) writeRaw(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(append(b, '\n'))
	return err
}

// Write implements mcp.Connection.
func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	err = c.writeRaw(b)
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.pending, idKey(resp.ID))
		c.idle.Broadcast()
		c.mu.Unlock()
	}
	return err
}
