//go:build unix

package dirlock

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Lock takes an exclusive, non-blocking flock(2) lock on the file at path
// (created if missing) and writes this process's pid into it, then a
// newline. A lock held elsewhere gives a *BusyError (wrapping ErrBusy) at
// once; other failures (the directory is missing or read-only) are
// returned as they are. release removes the file and unlocks it; the
// kernel unlocks it too when the process dies.
func Lock(path string) (release func(), err error) {
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			holder, _ := os.ReadFile(path)
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				pid := strings.TrimSpace(string(holder))
				if pid == "" {
					pid = "unknown"
				}
				return nil, &BusyError{Path: path, PID: pid}
			}
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		// The holder before us may have removed the file between our open
		// and our lock: then we hold a lock on a file nobody else sees.
		st, serr := f.Stat()
		pst, perr := os.Stat(path)
		if serr != nil || perr != nil || !os.SameFile(st, pst) {
			f.Close()
			continue
		}
		werr := f.Truncate(0)
		if werr == nil {
			_, werr = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		if werr != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, werr)
		}
		return func() {
			os.Remove(path)
			f.Close()
		}, nil
	}
}
