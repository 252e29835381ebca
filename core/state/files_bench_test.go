package state

import (
	"fmt"
	"testing"
	"time"
)

// benchFilesVersion returns a version holding n files flat in the root
// ("f000123.txt", 64 bytes each).
func benchFilesVersion(b *testing.B, n int) (*Store, *Version) {
	b.Helper()
	s := NewStore()
	s.SetFileLimits(FileLimits{MaxFiles: 1 << 20, MaxWorkspaceBytes: 1 << 30})
	files := make([]File, n)
	for i := range files {
		files[i] = File{Path: fmt.Sprintf("f%06d.txt", i), Data: []byte(fmt.Sprintf("%064d", i))}
	}
	v, err := smallState(b, s).WithFiles(files)
	if err != nil {
		b.Fatal(err)
	}
	return s, v
}

// BenchmarkForkFiles: fork of a state holding 10, 1,000 and 10,000 files;
// flat in the file count (one pointer copied).
func BenchmarkForkFiles(b *testing.B) {
	for _, n := range []int{10, 1000, 10000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			s, v := benchFilesVersion(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				benchSinkWS = s.Fork(v)
			}
		})
	}
}

// BenchmarkSnapshotRestoreFiles: snapshot then restore of a workspace of
// 10,000 files.
func BenchmarkSnapshotRestoreFiles(b *testing.B) {
	s, v := benchFilesVersion(b, 10000)
	ws := s.Fork(v)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		nv, _ := ws.Snapshot()
		_ = ws.Restore(nv)
	}
}

// BenchmarkWriteFile: overwrite of one file of a 10,000-file workspace
// with 1 KiB, 64 KiB and 1 MiB: proportional to the size written (the
// content is copied and hashed once; the tree update is O(log n)).
func BenchmarkWriteFile(b *testing.B) {
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("bytes=%d", size), func(b *testing.B) {
			s, v := benchFilesVersion(b, 10000)
			ws := s.Fork(v)
			data := make([]byte, size)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := ws.WriteFile("f005000.txt", data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDiffFiles: Diff of a 10,000-file version against a descendant
// with 1, 10 and 100 files changed: proportional to the change (shared
// subtrees are skipped), including each changed file's unified text diff.
func BenchmarkDiffFiles(b *testing.B) {
	for _, k := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("changed=%d", k), func(b *testing.B) {
			s, v := benchFilesVersion(b, 10000)
			ws := s.Fork(v)
			for j := 0; j < k; j++ {
				if err := ws.WriteFile(fmt.Sprintf("f%06d.txt", j*97), []byte("changed\n")); err != nil {
					b.Fatal(err)
				}
			}
			nv, _ := ws.Snapshot()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if c := Diff(v, nv); len(c.Files) != k {
					b.Fatalf("%d changes, want %d", len(c.Files), k)
				}
			}
		})
	}
}

// BenchmarkForkFilesPaired forks a 10-file and a 10,000-file state in
// alternating batches of 256 in one loop (so machine load hits both alike)
// and reports each one's ns per fork and their ratio (large/small; 1.0 is
// flat).
func BenchmarkForkFilesPaired(b *testing.B) {
	s1, v1 := benchFilesVersion(b, 10)
	s2, v2 := benchFilesVersion(b, 10000)
	var small, large time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		for j := 0; j < 256; j++ {
			benchSinkWS = s1.Fork(v1)
		}
		t1 := time.Now()
		for j := 0; j < 256; j++ {
			benchSinkWS = s2.Fork(v2)
		}
		small += t1.Sub(t0)
		large += time.Since(t1)
	}
	n := float64(b.N) * 256
	b.ReportMetric(float64(small.Nanoseconds())/n, "ns/fork-10")
	b.ReportMetric(float64(large.Nanoseconds())/n, "ns/fork-10000")
	b.ReportMetric(float64(large)/float64(small), "ratio")
}
