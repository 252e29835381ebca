package pipeline

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Claim is a run folder taken by ClaimFolder before the slow part of a
// run (the preflight, the module build). Give it to Run in Options.Claim;
// Release it when the run does not start.
type Claim struct {
	dir     string
	once    sync.Once
	release func() // nil: the folder did not exist, nothing is held
	// mtime is the folder's modification time before ClaimFolder wrote
	// weft.lock into it (zero: the lock file was there already).
	mtime time.Time
}

// ClaimFolder checks at once that a weft run may write dir, so that a
// refusal comes before minutes of preflight and module build: no other
// weft run holds it (ErrFolderBusy, naming the holder's pid) and it holds
// no run of another experiment (ErrOtherRun, naming the fields; config is
// the resolved config JSON, empty = not checked). An existing folder is
// locked (its weft.lock) until Release or the end of the Run given the
// claim; a missing folder is neither created nor locked (Run creates and
// locks it then), so a caller that stops after ClaimFolder and calls
// Release leaves the disk as it was.
func ClaimFolder(dir string, config []byte) (*Claim, error) {
	c := &Claim{dir: dir}
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, &os.PathError{Op: "run folder", Path: dir, Err: errors.New("not a directory")}
	}
	if _, err := os.Lstat(filepath.Join(dir, FileLock)); errors.Is(err, os.ErrNotExist) {
		c.mtime = st.ModTime()
	}
	release, err := lockFolder(dir)
	if err != nil {
		return nil, err
	}
	c.release = release
	if len(config) > 0 {
		if err := checkOtherRun(dir, config); err != nil {
			c.Release()
			return nil, err
		}
	}
	return c, nil
}

// Release gives the folder's lock up, removing the weft.lock it wrote and,
// when no Run was given the claim, putting the folder's modification time
// back: a run refused after ClaimFolder (a failed preflight) leaves the
// folder as it was. A second call, or one on a claim of a missing folder,
// does nothing.
func (c *Claim) Release() { c.end(false) }

// end releases the lock; ran says a Run wrote the folder (its time stays).
func (c *Claim) end(ran bool) {
	if c == nil || c.release == nil {
		return
	}
	c.once.Do(func() {
		c.release()
		if !ran && !c.mtime.IsZero() {
			os.Chtimes(c.dir, time.Time{}, c.mtime)
		}
	})
}
