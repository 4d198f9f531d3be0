package main

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"acpd/cmd/acpd/internal/run"
	"acpd/internal/syncbuf"
)

// runScript is a replay script that writes a file, runs a command and then
// answers; the second response sees the tools' results.
const runScript = `{"type":"text","text":"Writing the file."}
{"type":"tool_done","toolCallId":"call_w","toolName":"write_file","input":{"path":"out.txt","content":"hello from run\n"}}
{"type":"tool_done","toolCallId":"call_r","toolName":"run_command","input":{"command":"echo ran-$((40+2))"}}
{"type":"finish"}
{"type":"text","text":"All done."}
{"type":"finish"}
`

// runSetup returns an isolated environment, a project directory and the
// path of the replay script.
func runSetup(t *testing.T, script string) (*isolation, string, string) {
	t.Helper()
	iso := newIsolation(t)
	project, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return iso, project, writeFile(t, filepath.Join(t.TempDir(), "script.jsonl"), script)
}

func fileContent(path string) (string, bool) {
	b, err := os.ReadFile(path)
	return string(b), err == nil
}

// checkAllowedRun checks the outcome of runScript with every permission
// granted.
func checkAllowedRun(t *testing.T, project, stdout, stderr string, code int) {
	t.Helper()
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if got, ok := fileContent(filepath.Join(project, "out.txt")); got != "hello from run\n" {
		t.Errorf("out.txt = %q (exists %v), want the written content", got, ok)
	}
	if stdout != "Writing the file.\nAll done.\n" {
		t.Errorf("stdout %q", stdout)
	}
	wantStderr(t, stderr, "✓ Write out.txt", "✓ echo ran-$((40+2))")
}

// wantStderr checks that stderr holds each of wants and a clean log of
// acpd run.
func wantStderr(t *testing.T, stderr string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	checkLog(t, "acpd run", stderr)
}

func TestRunYes(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, runScript)
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--yes", "--cwd", project, "--model", "replay/"+script, "write", "the", "file")
	checkAllowedRun(t, project, stdout, stderr, code)
}

// TestRunExternalAgent runs the acpd binary itself as an external agent.
func TestRunExternalAgent(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, runScript)
	bin := acpdBinary(t)
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--yes", "--cwd", project,
		"--agent", "'"+bin+"' --model", "--agent-arg", "replay/"+script, "write the file")
	checkAllowedRun(t, project, stdout, stderr, code)
}

// TestRunRejectsWithoutTTY: without --yes and with stdin not a terminal,
// every permission request is rejected; the model still answers.
func TestRunRejectsWithoutTTY(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, runScript)
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--cwd", project, "--model", "replay/"+script, "write the file")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if _, ok := fileContent(filepath.Join(project, "out.txt")); ok {
		t.Error("out.txt was written although the permission was rejected")
	}
	if !strings.Contains(stdout, "All done.") {
		t.Errorf("stdout %q lacks the answer", stdout)
	}
	wantStderr(t, stderr, `rejected "Write out.txt"`, "--yes", "✗ Write out.txt", "✗ echo")
}

// TestRunModeFull: in full mode no permission is needed, so the write
// happens without --yes (the mode was set on the session).
func TestRunModeFull(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, runScript)
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--mode", "full", "--cwd", project, "--model", "replay/"+script, "write the file")
	checkAllowedRun(t, project, stdout, stderr, code)
	if strings.Contains(stderr, "rejected") {
		t.Errorf("a permission was asked in full mode:\n%s", stderr)
	}
}

func TestRunJSON(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, runScript)
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--json", "--yes", "--cwd", project, "--model", "replay/"+script, "write the file")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	kinds := map[string]int{}
	var text strings.Builder
	for i, l := range lines {
		var m struct {
			SessionID  string `json:"sessionId"`
			StopReason string `json:"stopReason"`
			Update     struct {
				Kind    string          `json:"sessionUpdate"`
				Content json.RawMessage `json:"content"`
			} `json:"update"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d is not JSON: %q: %v", i+1, l, err)
		}
		if i == len(lines)-1 {
			if m.StopReason != "end_turn" {
				t.Errorf("last line %q, want the PromptResponse with end_turn", l)
			}
			continue
		}
		if m.SessionID == "" || m.Update.Kind == "" {
			t.Errorf("line %d is not a session notification: %q", i+1, l)
		}
		kinds[m.Update.Kind]++
		if m.Update.Kind == "agent_message_chunk" {
			var c struct {
				Text string `json:"text"`
			}
			if err := json.Unmarshal(m.Update.Content, &c); err != nil {
				t.Errorf("line %d: %v", i+1, err)
			}
			text.WriteString(c.Text)
		}
	}
	if kinds["tool_call"] != 2 || kinds["tool_call_update"] == 0 {
		t.Errorf("update kinds %v, want 2 tool_call and some tool_call_update", kinds)
	}
	if text.String() != "Writing the file.All done." {
		t.Errorf("message text %q", text.String())
	}
	if strings.Contains(stderr, "✓") {
		t.Errorf("--json still summarised on stderr:\n%s", stderr)
	}
}

func TestRunStopReasonExit(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, `{"type":"text","text":"partial"}`+"\n"+`{"type":"finish","finish":"max_tokens"}`+"\n")
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--cwd", project, "--model", "replay/"+script, "hi")
	if code != run.ExitLimit || stdout != "partial\n" || !strings.Contains(stderr, "max_tokens") {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
}

// twoAnswers is a replay script of two turns, the second of which expects
// the first's answer in its request.
const twoAnswers = `{"type":"text","text":"First answer."}
{"type":"finish"}
{"type":"expect","contains":"First answer."}
{"type":"text","text":"Second answer."}
{"type":"finish"}
`

func TestRunContinuesSession(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, twoAnswers)
	stdout, stderr, code := runCLI(t, iso.Env(), "run", "--json", "--cwd", project, "--model", "replay/"+script, "one")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	var first struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(stdout, "\n", 2)[0]), &first); err != nil || first.SessionID == "" {
		t.Fatalf("no session id in %q: %v", stdout, err)
	}
	stdout, stderr, code = runCLI(t, iso.Env(), "run", "--session", first.SessionID, "--cwd", project, "--model", "replay/"+script, "two")
	if code != 0 || stdout != "Second answer.\n" {
		t.Errorf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	_, stderr, code = runCLI(t, iso.Env(), "run", "--session", "s_missing", "--cwd", project, "--model", "replay/"+script, "two")
	if code != 1 || !strings.Contains(stderr, "not found") {
		t.Errorf("unknown session: exit %d; stderr:\n%s", code, stderr)
	}
}

func TestRunUsageErrors(t *testing.T) {
	t.Parallel()
	iso := newIsolation(t)
	for _, args := range [][]string{
		{"run", "--bogus", "hi"},
		{"run"},
		{"run", "--mode", "yolo", "hi"},
		{"run", "--agent", "'unterminated", "hi"},
		{"run", "--agent-arg", "x", "hi"},
		{"run", "--cwd", "/nonexistent/dir", "hi"},
		{"run", "--answers", "/nonexistent/answers.json", "hi"},
	} {
		stdout, stderr, code := runCLI(t, iso.Env(), args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, "acpd run:") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and a message", args, code, stdout, stderr)
		}
	}
}

// startRun starts `acpd run` with stdin and returns the command and its
// output buffers; the test waits for it.
func startRun(t *testing.T, env []string, stdin string, args ...string) (*exec.Cmd, *syncbuf.Buffer, *syncbuf.Buffer) {
	t.Helper()
	cmd := exec.Command(acpdBinary(t), args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	stdout, stderr := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, stdout, stderr
}

func exitCode(t *testing.T, cmd *exec.Cmd, stderr *syncbuf.Buffer) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(*flagReplyWait)
	defer timer.Stop()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return cmd.ProcessState.ExitCode()
	case <-timer.C:
		cmd.Process.Kill()
		<-done
		t.Fatalf("acpd run did not exit; stderr:\n%s", stderr.String())
	}
	return -1
}

func TestRunPromptFromStdin(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, `{"type":"expect","contains":"the prompt on stdin"}`+"\n"+`{"type":"text","text":"ok"}`+"\n"+`{"type":"finish"}`+"\n")
	cmd, stdout, stderr := startRun(t, iso.Env(), "the prompt on stdin\n", "run", "--cwd", project, "--model", "replay/"+script, "-")
	if code := exitCode(t, cmd, stderr); code != 0 || stdout.String() != "ok\n" {
		t.Errorf("exit %d, stdout %q; stderr:\n%s", code, stdout.String(), stderr.String())
	}
}

// TestRunInterrupt: SIGINT during a turn cancels it through ACP; acpd run
// exits 130.
func TestRunInterrupt(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, `{"type":"text","text":"Starting."}`+"\n"+`{"type":"delay","ms":600000}`+"\n"+`{"type":"finish"}`+"\n")
	cmd, stdout, stderr := startRun(t, iso.Env(), "", "run", "--cwd", project, "--model", "replay/"+script, "wait")
	deadline := time.Now().Add(*flagReplyWait)
	for !strings.Contains(stdout.String(), "Starting.") {
		if time.Now().After(deadline) {
			t.Fatalf("the turn did not start; stderr:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd, stderr); code != 130 {
		t.Errorf("exit %d, want 130; stderr:\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "cancelling the turn") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	checkLog(t, "acpd run", stderr.String())
}

// TestRunAsksOnTerminal: with stdin a terminal, every permission request is
// asked there; answering "1" (allow once) lets the write happen.
func TestRunAsksOnTerminal(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, runScript)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	cmd := exec.Command(acpdBinary(t), "run", "--cwd", project, "--model", "replay/"+script, "write the file")
	cmd.Env = iso.Env()
	cmd.Stdin = tty
	stdout, stderr := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	// Echoed input is drained so the terminal never blocks the child.
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		io.Copy(io.Discard, ptmx) // ends with EIO once the child has exited
	}()
	for answered := 0; answered < 2; answered++ {
		deadline := time.Now().Add(*flagReplyWait)
		for strings.Count(stderr.String(), "choose [1-") <= answered {
			if time.Now().After(deadline) {
				t.Fatalf("question %d was not asked; stderr:\n%s", answered+1, stderr.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if _, err := io.WriteString(ptmx, "1\n"); err != nil {
			t.Fatal(err)
		}
	}
	code := exitCode(t, cmd, stderr)
	<-drained
	checkAllowedRun(t, project, stdout.String(), stderr.String(), code)
	for _, want := range []string{"? Write out.txt", "1) Allow"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// TestRunFetchRefusal: acpd run refuses a fetch --approve leaves open
// without a terminal, saying so (not naming a mode the session is not in),
// and the server sees no request; a --policy rule on the origin allows it.
func TestRunFetchRefusal(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "fetched")
	}))
	defer srv.Close()
	script := `{"type":"tool_done","toolCallId":"call_f","toolName":"web_fetch","input":{"url":"` + srv.URL + `/exfil?data=x"}}
{"type":"finish"}
{"type":"text","text":"done"}
{"type":"finish"}
`
	iso, project, scriptFile := runSetup(t, script)
	_, stderr, code := runCLI(t, iso.Env(), "run", "--mode", "auto-edit", "--cwd", project, "--model", "replay/"+scriptFile, "fetch")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	wantStderr(t, stderr, `rejected "Fetch `+srv.URL+`/exfil?data=x": --approve ask leaves it to the user`)
	if strings.Contains(stderr, "ask mode") {
		t.Errorf("the refusal names ask mode in an auto-edit session:\n%s", stderr)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the refused fetch reached the server (%d requests)", n)
	}
	policy := writeFile(t, filepath.Join(t.TempDir(), "policy.toml"), "[[permissions.rules]]\naction = \"allow\"\ntool = \"web_fetch\"\nmatch = \""+srv.URL+"\"\n")
	_, stderr, code = runCLI(t, iso.Env(), "run", "--mode", "auto-edit", "--policy", policy, "--cwd", project, "--model", "replay/"+scriptFile, "fetch")
	if code != 0 || hits.Load() != 1 || strings.Contains(stderr, "rejected") {
		t.Fatalf("exit %d, %d requests; stderr:\n%s", code, hits.Load(), stderr)
	}
}
