package files

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The benchmark's big file is created once per test binary run (its size is
// -fs.bigfile) and removed by TestMain's cleanup.
var big struct {
	once  sync.Once
	dir   string
	path  string
	lines int
	size  int64
	err   error
}

func bigFixture(tb testing.TB) (path string, lines int, size int64) {
	tb.Helper()
	big.once.Do(func() {
		if big.dir, big.err = os.MkdirTemp("", "acpd-fs-bench-"); big.err != nil {
			return
		}
		big.path = filepath.Join(big.dir, "huge.log")
		f, err := os.Create(big.path)
		if err != nil {
			big.err = err
			return
		}
		w := bufio.NewWriterSize(f, 1<<20)
		for big.size < *bigFile {
			big.lines++
			n, _ := fmt.Fprintf(w, "%09d 2025-01-01T00:00:00Z INFO request handled path=/api/v1/items status=200\n", big.lines)
			big.size += int64(n)
		}
		if err := w.Flush(); err != nil {
			big.err = err
		}
		if err := f.Close(); err != nil && big.err == nil {
			big.err = err
		}
	})
	if big.err != nil {
		tb.Fatal(big.err)
	}
	return big.path, big.lines, big.size
}

func removeBigFixture() {
	if big.dir != "" {
		os.RemoveAll(big.dir)
	}
}

// BenchmarkReadLinesHugeFile reads a 100-line window near the end of a big
// file (-fs.bigfile bytes). Each read streams the whole file (to hash and
// count it) with bounded memory: peak-heap-MiB must stay far below the file
// size.
func BenchmarkReadLinesHugeFile(b *testing.B) {
	path, lines, size := bigFixture(b)
	roots, err := NewRoots(filepath.Dir(path))
	if err != nil {
		b.Fatal(err)
	}
	br := newTestBroker(b, BrokerOptions{Roots: roots})
	ctx := context.Background()
	offset := lines * 9 / 10

	runtime.GC()
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		got, err := br.ReadLines(ctx, path, offset, 100)
		if err != nil {
			b.Fatal(err)
		}
		if len(got.Lines) != 100 || got.TotalLines != lines {
			b.Fatalf("got %d lines of %d", len(got.Lines), got.TotalLines)
		}
	}
	b.StopTimer()
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(size)/(1<<20), "file-MiB")
}
