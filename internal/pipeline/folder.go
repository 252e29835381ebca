package pipeline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// Files of a run folder.
const (
	FileConfig       = "config.json"
	FileTasks        = "tasks.weft.json"
	FileEpisodes     = "episodes.jsonl"
	FileTrajectories = "trajectories.jsonl"
	FileSFT          = "sft.jsonl"
	FileGRPO         = "grpo.jsonl"
	FileFilter       = "filter.json"
	FileFailures     = "failures.json"
	FileMetrics      = "metrics.json"
	FileReport       = "report.html"
	// FileLock exists while a weft run writes the folder; it holds the
	// run's pid (see ErrFolderBusy).
	FileLock    = "weft.lock"
	DirDatasets = "datasets"
)

// journal is an append-only JSONL file of records keyed by a string: what
// a resumed run skips. A torn last line (an interrupted write) is dropped
// on open and truncated away.
type journal struct {
	mu   sync.Mutex
	path string
	f    *os.File
	keys map[string]bool
}

// openJournal reads path's records (each a JSON object with the key
// field) into into (called per line with its raw bytes, in file order: a
// key may repeat, the last line wins) and opens it for appending.
func openJournal(path, keyField string, into func(key string, line []byte) error) (*journal, error) {
	j := &journal{path: path, keys: map[string]bool{}}
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	good := 0
	for off := 0; off < len(b); {
		nl := bytes.IndexByte(b[off:], '\n')
		if nl < 0 {
			break // torn last line
		}
		line := b[off : off+nl]
		var head map[string]json.RawMessage
		if err := json.Unmarshal(line, &head); err != nil {
			return nil, fmt.Errorf("%s: line at byte %d: %v", path, off, err)
		}
		var key string
		if err := json.Unmarshal(head[keyField], &key); err != nil || key == "" {
			return nil, fmt.Errorf("%s: line at byte %d: no %q", path, off, keyField)
		}
		if err := into(key, line); err != nil {
			return nil, fmt.Errorf("%s: record %s: %w", path, key, err)
		}
		j.keys[key] = true
		off += nl + 1
		good = off
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(int64(good)); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.Seek(int64(good), io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	j.f = f
	return j, nil
}

func (j *journal) has(key string) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.keys[key]
}

// add appends v (marshalled to one line) under key unless key is there
// already, and hands the line to the OS (a crash of weft loses nothing
// written).
func (j *journal) add(key string, v any) error { return j.write(key, v, false) }

// replace appends v under key even when key is there already: readers keep
// the last line of a key (a rerun's new outcome of an episode that ended
// on an infrastructure failure).
func (j *journal) replace(key string, v any) error { return j.write(key, v, true) }

func (j *journal) write(key string, v any, replace bool) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.keys[key] && !replace {
		return nil
	}
	w := bufio.NewWriter(j.f)
	w.Write(b)
	w.WriteByte('\n')
	if err := w.Flush(); err != nil {
		return fmt.Errorf("%s: %w", j.path, err)
	}
	j.keys[key] = true
	return nil
}

func (j *journal) close() error {
	if j == nil || j.f == nil {
		return nil
	}
	return j.f.Close()
}

// writeJSON writes v as indented JSON to path atomically (temp + rename).
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
