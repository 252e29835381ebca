package megamcp

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/weft-dev/weft/internal/dirlock"
)

// ErrDataDirBusy: another server (another weft serve process, or another
// Open in this one) holds the data directory; Open refuses to start before
// it recovers or writes anything. Two servers on one directory would both
// recover its sessions and append diverging histories to the same ledgers.
var ErrDataDirBusy = errors.New("data directory in use")

// FileDataLock is the lock file of a data directory: it holds the pid of
// the server that has the directory, and an flock(2) lock that the kernel
// drops when that process ends, even by SIGKILL, so a crashed server
// leaves nothing stale behind.
const FileDataLock = "weft.lock"

// lockDataDir takes the data directory's lock for the server's lifetime.
// A held lock gives an error wrapping ErrDataDirBusy that names the
// directory and the holder's pid.
func lockDataDir(dir string) (release func(), err error) {
	release, err = dirlock.Lock(filepath.Join(dir, FileDataLock))
	var busy *dirlock.BusyError
	if errors.As(err, &busy) {
		return nil, fmt.Errorf("%w: %s is used by another weft serve (pid %s); stop it first, or use another --data", ErrDataDirBusy, dir, busy.PID)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrDataDir, err)
	}
	return release, nil
}
