package tools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"acpd/permissions"
)

// startBackground starts line as a background job and returns its id.
func startBackground(t *testing.T, e *testEnv, line string) string {
	t.Helper()
	res := e.run(t.Context(), "run_command", command(t, line, "run_in_background", true))
	got := mustOK(t, res)
	raw, _ := res.Raw.(map[string]any)
	id, _ := raw["jobId"].(string)
	if id == "" || !strings.HasPrefix(got, "Started background job "+id+".") || !strings.Contains(got, fmt.Sprintf(`job_output {"id": %q}`, id)) {
		t.Fatalf("start: %q, raw %v", got, res.Raw)
	}
	return id
}

// waitJob waits for the job id to exit.
func waitJob(t *testing.T, e *testEnv, id string) {
	t.Helper()
	jb, err := e.jobs.get(id)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := jb.term.WaitForExit(ctx); err != nil {
		t.Fatal(err)
	}
}

// A background job answers at once; job_output shows its output and
// whether it runs; job_stop kills it, shows its last output and forgets it.
func TestBackgroundJobs(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	done := startBackground(t, e, "echo built; exit 4")
	waitJob(t, e, done)
	res := e.run(t.Context(), "job_output", input(t, map[string]string{"id": done}))
	if got := mustOK(t, res); got != "built\n[job "+done+" exited with code 4]\n" || !res.Bounded {
		t.Fatalf("job_output of an ended job: %q", got)
	}

	running := startBackground(t, e, "sleep 60")
	if running == done {
		t.Fatalf("two jobs share the id %s", done)
	}
	if got := mustOK(t, e.run(t.Context(), "job_output", input(t, map[string]string{"id": running}))); got != "[job "+running+" is still running]\n" {
		t.Fatalf("job_output of a running job: %q", got)
	}
	got := mustOK(t, e.run(t.Context(), "job_stop", input(t, map[string]string{"id": running})))
	if !strings.HasPrefix(got, "Stopped.\n[job "+running+" was killed by ") {
		t.Fatalf("job_stop: %q", got)
	}
	mustFail(t, e.run(t.Context(), "job_output", input(t, map[string]string{"id": running})), fmt.Sprintf("no background job %q; the jobs are %s", running, done))
	mustFail(t, e.run(t.Context(), "job_stop", `{"id":"job99"}`), `no background job "job99"`)
	mustFail(t, e.run(t.Context(), "job_output", `{"job":"job1"}`), `unknown argument "job"`)
	mustFail(t, e.run(t.Context(), "job_stop", `{"id":1}`), "invalid job_stop arguments")
	if title := jobTitle("Stop")([]byte(`{"id":"job2"}`)); title != "Stop job2" {
		t.Fatalf("title %q", title)
	}
}

// At most maxJobs jobs run at once; when the session closes they are
// stopped and later jobs are refused.
func TestBackgroundJobsBounded(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	var ids []string
	for range maxJobs {
		ids = append(ids, startBackground(t, e, "sleep 60"))
	}
	mustFail(t, e.run(t.Context(), "run_command", command(t, "sleep 60", "run_in_background", true)), fmt.Sprintf("%d background jobs are running already", maxJobs))
	var terms []string
	for _, id := range ids {
		jb, err := e.jobs.get(id)
		if err != nil {
			t.Fatal(err)
		}
		terms = append(terms, jb.term.ID())
	}
	e.jobs.Close(t.Context())
	for _, id := range terms {
		if _, ok := e.terms.Get(id); ok {
			t.Fatalf("terminal %s outlived the session's close", id)
		}
	}
	mustFail(t, e.run(t.Context(), "job_output", input(t, map[string]string{"id": ids[0]})), "none is running")
	mustFail(t, e.run(t.Context(), "run_command", command(t, "sleep 60", "run_in_background", true)), "the session is closing")
}

// A background command asks permission like any other; refused, no job.
func TestBackgroundJobAsks(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	e.mode, e.answer = permissions.ModeAsk, permissions.RejectOnce
	mustFail(t, e.run(t.Context(), "run_command", command(t, "sleep 60", "run_in_background", true)), "rejected")
	mustFail(t, e.run(t.Context(), "job_output", `{"id":"job1"}`), "none is running")
}

// A background job's long output reaches the model like run_command's:
// its real first and last lines, one note with the real line numbers, the
// whole output saved.
func TestBackgroundJobLongOutput(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	want, err := exec.Command("seq", "-w", "1", "200000").Output()
	if err != nil {
		t.Skip("no seq:", err)
	}
	id := startBackground(t, e, "seq -w 1 200000")
	waitJob(t, e, id)
	got := mustOK(t, e.run(t.Context(), "job_output", input(t, map[string]string{"id": id})))
	if !strings.HasPrefix(got, "000001\n000002\n") || !strings.HasSuffix(got, "199999\n200000\n[job "+id+" exited with code 0]\n") || strings.Count(got, "[") != 2 {
		t.Fatalf("job_output %.100q … %q, notes %s", got, got[len(got)-100:], notes(got))
	}
	m := savedIn.FindStringSubmatch(got)
	if m == nil || !strings.Contains(got, fmt.Sprintf("of 200000 … The whole output is saved in %s: read it with read_file (offset ", m[1])) || !strings.Contains(got, fmt.Sprintf("; it has 200000 lines (%d bytes).]", len(want))) {
		t.Fatalf("notes %s", notes(got))
	}
	if saved, err := os.ReadFile(m[1]); err != nil || string(saved) != string(want) {
		t.Fatalf("the saved output (%d bytes, %v) is not the output", len(saved), err)
	}
}

// While a job runs, the report is the output so far, its open row (a
// prompt, a progress bar) included, and the note says the file grows.
func TestCollectorRunning(t *testing.T) {
	t.Parallel()
	j := NewJobs(nil, t.TempDir())
	t.Cleanup(func() { j.Close(t.Context()) })
	c := newOutputCollector(j)
	defer c.finish()
	if got, _ := c.report(true); got != "" {
		t.Fatalf("empty report %q", got)
	}
	c.Write([]byte("a\n10%\r50%"))
	if got, cut := c.report(true); got != "a\n50%" || cut {
		t.Fatalf("short report %q", got)
	}
	for i := 1; i <= 10000; i++ {
		fmt.Fprintf(c, "%05d\n", i)
	}
	c.Write([]byte("Password: "))
	got, cut := c.report(true)
	if !cut || !strings.HasPrefix(got, "a\n50%00001\n") || !strings.HasSuffix(got, "10000\nPassword: ") ||
		!strings.Contains(got, "of 10002 … The output so far is saved in ") || !strings.Contains(got, "; it has 10002 lines (60015 bytes) and grows while the job runs.]") {
		t.Fatalf("report %.40q… notes %s … %q", got, notes(got), got[len(got)-20:])
	}
}
