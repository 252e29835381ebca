//go:build unix

package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockFolder takes the run folder's lock (FileLock, an flock(2) lock that
// the kernel releases when the process dies, even by SIGKILL, so a crashed
// run leaves no stale lock) and writes this process's pid into it. A folder
// locked by another process gives an error wrapping ErrFolderBusy that names
// the holder's pid. release unlocks and removes the lock file.
func lockFolder(dir string) (release func(), err error) {
	path := filepath.Join(dir, FileLock)
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
				return nil, fmt.Errorf("%w: %s is being written by another weft run (pid %s); wait for it to finish, or use another --out", ErrFolderBusy, dir, pid)
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
