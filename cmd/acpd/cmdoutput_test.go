package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestE2ECommandOutputOverTerminalLimit: the model calls run_command with
// `seq -w 1 200000` (1.4 MB, more than the 1 MiB acpd's terminal keeps);
// the next model request carries the output's real first and last lines,
// one note with the real numbers of the lines cut, and names a file that
// holds the whole output, byte for byte.
func TestE2ECommandOutputOverTerminalLimit(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("seq is POSIX")
	}
	want, err := exec.Command("seq", "-w", "1", "200000").Output()
	if err != nil {
		t.Skip("no seq:", err)
	}
	srv := newFakeProvider(t, "openai", "", nil,
		fakeStep{callID: "call_seq", tool: "run_command", args: `{"command":"seq -w 1 200000"}`},
		fakeStep{text: "Done."})
	iso := newIsolation(t)
	p := startProc(t, withEnv(iso, "ACPD_DISCOVER=0", "OPENAI_API_KEY=sk-e2e-cmdout", "OPENAI_BASE_URL="+srv.srv.URL+"/v1"), "--model", "openai/gpt-test")
	p.initialize()
	sid := p.newSession(e2eProject(t))
	p.mustCall("session/set_mode", map[string]any{"sessionId": sid, "modeId": "full"}, nil)
	r := p.prompt(sid, "count")
	if r.err != nil || r.stopReason != "end_turn" {
		t.Fatalf("prompt: %v, stop %q\nstderr:\n%s", r.err, r.stopReason, p.stderr.String())
	}
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	var req oaRequest
	if err := json.Unmarshal(reqs[1].Body, &req); err != nil {
		t.Fatal(err)
	}
	got := ""
	for _, m := range req.Messages {
		if m.Role == "tool" && m.ToolCallID == "call_seq" {
			got = m.text()
		}
	}
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	var notes []int
	for i, l := range lines {
		if strings.HasPrefix(l, "[") {
			notes = append(notes, i)
		}
	}
	// The head, one note, the tail, the exit code (a sandbox warning may
	// follow).
	if len(lines) < 3 || len(notes) < 2 || lines[notes[1]] != "[exit code 0]" || strings.Contains(got, "truncated") {
		t.Fatalf("the model got %d lines with notes %v:\n%.500s", len(lines), notes, got)
	}
	k := notes[0]
	note := lines[k]
	var n, bytes, from, to, total int
	if _, err := fmt.Sscanf(note, "[… %d lines (%d bytes) cut from the middle of the output, lines %d-%d of %d …", &n, &bytes, &from, &to, &total); err != nil {
		t.Fatalf("note %q: %v", note, err)
	}
	for i, l := range lines[:k] {
		if l != fmt.Sprintf("%06d", i+1) {
			t.Fatalf("line %d the model got is %q", i+1, l)
		}
	}
	tail := lines[k+1 : notes[1]]
	for i, l := range tail {
		if l != fmt.Sprintf("%06d", to+1+i) {
			t.Fatalf("tail line %d is %q, want line %d", i, l, to+1+i)
		}
	}
	if from != k+1 || to+len(tail) != 200000 || total != 200000 || n != to-from+1 || tail[len(tail)-1] != "200000" || k < 100 || len(tail) < 100 {
		t.Fatalf("note %q after %d head lines, before %d tail lines", note, k, len(tail))
	}
	m := regexp.MustCompile(`The whole output is saved in (\S+): read it with read_file \(offset (\d+)\) or search it with grep; it has 200000 lines \((\d+) bytes\)\.\]$`).FindStringSubmatch(note)
	if m == nil || m[3] != fmt.Sprint(len(want)) || m[2] != fmt.Sprint(from) {
		t.Fatalf("note %q", note)
	}
	if saved, err := os.ReadFile(m[1]); err != nil || string(saved) != string(want) {
		t.Fatalf("the saved output (%d bytes, %v) is not the output", len(saved), err)
	}
	p.close()
}
