// Package dirlock holds a directory for one process: an advisory lock on a
// lock file inside it (flock(2) on unix), which the kernel releases when the
// process ends, even by SIGKILL, so a crashed holder leaves no stale lock.
// weft run locks its run folder with it and weft serve its --data directory.
package dirlock

import (
	"errors"
	"fmt"
)

// ErrBusy is wrapped by the *BusyError Lock returns when another process
// (or another open of the same file in this process) holds the lock.
var ErrBusy = errors.New("locked by another process")

// BusyError says who holds a lock: Path is the lock file, PID the holder's
// process id as it wrote it into the file ("unknown" when the file was
// empty, e.g. read between the holder's lock and its write).
type BusyError struct {
	Path string
	PID  string
}

func (e *BusyError) Error() string {
	return fmt.Sprintf("%s is locked by another process (pid %s)", e.Path, e.PID)
}

// Unwrap makes errors.Is(err, ErrBusy) true.
func (e *BusyError) Unwrap() error { return ErrBusy }
