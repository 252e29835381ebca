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
	release func()
	// mtime is the folder's modification time before ClaimFolder wrote
	// weft.lock into it (zero: the lock file was there already, or
	// ClaimFolder created the folder).
	mtime time.Time
	// created are the directories ClaimFolder made (dir and any missing
	// parents), deepest first; Release removes them again when empty.
	created []string
}

// ClaimFolder checks at once that a weft run may write dir, so that a
// refusal comes before minutes of preflight and module build: no other
// weft run holds it (ErrFolderBusy, naming the holder's pid) and it holds
// no run of another experiment (ErrOtherRun, naming the fields; config is
// the resolved config JSON, empty = not checked). The folder is locked
// (its weft.lock) until Release or the end of the Run given the claim. A
// missing folder is created (with missing parents) and locked at once, so
// a second weft run on the same new folder is refused as early as on an
// existing one; a caller that stops after ClaimFolder and calls Release
// (a failed preflight, a bad module) leaves the disk as it was: the lock
// file goes, the directories ClaimFolder created go when still empty, and
// an existing folder gets its modification time back.
func ClaimFolder(dir string, config []byte) (*Claim, error) {
	c := &Claim{dir: dir}
	st, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		c.created = missingDirs(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			c.removeCreated()
			return nil, err
		}
		release, err := lockFolder(dir)
		if err != nil {
			// Another run that created it at the same moment holds it:
			// the folder is that run's now.
			if !errors.Is(err, ErrFolderBusy) {
				c.removeCreated()
			}
			return nil, err
		}
		c.release = release
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

// missingDirs lists dir and its ancestors that do not exist, deepest
// first.
func missingDirs(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(d); !errors.Is(err, os.ErrNotExist) {
			return out
		}
		out = append(out, d)
		up := filepath.Dir(d)
		if up == d {
			return out
		}
		d = up
	}
}

// removeCreated removes the directories ClaimFolder created, deepest
// first, each only when empty (os.Remove refuses a non-empty one).
func (c *Claim) removeCreated() {
	for _, d := range c.created {
		if os.Remove(d) != nil {
			return
		}
	}
}

// Release gives the folder's lock up, removing the weft.lock it wrote and,
// when no Run was given the claim, putting the folder's modification time
// back (or, for a folder ClaimFolder created, removing it when empty): a
// run refused after ClaimFolder (a failed preflight) leaves the disk as it
// was. A second call does nothing.
func (c *Claim) Release() { c.end(false) }

// end releases the lock; ran says a Run wrote the folder (its time stays).
func (c *Claim) end(ran bool) {
	if c == nil || c.release == nil {
		return
	}
	c.once.Do(func() {
		c.release()
		if ran {
			return
		}
		if !c.mtime.IsZero() {
			os.Chtimes(c.dir, time.Time{}, c.mtime)
		}
		c.removeCreated()
	})
}
