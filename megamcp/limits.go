package megamcp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// ErrAtCapacity: the server is at one of its bounds (live sessions,
// ephemeral MCP sessions, connections); nothing was created. Code
// "at_capacity", HTTP 503 with Retry-After. It is a refusal, never
// recorded in a ledger.
var ErrAtCapacity = errors.New("at capacity")

// ErrDataDir: the data directory cannot be written (read-only file system,
// permissions, disk full at startup); Open refuses to start. Code
// "data_dir", HTTP 503 on /healthz.
var ErrDataDir = errors.New("data directory not writable")

// checkCapacity is the early (unlocked) capacity check of a creation, made
// before any file is written.
func (s *Server) checkCapacity(ephemeral bool) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.capacityLocked(ephemeral)
}

// capacityLocked reports ErrAtCapacity when one more session (ephemeral or
// not) would pass a bound. s.mu is held.
func (s *Server) capacityLocked(ephemeral bool) error {
	if max := s.cfg.MaxSessions; max > 0 && len(s.sessions) >= max {
		return fmt.Errorf("%w: %d live sessions, the limit (delete sessions or raise it)", ErrAtCapacity, len(s.sessions))
	}
	if !ephemeral {
		return nil
	}
	if max := s.cfg.MaxEphemeralSessions; max > 0 {
		n := 0
		for _, ss := range s.sessions {
			if ss.ephemeral {
				n++
			}
		}
		if n >= max {
			return fmt.Errorf("%w: %d live /mcp sessions, the limit; retry when one ends", ErrAtCapacity, n)
		}
	}
	return nil
}

// fault returns the injected error of op on path (tests), else nil.
func (s *Server) fault(op, path string) error {
	if s.cfg.fault == nil {
		return nil
	}
	return s.cfg.fault(op, path)
}

// writeFile is writeFileAtomic under the server's fsync policy, recording
// the outcome for Health.
func (s *Server) writeFile(path string, data []byte) error {
	err := s.fault("write", path)
	if err == nil {
		err = writeFileAtomic(path, data, s.cfg.Fsync == FsyncAlways)
	}
	s.noteWrite(err)
	return err
}

// writeHealth is the last data-directory write failure (nil after a
// success): what Health reports.
type writeHealth struct {
	err  error
	when time.Time
}

func (s *Server) noteWrite(err error) {
	if err == nil {
		if s.health.Load() != nil {
			s.health.Store(nil)
		}
		return
	}
	s.health.Store(&writeHealth{err: err, when: time.Now().UTC()})
}

// Health reports whether the server can do its work: nil, or an error
// matching ErrDataDir when the last write to the data directory (a ledger
// append, a checkpoint, a version) failed and none has succeeded since.
// /healthz answers 503 with it.
func (s *Server) Health() error {
	h := s.health.Load()
	if h == nil {
		return nil
	}
	return fmt.Errorf("%w: the last write (%s) failed: %v", ErrDataDir, h.when.Format(time.RFC3339), h.err)
}

// probeWritable checks at Open that the data directory takes new files
// where the server writes them (sessions/, versions/): a read-only data
// directory would acknowledge nothing, so the server refuses to start
// rather than report healthy.
func (s *Server) probeWritable() error {
	for _, d := range []string{"sessions", "versions"} {
		dir := filepath.Join(s.cfg.DataDir, d)
		p := filepath.Join(dir, ".weft-probe")
		err := s.fault("create", p)
		if err == nil {
			var f *os.File
			if f, err = os.CreateTemp(dir, ".weft-probe-*"); err == nil {
				p = f.Name()
				_, err = f.Write([]byte("probe"))
				err = errors.Join(err, f.Close(), os.Remove(p))
			}
		}
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrDataDir, dir, err)
		}
	}
	return nil
}
