//go:build linux

package main

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// durableFloor does the work that makes a session durable, and nothing
// else: create one file, write its header, fsync it and its directory,
// append one journal line to an open journal and fsync it.
func durableFloor(b *testing.B, dir string, journal *os.File, i int) {
	f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("s_%016x.jsonl", i)), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	hdr := fmt.Sprintf(`{"v":1,"kind":"header","id":"s_%016x","cwd":%q,"createdAt":%q}`+"\n", i, dir, time.Now().UTC().Format(time.RFC3339Nano))
	if _, err := f.WriteString(hdr); err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	d, err := os.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	if err := d.Sync(); err != nil {
		b.Fatal(err)
	}
	d.Close()
	if _, err := journal.WriteString(`{"op":"put","m":` + hdr[:len(hdr)-1] + "}\n"); err != nil {
		b.Fatal(err)
	}
	if err := journal.Sync(); err != nil {
		b.Fatal(err)
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkTableSessionNewDurable: session/new (request written to reply
// read, empty store) against the durable floor written in Go beside it on
// the same file system, interleaved; medians.
func BenchmarkTableSessionNewDurable(b *testing.B) {
	iso := newIsolation(b)
	project := b.TempDir()
	floorDir := b.TempDir()
	journal, err := os.OpenFile(filepath.Join(floorDir, "index.jsonl"), os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer journal.Close()
	p := startProc(b, iso.Env())
	p.initialize()
	p.newSession(project) // the first session reads what later ones find cached
	var ta, tf []time.Duration
	i := 0
	for b.Loop() {
		t0 := time.Now()
		p.newSession(project)
		ta = append(ta, time.Since(t0))
		p.backlog, p.got, p.sent = p.backlog[:0], p.got[:0], p.sent[:0]
		t0 = time.Now()
		durableFloor(b, floorDir, journal, i)
		tf = append(tf, time.Since(t0))
		i++
	}
	a, f := median(ta), median(tf)
	b.ReportMetric(float64(a.Microseconds())/1000, "acpd-ms")
	b.ReportMetric(float64(f.Microseconds())/1000, "floor-ms")
	b.ReportMetric(float64(a)/float64(f), "ratio")
	b.StopTimer()
	p.close()
}

// staticBuild is one static build of acpd (CGO_ENABLED=0, as released)
// with the given tags, made once per test binary.
type staticBuild struct {
	once sync.Once
	path string
	err  error
}

func (s *staticBuild) get(tb testing.TB, tags string) string {
	tb.Helper()
	s.once.Do(func() {
		dir, err := os.MkdirTemp("", "acpd-static-")
		if err != nil {
			s.err = err
			return
		}
		s.path = filepath.Join(dir, "acpd")
		// As .goreleaser.yaml builds the released binary.
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-tags", tags, "-o", s.path, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			s.err = fmt.Errorf("go build -tags %q: %v\n%s", tags, err, out)
		}
	})
	if s.err != nil {
		tb.Fatal(s.err)
	}
	return s.path
}

var releaseBuild, profileBuild staticBuild

// releaseBinary builds acpd as released (static, -trimpath, -s -w), whatever CGO_ENABLED the
// test runs with: a cgo build maps the C library and the dynamic loader
// too (21.9 MB idle against 17.0). -acpd.bin names a binary to measure
// instead (build it static to compare like with like).
func releaseBinary(tb testing.TB) string {
	if *flagBinary != "" {
		return *flagBinary
	}
	return releaseBuild.get(tb, "")
}

// profileBinary builds acpd with the acpdprofile tag (profile_tag.go),
// static as released.
func profileBinary(tb testing.TB) string { return profileBuild.get(tb, "acpdprofile") }

// BenchmarkTableIdleRSS: acpd's RSS after initialize and one session/new
// (the release build: static), split into anonymous memory (heap, stacks) and file
// pages (the mapped binary), against the goal of 15 MB (15,000 of
// /proc's kB). Then, from the
// profiling build run with every allocation recorded, the heap in use at
// the same point grouped by the package of the allocating function (the
// innermost frame outside the runtime and the standard library's
// allocation helpers), printed under the row.
func BenchmarkTableIdleRSS(b *testing.B) {
	var rss, anon, file float64
	var seg [3]float64
	for b.Loop() {
		r, a, f, s := idleProc(b, releaseBinary(b), nil)
		rss, anon, file = rss+float64(r), anon+float64(a), file+float64(f)
		for i := range seg {
			seg[i] += float64(s[i])
		}
	}
	// MB as the issue counts them: thousands of /proc's kB.
	n := float64(b.N) * 1000
	b.ReportMetric(rss/n, "rss-MB")
	b.ReportMetric(anon/n, "anon-MB")
	b.ReportMetric(file/n, "file-MB")
	b.ReportMetric(seg[0]/n, "text-MB")
	b.ReportMetric(seg[1]/n, "rodata-MB")
	b.ReportMetric(seg[2]/n, "data-MB")
	b.StopTimer()
	heap := filepath.Join(b.TempDir(), "heap.txt")
	idleProc(b, profileBinary(b), []string{"GODEBUG=memprofilerate=1", "ACPD_HEAPPROFILE=" + heap})
	byPkg, total := heapByPackage(b, heap)
	type kv struct {
		pkg string
		n   int64
	}
	var rows []kv
	for k, v := range byPkg {
		rows = append(rows, kv{k, v})
	}
	slices.SortFunc(rows, func(x, y kv) int { return int(y.n - x.n) })
	var sb strings.Builder
	fmt.Fprintf(&sb, "idle heap in use by package (profiling build, after a collection): %.0f KiB\n", float64(total)/1024)
	for i, r := range rows {
		if i == 15 {
			break
		}
		fmt.Fprintf(&sb, "  %7.1f KiB  %s\n", float64(r.n)/1024, r.pkg)
	}
	fmt.Fprint(os.Stdout, sb.String())
}

// idleProc starts bin with extra environment, sends initialize and one
// session/new, and returns VmRSS, RssAnon and RssFile in KiB, and the
// resident KiB of the binary's three mappings (binarySegments). With
// ACPD_HEAPPROFILE in extra it then asks for the heap profile (SIGUSR1)
// and waits for the file.
func idleProc(b *testing.B, bin string, extra []string) (rss, anon, file int64, seg [3]int64) {
	iso := newIsolation(b)
	project := b.TempDir()
	writeFile(b, filepath.Join(project, "main.go"), "package main\n")
	env := append(iso.Env(), extra...)
	cmd := exec.Command(bin)
	cmd.Env = env
	p := startCmd(b, cmd)
	p.initialize()
	p.newSession(project)
	pid := p.pid()
	// The commands are announced after the reply: wait for them, so that
	// the session is idle.
	for {
		if strings.Contains(string(p.next()), "available_commands_update") {
			break
		}
	}
	rss, anon, file = procStatus(b, pid, "VmRSS"), procStatus(b, pid, "RssAnon"), procStatus(b, pid, "RssFile")
	seg = binarySegments(b, pid, bin)
	for _, kv := range extra {
		if path, ok := strings.CutPrefix(kv, "ACPD_HEAPPROFILE="); ok {
			if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
				b.Fatal(err)
			}
			for i := 0; ; i++ {
				if _, err := os.Stat(path); err == nil {
					break
				}
				if i > 500 {
					b.Fatal("no heap profile written")
				}
				time.Sleep(10 * time.Millisecond) // polling a file another process writes
			}
		}
	}
	p.close()
	return rss, anon, file, seg
}

// binarySegments returns the resident KiB (smaps' Rss) of bin's mappings
// in process pid: text (r-x), read-only data (r--: rodata, pclntab,
// typelinks) and data (rw-: data, noptrdata; bss is anonymous). Which
// pages are resident is the kernel's choice: it maps the cached pages
// around each one touched (fault-around, 64 KiB), so a segment is
// resident in proportion to how widely start-up touches it, not to how
// much it runs.
func binarySegments(b *testing.B, pid int, bin string) (seg [3]int64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		b.Fatal(err)
	}
	cur := -1
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) >= 5 && strings.Contains(f[0], "-") && len(f[1]) == 4 {
			cur = -1
			if len(f) >= 6 && f[len(f)-1] == bin {
				switch f[1] {
				case "r-xp":
					cur = 0
				case "r--p":
					cur = 1
				case "rw-p":
					cur = 2
				}
			}
			continue
		}
		if cur >= 0 && len(f) >= 2 && f[0] == "Rss:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			seg[cur] += n
		}
	}
	return seg
}

// heapByPackage reads a heap profile in its text form (debug=1) and sums
// the bytes in use by the package that asked for each allocation: the
// innermost frame outside the standard library (acpd's or a
// dependency's), else, for an allocation of the standard library's own,
// its innermost frame outside the runtime, marked "(std)".
func heapByPackage(b *testing.B, path string) (map[string]int64, int64) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	by := map[string]int64{}
	var total, cur int64
	var std string // the innermost standard-library package of the record
	inRecord := false
	flush := func() {
		if inRecord && cur > 0 {
			by[cmp.Or(std, "runtime")+" (std)"] += cur
		}
		inRecord = false
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "# runtime.MemStats") {
			break
		}
		fields := strings.Fields(line)
		if len(fields) > 2 && strings.HasSuffix(fields[0], ":") && strings.HasPrefix(fields[2], "[") {
			flush()
			cur, _ = strconv.ParseInt(fields[1], 10, 64)
			total += cur
			inRecord, std = cur > 0, ""
			continue
		}
		if !inRecord || !strings.HasPrefix(line, "#\t") || len(fields) < 3 {
			continue
		}
		pkg := funcPackage(fields[2])
		first, _, _ := strings.Cut(pkg, "/")
		if !strings.Contains(first, ".") && first != "acpd" && pkg != "main" {
			if std == "" && first != "runtime" && !strings.HasPrefix(pkg, "internal/runtime") {
				std = pkg
			}
			continue
		}
		by[pkg] += cur
		inRecord = false
	}
	flush()
	return by, total
}

// funcPackage returns the import path of a symbolised function name.
func funcPackage(fn string) string {
	slash := strings.LastIndex(fn, "/")
	if i := strings.Index(fn[slash+1:], "."); i >= 0 {
		return fn[:slash+1+i]
	}
	return fn
}
