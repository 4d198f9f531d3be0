//go:build acpdprofile && unix

package main

// A profiling build (go build -tags acpdprofile), for the benchmarks only:
// the release build has none of it. With ACPD_CPUPROFILE set the process
// profiles its CPU from start to the first SIGUSR1; with ACPD_TRACE set it
// records an execution trace (runtime/trace, go tool trace) there over the
// same span; with ACPD_HEAPPROFILE set, SIGUSR1 writes the heap profile
// (text form, with stacks) there. Run it with GODEBUG=memprofilerate=1 to
// record every allocation. A heap profile shows the heap as of the last
// completed collection, so the handler collects once before writing: the
// figures it is asked for (RSS) are read before the signal.

import (
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"syscall"
)

func init() {
	cpu, heap, tr := os.Getenv("ACPD_CPUPROFILE"), os.Getenv("ACPD_HEAPPROFILE"), os.Getenv("ACPD_TRACE")
	if cpu == "" && heap == "" && tr == "" {
		return
	}
	var cpuFile, traceFile *os.File
	if cpu != "" {
		f, err := os.Create(cpu)
		if err == nil && pprof.StartCPUProfile(f) == nil {
			cpuFile = f
		}
	}
	if tr != "" {
		f, err := os.Create(tr)
		if err == nil && trace.Start(f) == nil {
			traceFile = f
		}
	}
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGUSR1)
	go func() {
		for range c {
			if cpuFile != nil {
				pprof.StopCPUProfile()
				cpuFile.Close()
				cpuFile = nil
			}
			if traceFile != nil {
				trace.Stop()
				traceFile.Close()
				traceFile = nil
			}
			if heap != "" {
				runtime.GC()
				if f, err := os.Create(heap + ".tmp"); err == nil {
					pprof.Lookup("heap").WriteTo(f, 1)
					f.Close()
					os.Rename(heap+".tmp", heap)
				}
			}
		}
	}()
}
