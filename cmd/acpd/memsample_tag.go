//go:build acpdprofile && linux

package main

// ACPD_MEMSAMPLE (profiling build only): every 2 ms the process reads its
// resident set (/proc/self/statm) and, when it is the highest since the
// last SIGUSR1, the runtime's memory classes (runtime/metrics) and, once it
// grew by a MiB, the heap profile (as of the last collection, whose live
// heap set the target the peak reaches; run with GODEBUG=memprofilerate=N
// for small objects). SIGUSR1 writes the classes to the file the variable
// names and the profile beside it (+".heap"), and starts over. It shows
// what a benchmark's peak is made of: live and dead heap, unscavenged
// pages, metadata, the mapped binary.

import (
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"
	"time"
)

func init() {
	path := os.Getenv("ACPD_MEMSAMPLE")
	if path == "" {
		return
	}
	var names []string
	for _, d := range metrics.All() {
		if bytes.HasPrefix([]byte(d.Name), []byte("/memory/classes/")) || d.Name == "/gc/heap/goal:bytes" || d.Name == "/gc/heap/live:bytes" {
			names = append(names, d.Name)
		}
	}
	samples := make([]metrics.Sample, len(names))
	for i, n := range names {
		samples[i].Name = n
	}
	var mu sync.Mutex
	var best []metrics.Sample
	var bestRSS, bestFile int64
	var bestHeap []byte
	page := int64(os.Getpagesize())
	read := func() (int64, int64) {
		b, err := os.ReadFile("/proc/self/statm")
		if err != nil {
			return 0, 0
		}
		f := bytes.Fields(b)
		if len(f) < 3 {
			return 0, 0
		}
		rss, _ := strconv.ParseInt(string(f[1]), 10, 64)
		shared, _ := strconv.ParseInt(string(f[2]), 10, 64)
		return rss * page, shared * page
	}
	go func() {
		for range time.Tick(2 * time.Millisecond) {
			rss, file := read()
			mu.Lock()
			if rss > bestRSS {
				metrics.Read(samples)
				if rss > bestRSS+(1<<20) {
					// The live heap as of the last collection, whose
					// size set the target the peak reaches.
					var hb bytes.Buffer
					_ = pprof.Lookup("heap").WriteTo(&hb, 0)
					bestHeap = hb.Bytes()
				}
				bestRSS, bestFile = rss, file
				best = append(best[:0], samples...)
			}
			mu.Unlock()
		}
	}()
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1)
	go func() {
		for range c {
			mu.Lock()
			var out bytes.Buffer
			fmt.Fprintf(&out, "rss %.2f MiB (file-backed %.2f MiB)\n", float64(bestRSS)/(1<<20), float64(bestFile)/(1<<20))
			for _, s := range best {
				if s.Value.Kind() == metrics.KindUint64 {
					fmt.Fprintf(&out, "%-60s %8.2f MiB\n", s.Name, float64(s.Value.Uint64())/(1<<20))
				}
			}
			bestRSS = 0
			mu.Unlock()
			_ = os.WriteFile(path+".heap", bestHeap, 0o644)
			_ = os.WriteFile(path+".tmp", out.Bytes(), 0o644)
			_ = os.Rename(path+".tmp", path)
		}
	}()
}
