package tools

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"acpd/permissions"
)

// collect feeds lines of output to a collector in chunks of chunk bytes
// and returns its report.
func collect(t *testing.T, j *Jobs, out string, chunk int, cap int64) (string, bool) {
	t.Helper()
	c := newOutputCollector(j)
	if cap > 0 {
		c.cap = cap
	}
	for i := 0; i < len(out); i += chunk {
		c.Write([]byte(out[i:min(i+chunk, len(out))]))
	}
	c.finish()
	return c.report(false)
}

var savedIn = regexp.MustCompile(`saved in (\S+?)[: ]`)

// Output past the cap of a saved file (64 MiB, 2 MiB here): the file holds
// the first bytes up to the cap in whole lines and the note says so, with
// the real line numbers, while the tail shown is still the output's real
// end.
func TestCollectorSaveCap(t *testing.T) {
	t.Parallel()
	j := NewJobs(nil, t.TempDir())
	t.Cleanup(func() { j.Close(t.Context()) })
	const line = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n" // 64 bytes
	const limit = 2<<20 + 10                                                         // not at a line's end
	n := limit/len(line) + 1000
	var b strings.Builder
	b.Grow(n * len(line))
	for range n {
		b.WriteString(line)
	}
	out := b.String()
	got, cut := collect(t, j, out, 32<<10+7, limit)
	m := savedIn.FindStringSubmatch(got)
	if !cut || m == nil {
		t.Fatalf("no saved file named:\n%s", notes(got))
	}
	saved, err := os.ReadFile(m[1])
	if err != nil || len(saved) != 2<<20 || out[:2<<20] != string(saved) {
		t.Fatalf("saved %d bytes (%v), want the first %d", len(saved), err, 2<<20)
	}
	want := fmt.Sprintf("The first %d lines of the output are saved in %s: read them with read_file (offset ", (2<<20)/len(line), m[1])
	want2 := fmt.Sprintf("; the output has %d lines (%d bytes), more than the 2 MiB a saved output holds, so the rest is lost.]", n, len(out))
	if !strings.Contains(got, want) || !strings.Contains(got, want2) || !strings.HasSuffix(got, line+line) || !strings.HasPrefix(got, line) {
		t.Fatalf("report notes %s", notes(got))
	}
	if strings.Count(got, "[") != 1 {
		t.Fatalf("more than one note: %s", notes(got))
	}
}

// Short output is shown whole, and nothing is saved.
func TestCollectorShort(t *testing.T) {
	t.Parallel()
	j := NewJobs(nil, t.TempDir())
	t.Cleanup(func() { j.Close(t.Context()) })
	got, cut := collect(t, j, "a\x1b[31mb\x1b[0m\r\nc", 1, 0)
	if got != "ab\nc" || cut || len(j.saved) != 0 {
		t.Fatalf("report %q cut=%v, saved %v", got, cut, j.saved)
	}
}

// An editor's terminal that kept only the tail: the partial first line is
// dropped, no line gets a number it cannot have, and the kept part is
// saved with a note saying its line 1 is not the output's.
func TestTailOutputNumbersNothing(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModeFull)
	var b strings.Builder
	b.WriteString("204\n") // the end of a line whose start was dropped
	for i := 50205; i <= 200000; i++ {
		fmt.Fprintf(&b, "%06d\n", i)
	}
	got := tailOutput(e, b.String(), "the editor's terminal kept", 1<<20)
	first, rest, _ := strings.Cut(got, "\n")
	if !strings.HasPrefix(first, "[… the beginning of the output is lost: the editor's terminal kept at most its last 1048576 bytes") ||
		regexp.MustCompile(`lines? \d+-\d+`).MatchString(first) || strings.Contains(rest, "[") {
		t.Fatalf("note %q", first)
	}
	if !strings.HasSuffix(rest, "200000\n") || strings.HasPrefix(rest, "204\n") {
		t.Fatalf("tail %q…", rest[:20])
	}
	m := savedIn.FindStringSubmatch(first)
	if m == nil {
		t.Fatalf("nothing saved: %q", first)
	}
	if saved, err := os.ReadFile(m[1]); err != nil || !strings.HasPrefix(string(saved), "050205\n") || !strings.HasSuffix(string(saved), "200000\n") {
		t.Fatalf("saved %v", err)
	}
	short := tailOutput(e, "04\n199999\n200000\n", "the job's terminal keeps", 12)
	if short != "[the beginning of the output is lost: the job's terminal keeps at most its last 12 bytes; below are the output's last 2 lines, whose numbers in the whole output are unknown]\n199999\n200000\n" {
		t.Fatalf("short tail %q", short)
	}
}
