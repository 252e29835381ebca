package state

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
)

// Sandbox is what the statements run with one context may do beyond plain
// reads and writes of the workspace's tables. A tool call binds one (see
// WithSandbox) for all its statements: the module's table policy, the
// session's virtual clock and seeded random stream, and the call's resource
// budget. Statements run without a Sandbox (state loading, verification,
// inspection, tests) are unrestricted and use the engine's own clock and
// randomness.
//
// A Sandbox is used by the statements of one call at a time; its counters
// are safe for concurrent use.
type Sandbox struct {
	// Tables is the table policy; nil allows every table.
	Tables *TablePolicy
	// Now is the virtual clock read by NOW(), CURRENT_TIMESTAMP, SYSDATE(),
	// UTC_TIMESTAMP(), CURDATE(), CURTIME(), UNIX_TIMESTAMP() and column
	// defaults that use them, once per statement (every call of NOW() in
	// a statement returns the same time); nil reads the Unix epoch.
	Now func() time.Time
	// Rand is the seeded random stream read by RAND(), UUID(),
	// UUID_SHORT() and RANDOM_BYTES() (and defaults that use them); nil
	// makes those fail with ErrDenied.
	Rand io.Reader
	// Limits bounds what the statements may make the host compute; zero
	// fields take the Default* values.
	Limits Limits
	// Names maps a table name as the statements write it (lower case) to
	// the name the table is stored under in the workspace: a module of a
	// composed lifecycle group keeps its own unqualified names while its
	// tables are stored as "<namespace>__<table>" (NamespacedTable,
	// docs/design/026-composition.md). Names not in the map resolve as
	// written; the table policy is checked on the name as written. nil:
	// every name resolves as written.
	Names map[string]string

	rows     atomic.Int64 // rows read from tables
	computed atomic.Int64 // bytes computed by bounded functions
	ticks    atomic.Int64 // evaluations since the last deadline check
	mu       sync.Mutex
	exceeded error // the first limit hit, sticky
	randMu   sync.Mutex
}

// Limits of a Sandbox (docs/abi.md, "SQL limits").
type Limits struct {
	// MaxValueBytes bounds one string, binary or JSON value computed by a
	// function (REPEAT, LPAD, CONCAT, ...). Default DefaultMaxValueBytes.
	MaxValueBytes int64
	// MaxComputedBytes bounds the bytes of all such values computed over
	// the Sandbox's life (one tool call). Default DefaultMaxComputedBytes.
	MaxComputedBytes int64
	// MaxRowsRead bounds the rows read from tables over the Sandbox's life
	// (a cartesian join reads the inner table once per outer row). Default
	// DefaultMaxRowsRead.
	MaxRowsRead int64
	// MaxResultBytes bounds the approximate size of one statement's
	// materialized result. Default DefaultMaxResultBytes.
	MaxResultBytes int64
}

// Default limits of a Sandbox.
const (
	DefaultMaxValueBytes    = 16 << 20
	DefaultMaxComputedBytes = 256 << 20
	DefaultMaxRowsRead      = 1_000_000
	DefaultMaxResultBytes   = 64 << 20
)

func (s *Sandbox) limit(v, def int64) int64 {
	if v > 0 {
		return v
	}
	return def
}

// Exceeded returns the first resource limit the Sandbox's statements hit
// (an *Error of kind ErrResourceLimit), or nil. It stays set after the
// statement failed, so a caller can tell a limit from a guest that
// swallowed the SQL error.
func (s *Sandbox) Exceeded() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exceeded
}

// RowsRead returns the rows the Sandbox's statements read from tables.
func (s *Sandbox) RowsRead() int64 { return s.rows.Load() }

func (s *Sandbox) exceed(what string, n, max int64) error {
	err := &Error{Kind: ErrResourceLimit, Err: fmt.Errorf("%s: %d exceeds the per-call limit of %d", what, n, max)}
	s.mu.Lock()
	if s.exceeded == nil {
		s.exceeded = err
	}
	s.mu.Unlock()
	return err
}

// chargeValue accounts for one computed value of n bytes.
func (s *Sandbox) chargeValue(fn string, n int64) error {
	if max := s.limit(s.Limits.MaxValueBytes, DefaultMaxValueBytes); n > max {
		return s.exceed(strings.ToUpper(fn)+" result bytes", n, max)
	}
	total := s.computed.Add(n)
	if max := s.limit(s.Limits.MaxComputedBytes, DefaultMaxComputedBytes); total > max {
		return s.exceed("bytes computed by SQL functions", total, max)
	}
	return nil
}

// chargeRow accounts for one row read from a table and checks the deadline
// every 256 rows.
func (s *Sandbox) chargeRow(ctx context.Context) error {
	n := s.rows.Add(1)
	if max := s.limit(s.Limits.MaxRowsRead, DefaultMaxRowsRead); n > max {
		return s.exceed("rows read", n, max)
	}
	if n&255 == 0 {
		return ctx.Err()
	}
	return nil
}

// tick checks the deadline every 64 bounded-function evaluations.
func (s *Sandbox) tick(ctx context.Context) error {
	if s.ticks.Add(1)&63 == 0 {
		return ctx.Err()
	}
	return nil
}

// randomBytes fills p from the seeded stream.
func (s *Sandbox) randomBytes(fn string, p []byte) error {
	if s.Rand == nil {
		return denied(fmt.Errorf("%s() reads the session's seeded random stream and none is bound to this statement", strings.ToUpper(fn)))
	}
	s.randMu.Lock()
	defer s.randMu.Unlock()
	_, err := io.ReadFull(s.Rand, p)
	return err
}

func (s *Sandbox) randomUint64(fn string) (uint64, error) {
	var b [8]byte
	if err := s.randomBytes(fn, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(b[:]), nil
}

// TablePolicy is a module's table policy: Owns may be read and written,
// Reads only read. Names compare case-insensitively (as the engine resolves
// them). It is checked where the engine resolves a name to a table of the
// workspace (so CTE and derived-table names, which the engine resolves by
// scope first, never count) and where rows are written.
type TablePolicy struct {
	owns, reads map[string]bool
}

// NewTablePolicy returns the policy of a module that owns owns and reads
// reads.
func NewTablePolicy(owns, reads []string) *TablePolicy {
	p := &TablePolicy{owns: map[string]bool{}, reads: map[string]bool{}}
	for _, n := range owns {
		p.owns[strings.ToLower(n)] = true
	}
	for _, n := range reads {
		p.reads[strings.ToLower(n)] = true
	}
	return p
}

// CanRead reports whether the policy lets a statement read table name.
func (p *TablePolicy) CanRead(name string) bool {
	if p == nil {
		return true
	}
	l := strings.ToLower(name)
	return p.owns[l] || p.reads[l]
}

// CanWrite reports whether the policy lets a statement write table name.
func (p *TablePolicy) CanWrite(name string) bool {
	return p == nil || p.owns[strings.ToLower(name)]
}

func (p *TablePolicy) readErr(name string) error {
	return &Error{Kind: ErrDenied, Table: name, Err: fmt.Errorf("table %q is not declared by this module", name)}
}

func (p *TablePolicy) writeErr(name string) error {
	if p.CanRead(name) {
		return &Error{Kind: ErrDenied, Table: name, Err: fmt.Errorf("table %q is read-only for this module", name)}
	}
	return p.readErr(name)
}

// resolve returns the stored name of table name as a statement under s
// writes it.
func (s *Sandbox) resolve(name string) string {
	if s == nil || s.Names == nil {
		return name
	}
	if n, ok := s.Names[strings.ToLower(name)]; ok {
		return n
	}
	return name
}

// resolveNone reports whether every name resolves as written (the fast
// path's plans are keyed by statement text alone).
func (s *Sandbox) resolveNone() bool { return s == nil || len(s.Names) == 0 }

// NamespaceSep separates a namespace from a table name in the stored name
// of a namespaced table.
const NamespaceSep = "__"

// NamespacedTable is the name table is stored under in namespace ns:
// ns + "__" + table; ns "" leaves the name as it is.
func NamespacedTable(ns, table string) string {
	if ns == "" {
		return table
	}
	return ns + NamespaceSep + table
}

func denied(err error) error { return &Error{Kind: ErrDenied, Err: err} }

type sandboxKey struct{}

// WithSandbox binds s to the statements run with the returned context.
func WithSandbox(ctx context.Context, s *Sandbox) context.Context {
	return context.WithValue(ctx, sandboxKey{}, s)
}

// SandboxFrom returns the Sandbox bound to ctx, or nil.
func SandboxFrom(ctx context.Context) *Sandbox {
	s, _ := ctx.Value(sandboxKey{}).(*Sandbox)
	return s
}

// sandboxOf returns the Sandbox of the statement running in ctx.
func sandboxOf(ctx *sql.Context) *Sandbox {
	if ctx == nil {
		return nil
	}
	if s, ok := ctx.Session.(*session); ok {
		return s.sb
	}
	return nil
}
