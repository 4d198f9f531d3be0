//go:build unix

package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestCommandOutputBounded: long command output reaches the model as its
// head and tail cut at line boundaries (not through the generic middle
// cut), with the whole output saved to a file the note names.
func TestCommandOutputBounded(t *testing.T) {
	env := newEnv(t, "")
	c, sid := env.fullSession()
	res, isErr, _ := runTools(t, env, c, sid, toolCallReq{"run_command", map[string]any{"command": "seq 1 20000"}})
	out := res[0]
	if isErr[0] || len(out) > 31_000 || !strings.HasPrefix(out, "1\n2\n3\n") || !strings.HasSuffix(out, "19999\n20000\n[exit code 0]\n") {
		t.Fatalf("output (%d bytes): %q … %q", len(out), out[:min(len(out), 40)], out[max(0, len(out)-60):])
	}
	if strings.Contains(out, "bytes cut from the middle of this output") {
		t.Error("the output went through the generic middle cut")
	}
	i := strings.Index(out, "The whole output is saved in ")
	if i < 0 {
		t.Fatalf("no saved file named: %q", out)
	}
	name := out[i+len("The whole output is saved in "):]
	name = name[:strings.Index(name, ":")]
	data, err := os.ReadFile(name)
	if err != nil || !strings.HasPrefix(string(data), "1\n2\n") || !strings.HasSuffix(string(data), "\n20000\n") || strings.Count(string(data), "\n") != 20000 {
		t.Errorf("saved output: %v, %d lines", err, strings.Count(string(data), "\n"))
	}
	// It is kept in the session's own private directory under the
	// outputs directory (hidden from sandboxed commands), not in the
	// shared temp directory.
	dir := filepath.Dir(name)
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 || filepath.Dir(dir) != filepath.Join(env.base, "outputs") {
		t.Errorf("saved in %s (%v, %v), want a 0700 directory in %s", dir, fi, err, filepath.Join(env.base, "outputs"))
	}
	defer func() {
		// The saved output ends with the session, its directory too.
		c.close()
		if _, err := os.Stat(name); err == nil {
			os.Remove(name)
			t.Error("the saved output outlived the session")
		}
		if _, err := os.Stat(dir); err == nil {
			t.Error("the session's output directory outlived the session")
		}
	}()
	// The model reads the saved output as the note says, without being
	// asked about a path outside the project (ask mode reads the project
	// without asking).
	c.mustMode(sid, "ask")
	before := len(c.permissionRequests())
	res, isErr, _ = runTools(t, env, c, sid, toolCallReq{"read_file", map[string]any{"path": name, "offset": 19999, "limit": 2}})
	if isErr[0] || !strings.Contains(res[0], "20000") || len(c.permissionRequests()) != before {
		t.Errorf("read_file of the saved output: error %v, %d permission requests: %q", isErr[0], len(c.permissionRequests())-before, res[0])
	}
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.HasPrefix(l, "[") {
			if _, err := strconv.Atoi(l); err != nil {
				t.Fatalf("a line was cut: %q", l)
			}
		}
	}
}

// TestBackgroundJobs: run_in_background starts a job and returns at once;
// job_output shows its output and state, job_stop ends it, and the jobs
// still running end with the session.
func TestBackgroundJobs(t *testing.T) {
	env := newEnv(t, "")
	c, sid := env.fullSession()
	pidFile := env.path("bg.pid")
	res, isErr, _ := runTools(t, env, c, sid,
		toolCallReq{"run_command", map[string]any{"command": "echo serving; sleep 60", "run_in_background": true}},
		toolCallReq{"run_command", map[string]any{"command": "sleep 1"}},
		toolCallReq{"job_output", map[string]any{"id": "job1"}},
		toolCallReq{"job_stop", map[string]any{"id": "job1"}},
		toolCallReq{"job_output", map[string]any{"id": "job1"}},
		toolCallReq{"run_command", map[string]any{"command": "{ echo $$; readlink /proc/$$/ns/pid; } > " + pidFile + "; exec sleep 60", "run_in_background": true}},
		toolCallReq{"run_command", map[string]any{"command": "sleep 0.5"}},
	)
	if isErr[0] || !strings.HasPrefix(res[0], "Started background job job1.") {
		t.Fatalf("start: %q", res[0])
	}
	if isErr[2] || res[2] != "serving\n[job job1 is still running]\n" {
		t.Errorf("job_output: %q", res[2])
	}
	if isErr[3] || !strings.HasPrefix(res[3], "Stopped.\nserving\n[job job1 was killed by") {
		t.Errorf("job_stop: %q", res[3])
	}
	if !isErr[4] || !strings.Contains(res[4], `no background job "job1"`) {
		t.Errorf("job_output after stop: %q", res[4])
	}
	if isErr[5] {
		t.Fatalf("second job: %q", res[5])
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	c.close()
	waitFor(t, "the job to end with the session", func() bool {
		for _, pid := range commandPids(t, data) {
			if syscall.Kill(pid, 0) == nil {
				return false
			}
		}
		return true
	})
}
