package pipeline

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/weft-dev/weft/internal/dirlock"
)

// lockFolder takes the run folder's lock (FileLock, see internal/dirlock:
// the kernel releases it when the process dies, even by SIGKILL, so a
// crashed run leaves no stale lock) and writes this process's pid into it.
// A folder locked by another process gives an error wrapping ErrFolderBusy
// that names the holder's pid. release unlocks and removes the lock file.
func lockFolder(dir string) (release func(), err error) {
	release, err = dirlock.Lock(filepath.Join(dir, FileLock))
	var busy *dirlock.BusyError
	if errors.As(err, &busy) {
		return nil, fmt.Errorf("%w: %s is being written by another weft run (pid %s); wait for it to finish, or use another --out", ErrFolderBusy, dir, busy.PID)
	}
	return release, err
}
