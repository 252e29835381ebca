package megamcp

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"sync"
	"time"

	"github.com/weft-dev/weft/core/module"
	"github.com/weft-dev/weft/sdk/failure"
)

// Record kinds of the ledger.
const (
	KindCall    = "call"    // a tool call
	KindRestore = "restore" // the session was restored to a version (generation bumped)
	KindClock   = "clock"   // the session's virtual clock was set
)

// Record is one ledger entry. Every tool call of a session is recorded,
// whatever its outcome, in the order the session ran them; Index numbers the
// records of a session from 0 without gaps.
type Record struct {
	Index      uint64 `json:"index"`
	Session    string `json:"session"`
	Generation uint64 `json:"generation"`
	Kind       string `json:"kind"`
	// Seq is the tool-call sequence number the call ran with (it selects the
	// call's random stream, see module.RandStream); calls refused before
	// running (unknown tool, invalid arguments) carry the next free number
	// without consuming it.
	Seq    uint64 `json:"seq"`
	Module string `json:"module,omitempty"` // module name
	Tool   string `json:"tool,omitempty"`   // tool name within the module
	// Exposed is the name the group exposes the tool under when it is not
	// Tool (a name two modules share: "module__tool"); see ExposedTool.
	Exposed   string          `json:"exposed,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Result    *module.Result  `json:"result,omitempty"`
	Error     *ErrorInfo      `json:"error,omitempty"`
	// RowsChanged counts the rows added, removed or changed by the call
	// (state.Changes.Count); 0 for failed and read-only calls.
	RowsChanged int `json:"rows_changed"`
	// DurationMs is the wall time of the call in milliseconds.
	DurationMs float64 `json:"duration_ms"`
	// Clock is the session's virtual clock during the call (or the new clock
	// of a KindClock record), in Unix nanoseconds.
	Clock int64 `json:"clock_ns"`
	// Version is the version a KindRestore record restored to.
	Version string    `json:"version,omitempty"`
	Time    time.Time `json:"time"` // wall time of the append, UTC
}

// ErrorInfo is a failed call's error: Kind is a stable code (see
// errorKind), Message the error text.
type ErrorInfo struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// committed reports whether the record's call changed state, i.e. whether
// replay must run it.
func (r *Record) committed() bool {
	return r.Kind == KindCall && r.Error == nil && r.Result != nil && !r.Result.IsError && r.RowsChanged > 0
}

// FsyncPolicy says when ledger appends reach stable storage.
type FsyncPolicy int

const (
	// FsyncAlways: every append is fsync'ed before the call is
	// acknowledged; acknowledged calls survive a power loss. The default.
	FsyncAlways FsyncPolicy = iota
	// FsyncNever: appends are written to the operating system before the
	// call is acknowledged but never fsync'ed; acknowledged calls survive a
	// crash of weft (kill -9) but not of the machine.
	FsyncNever
)

// ParseFsyncPolicy parses "always" or "never".
func ParseFsyncPolicy(s string) (FsyncPolicy, error) {
	switch s {
	case "always", "":
		return FsyncAlways, nil
	case "never", "none", "os":
		return FsyncNever, nil
	}
	return 0, fmt.Errorf("%w: fsync policy %q (want always or never)", ErrBadRequest, s)
}

func (p FsyncPolicy) String() string {
	if p == FsyncNever {
		return "never"
	}
	return "always"
}

// The write-ahead log of one session is a file of frames: a little-endian
// uint32 payload length, a little-endian uint32 CRC-32C (Castagnoli) of the
// payload, and the payload, one JSON Record. A torn or corrupt tail (a crash
// in the middle of an append, which was never acknowledged) is cut off when
// the log is opened.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

const maxFrame = 64 << 20

type wal struct {
	mu     sync.Mutex
	f      *os.File
	path   string
	policy FsyncPolicy
	n      uint64 // records in the file
	start  int64  // offset of the first frame (after the magic)
	size   int64
	// mem keeps the records in memory instead (a server without a data
	// directory).
	mem    bool
	recs   []Record
	closed bool
}

func newMemWAL() *wal { return &wal{mem: true} }

// walMagic opens every ledger written since ledger format 1: an emptied or
// truncated-to-zero ledger (no magic) is then told apart from a session
// that has made no call (the magic alone). Ledgers of format 0 (before the
// magic) start with their first frame and are still read.
const walMagic = "WEFTWAL1"

// tailCut describes the bytes openWAL cut off the end of a ledger: a torn
// or corrupt last frame, never an acknowledged record (the append of a call
// is acknowledged only once its frame is whole).
type tailCut struct {
	Offset  int64 // where the cut starts, bytes from the start of the file
	Bytes   int64 // bytes cut
	Records int   // frames cut: 1 (only the append in flight can be torn)
}

// openWAL opens the log at path and returns it with its records and what
// was cut off its end. With create, a missing file is created (with the
// magic); without it, a missing file is an error (recovery: the ledger of a
// session with metadata must exist). magic reports whether the file starts
// with walMagic.
func openWAL(path string, policy FsyncPolicy, create bool) (w *wal, recs []Record, cut tailCut, magic bool, err error) {
	flag := os.O_RDWR
	if create {
		flag |= os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, nil, cut, false, err
	}
	fail := func(err error) (*wal, []Record, tailCut, bool, error) {
		f.Close()
		return nil, nil, tailCut{}, false, err
	}
	if create {
		if _, err := f.Write([]byte(walMagic)); err != nil {
			return fail(err)
		}
		if policy == FsyncAlways {
			if err := f.Sync(); err != nil {
				return fail(err)
			}
		}
		return &wal{f: f, path: path, policy: policy, start: int64(len(walMagic)), size: int64(len(walMagic))}, nil, cut, true, nil
	}
	st, err := f.Stat()
	if err != nil {
		return fail(err)
	}
	start, err := walStart(f)
	if err != nil {
		return fail(err)
	}
	recs, good, err := readFrames(f)
	if err != nil {
		return fail(err)
	}
	good += start
	if st.Size() > good {
		cut = tailCut{Offset: good, Bytes: st.Size() - good, Records: 1}
	}
	// The tail is cut by cutTail once the caller has checked the records
	// against the rest of the session (a checkpoint covering the "torn"
	// frame proves it was acknowledged: damage, to be kept).
	return &wal{f: f, path: path, policy: policy, n: uint64(len(recs)), start: start, size: good}, recs, cut, start > 0, nil
}

// cutTail truncates the file after its last good frame and positions it
// for appends.
func (w *wal) cutTail() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.f.Truncate(w.size); err != nil {
		return err
	}
	_, err := w.f.Seek(w.size, io.SeekStart)
	return err
}

// walStart positions f after the magic if the file starts with it (and
// returns its length), else at 0 (format 0).
func walStart(f *os.File) (int64, error) {
	var m [len(walMagic)]byte
	n, err := io.ReadFull(f, m[:])
	if err == nil && string(m[:]) == walMagic {
		return int64(n), nil
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return 0, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	return 0, nil
}

// ErrCorruptLedger: a ledger frame that is not the last one is damaged (bad
// checksum, length or JSON). Unlike a torn tail, which only a crash in the
// middle of an append leaves and which held no acknowledged call, this is
// damage to acknowledged records: the log is left untouched and the session
// is set aside for an operator.
var ErrCorruptLedger = errors.New("ledger corrupt")

// readFrames reads records until the end or the first bad frame; good is
// the offset after the last good frame. A bad frame with bytes after it is
// ErrCorruptLedger; a bad or incomplete last frame is a torn tail (no
// error: the bytes after good are to be cut).
func readFrames(r io.Reader) (recs []Record, good int64, err error) {
	br := bufio.NewReaderSize(r, 1<<16)
	var hdr [8]byte
	corrupt := func(what string) ([]Record, int64, error) {
		return nil, 0, fmt.Errorf("%w: %s in the frame at offset %d (record %d), with data after it", ErrCorruptLedger, what, good, len(recs))
	}
	for {
		if _, err := io.ReadFull(br, hdr[:]); err != nil {
			return recs, good, nil
		}
		n := binary.LittleEndian.Uint32(hdr[:4])
		sum := binary.LittleEndian.Uint32(hdr[4:])
		if n > maxFrame {
			if rest, _ := io.Copy(io.Discard, br); rest >= int64(n) {
				return corrupt(fmt.Sprintf("length %d over the %d limit", n, maxFrame))
			}
			return recs, good, nil
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(br, buf); err != nil {
			return recs, good, nil
		}
		_, more := br.Peek(1)
		last := more != nil
		if crc32.Checksum(buf, crcTable) != sum {
			if last {
				return recs, good, nil
			}
			return corrupt("checksum mismatch")
		}
		var rec Record
		if err := json.Unmarshal(buf, &rec); err != nil {
			if last {
				return recs, good, nil
			}
			return corrupt("undecodable record")
		}
		if rec.Index != uint64(len(recs)) {
			return nil, 0, fmt.Errorf("%w: record %d carries index %d", ErrCorruptLedger, len(recs), rec.Index)
		}
		recs = append(recs, rec)
		good += int64(8 + n)
	}
}

// append writes rec (its Index must be the log's length) and, under
// FsyncAlways, syncs it. On error the file is cut back to its old size so
// that the log never holds a record the caller was told failed.
func (w *wal) append(rec *Record) error {
	if w.mem && recordBound(rec) <= maxFrame {
		// Nothing is written: the record is encoded only when it could be
		// over the frame limit, so that an in-memory server refuses what
		// one with a data directory refuses.
		return w.appendMem(rec)
	}
	frame, err := encodeFrame(rec)
	if err != nil {
		return err
	}
	if w.mem {
		return w.appendMem(rec)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return ErrClosed
	}
	if rec.Index != w.n {
		return fmt.Errorf("ledger: append of index %d to a log of %d records", rec.Index, w.n)
	}
	if _, err := w.f.Write(frame); err != nil {
		_ = w.f.Truncate(w.size)
		_, _ = w.f.Seek(w.size, io.SeekStart)
		return err
	}
	if w.policy == FsyncAlways {
		if err := w.f.Sync(); err != nil {
			_ = w.f.Truncate(w.size)
			_, _ = w.f.Seek(w.size, io.SeekStart)
			return err
		}
	}
	w.size += int64(len(frame))
	w.n++
	return nil
}

// encodeFrame is rec's frame: length, CRC, JSON payload (json.Marshal's
// bytes); a record over maxFrame is an error.
func encodeFrame(rec *Record) ([]byte, error) {
	payload, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	if len(payload) > maxFrame {
		return nil, fmt.Errorf("record of %d bytes exceeds the %d-byte frame limit", len(payload), maxFrame)
	}
	frame := make([]byte, 8+len(payload))
	binary.LittleEndian.PutUint32(frame[:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(frame[4:8], crc32.Checksum(payload, crcTable))
	copy(frame[8:], payload)
	return frame, nil
}

// recordBound is an upper bound of the length of rec's JSON encoding: every
// string and raw member at 6 bytes a byte (the longest escape, \u00XX) plus
// room for the member names, numbers and the time.
func recordBound(rec *Record) int {
	n := len(rec.Session) + len(rec.Kind) + len(rec.Module) + len(rec.Tool) + len(rec.Exposed) + len(rec.Arguments) + len(rec.Version)
	extra := 1024
	if e := rec.Error; e != nil {
		n += len(e.Kind) + len(e.Message)
	}
	if r := rec.Result; r != nil {
		n += len(r.StructuredContent)
		for _, c := range r.Content {
			n += len(c.Type) + len(c.Text) + len(c.Data) + len(c.MimeType) + len(c.URI) + len(c.Name)
			if rc := c.Resource; rc != nil {
				n += len(rc.URI) + len(rc.MimeType) + len(rc.Text) + len(rc.Blob)
			}
			extra += 128
		}
	}
	return 6*n + extra
}

// appendMem keeps rec in an in-memory log.
func (w *wal) appendMem(rec *Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return ErrClosed
	}
	if rec.Index != w.n {
		return fmt.Errorf("ledger: append of index %d to a log of %d records", rec.Index, w.n)
	}
	w.recs = append(w.recs, *rec)
	w.n++
	return nil
}

// read returns up to limit records with Index >= from.
func (w *wal) read(from uint64, limit int) ([]Record, error) {
	w.mu.Lock()
	n := w.n
	if w.mem {
		recs := w.recs[:n:n]
		w.mu.Unlock()
		if from >= uint64(len(recs)) {
			return []Record{}, nil
		}
		recs = recs[from:]
		if limit > 0 && len(recs) > limit {
			recs = recs[:limit]
		}
		return append([]Record(nil), recs...), nil
	}
	w.mu.Unlock()
	f, err := os.Open(w.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := walStart(f); err != nil {
		return nil, err
	}
	recs, _, err := readFrames(f)
	if err != nil {
		return nil, err
	}
	if uint64(len(recs)) > n {
		recs = recs[:n]
	}
	if from >= uint64(len(recs)) {
		return []Record{}, nil
	}
	recs = recs[from:]
	if limit > 0 && len(recs) > limit {
		recs = recs[:limit]
	}
	return recs, nil
}

func (w *wal) close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// errorKind names an error for the ledger and the API: the stable codes of
// docs/api.md.
func errorKind(err error) string { return string(apiKind(err)) }

// apiKind is errorKind's failure.Kind.
func apiKind(err error) failure.Kind {
	if err == nil {
		return ""
	}
	// The first error in the chain that knows its kind (module.Err*,
	// megamcp Err*, *FencedError) names it; anything else is "internal"
	// (a bare context error included, as before).
	// Kinds outside the codes docs/api.md documents (invalid_module, the
	// runtime's own closed) stay "internal", as they always were.
	var k failure.Kinder
	if errors.As(err, &k) {
		if kind := k.FailureKind(); apiKinds[kind] {
			if kind == failure.Closed && !errors.Is(err, ErrClosed) {
				return failure.Internal
			}
			return kind
		}
	}
	return failure.Internal
}

// apiKinds are the error codes of ledger records and the admin API.
var apiKinds = map[failure.Kind]bool{
	failure.InvalidArguments: true, failure.UnknownTool: true, failure.Deadline: true, failure.StepBudget: true,
	failure.Canceled: true, failure.MemoryLimit: true, failure.MalformedOutput: true,
	failure.Trap: true, failure.StaleGeneration: true, failure.NoSuchSession: true,
	failure.NoSuchVersion: true, failure.NoSuchModule: true, failure.BadRequest: true,
	failure.Ledger: true, failure.Closed: true,
}

// ErrorKind returns the stable snake_case kind of an error returned by the
// server's session methods (the "kind" of ledger records and of admin API
// errors): "trap", "deadline", "memory_limit", "malformed_output",
// "stale_generation", "no_such_session", ...; "" for nil.
func ErrorKind(err error) failure.Kind { return apiKind(err) }

// ExposedTool is the name the agent called the record's tool by: Exposed
// when set, else Tool. Checks (required_call, forbidden_call) name tools so.
func (r Record) ExposedTool() string {
	if r.Exposed != "" {
		return r.Exposed
	}
	return r.Tool
}
