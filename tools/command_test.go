package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"acpd/acp"
	"acpd/permissions"
	"acpd/sandbox"
)

// shellEnv is an env in full mode (commands run without asking) for
// run_command's tests, which run real shells on real PTYs.
func shellEnv(t *testing.T) *testEnv {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the tests' command lines are POSIX shell")
	}
	return newTestEnv(t, permissions.ModeFull)
}

func command(t *testing.T, line string, more ...any) string {
	in := map[string]any{"command": line}
	for i := 0; i+1 < len(more); i += 2 {
		in[more[i].(string)] = more[i+1]
	}
	return input(t, in)
}

// exitCode is the exit code in a result's raw output, or -1.
func exitCode(r Result) int {
	raw, _ := r.Raw.(map[string]any)
	if c, ok := raw["exitCode"].(*int); ok && c != nil {
		return *c
	}
	return -1
}

// A command's output and exit status are the model's text; the card
// shows the output alone for a success. The environment is the session's
// children's, with pagers off; standard input is at end of file.
func TestRunCommandOutput(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	res := e.run(t.Context(), "run_command", command(t, `printf 'a\nb\n'; echo "$ACPD_TOOLS_TEST $PAGER $GIT_TERMINAL_PROMPT"; cat`))
	if got := mustOK(t, res); got != "a\nb\nmarked cat 0\n[exit code 0]\n" || !res.Bounded || exitCode(res) != 0 {
		t.Fatalf("result %q, raw %v", got, res.Raw)
	}
	if len(res.Content) != 1 || res.Content[0].Content.Content.Text.Text != "```\na\nb\nmarked cat 0\n```" {
		t.Fatalf("card %+v", res.Content)
	}
	// The call reports itself in progress once allowed.
	if ups := e.recordedUpdates(); len(ups) == 0 || ups[0].Status == nil || *ups[0].Status != acp.ToolCallStatusInProgress {
		t.Fatalf("updates %+v", ups)
	}

	res = e.run(t.Context(), "run_command", command(t, "echo failing; exit 3"))
	if !res.IsError || res.Text != "failing\n[exit code 3]\n" || exitCode(res) != 3 || res.Content[0].Content.Content.Text.Text != "```\nfailing\n[exit code 3]\n```" {
		t.Fatalf("exit 3: %+v", res)
	}
	res = e.run(t.Context(), "run_command", command(t, "kill -KILL $$"))
	if !res.IsError || !strings.Contains(res.Text, "[killed by ") {
		t.Fatalf("killed: %+v", res)
	}
	// Output without a final newline gets one before the status.
	if got := mustOK(t, e.run(t.Context(), "run_command", command(t, "printf x"))); got != "x\n[exit code 0]\n" {
		t.Fatalf("no newline: %q", got)
	}
	// cwd, relative to the working directory.
	if err := os.Mkdir(e.path("sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := mustOK(t, e.run(t.Context(), "run_command", command(t, "pwd", "cwd", "sub"))); got != e.path("sub")+"\n[exit code 0]\n" {
		t.Fatalf("pwd in sub: %q", got)
	}
}

// run_command's refusals start nothing.
func TestRunCommandRefusals(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	e.write("file.txt", "")
	for _, tc := range []struct{ in, want string }{
		{`{"command":"  "}`, "command is empty"},
		{command(t, "touch ran", "cwd", "file.txt"), "cwd file.txt is not a directory"},
		{command(t, "touch ran", "cwd", "missing"), "cwd missing is not a directory"},
		{command(t, "touch ran", "shell", "sh"), `invalid run_command arguments: unknown argument "shell"`},
		{`{"command":["touch","ran"]}`, "invalid run_command arguments"},
	} {
		mustFail(t, e.run(t.Context(), "run_command", tc.in), tc.want)
	}
	// Plan mode denies commands; ask mode asks, naming the command line.
	e.mode = permissions.ModePlan
	mustFail(t, e.run(t.Context(), "run_command", command(t, "touch ran")), "Not allowed:")
	e.mode, e.answer = permissions.ModeAsk, permissions.RejectOnce
	mustFail(t, e.run(t.Context(), "run_command", command(t, "touch ran")), "rejected")
	if asked := e.requests(); len(asked) != 1 || asked[0].req.Command != "touch ran" || *asked[0].upd.Title != "touch ran" || asked[0].req.Kind != acp.ToolKindExecute {
		t.Fatalf("requests %+v", asked)
	}
	if _, err := os.Stat(e.path("ran")); err == nil {
		t.Fatal("a refused command ran")
	}
	// cmd is taken for command.
	e.answer = permissions.AllowOnce
	mustOK(t, e.run(t.Context(), "run_command", `{"cmd":"touch ran"}`))
	if _, err := os.Stat(e.path("ran")); err != nil {
		t.Fatalf("the allowed command did not run: %v", err)
	}
}

// A command over its time limit is killed, with its output so far.
func TestRunCommandTimeout(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	res := e.run(t.Context(), "run_command", command(t, "echo begun; sleep 60", "timeout_ms", 300))
	raw, _ := res.Raw.(map[string]any)
	if !res.IsError || !strings.HasPrefix(res.Text, "begun\n") || !strings.Contains(res.Text, "[timed out after 300ms; the command was stopped]") || raw["timedOut"] != true {
		t.Fatalf("timeout: %+v", res)
	}
}

// Cancelling the turn stops the command, whose output so far is kept; the
// client sees the output stream while the command runs.
func TestRunCommandCancel(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var once sync.Once
	e.onUpdate = func(u acp.ToolCallUpdate) {
		for _, c := range u.Content {
			if c.Content != nil && c.Content.Content.Text != nil && strings.Contains(c.Content.Content.Text.Text, "waiting") {
				once.Do(cancel)
			}
		}
	}
	res := e.run(ctx, "run_command", command(t, "echo waiting; sleep 60"))
	raw, _ := res.Raw.(map[string]any)
	if !res.IsError || !strings.HasPrefix(res.Text, "waiting\n") || !strings.HasSuffix(res.Text, "[cancelled by the user; the command was stopped]\n") || raw["cancelled"] != true {
		t.Fatalf("cancel: %+v", res)
	}
}

// With Zed's terminal_output extension, the client is told the terminal,
// sent all of its output and its exit status through _meta.
func TestRunCommandOutputMeta(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	e.outputMeta = true
	mustOK(t, e.run(t.Context(), "run_command", command(t, "echo one; echo two")))
	var id any
	var data strings.Builder
	var exit map[string]any
	for _, u := range e.recordedUpdates() {
		if m, ok := u.Meta["terminal_info"].(map[string]any); ok {
			id = m["terminal_id"]
		}
		if m, ok := u.Meta["terminal_output"].(map[string]any); ok {
			if m["terminal_id"] != id {
				t.Fatalf("output of terminal %v, announced %v", m["terminal_id"], id)
			}
			data.WriteString(m["data"].(string))
		}
		if m, ok := u.Meta["terminal_exit"].(map[string]any); ok {
			exit = m
		}
	}
	if id == nil || strings.ReplaceAll(data.String(), "\r", "") != "one\ntwo\n" || exit == nil || exit["exit_code"] != 0 || exit["terminal_id"] != id {
		t.Fatalf("terminal %v, data %q, exit %v", id, data.String(), exit)
	}
}

// Output over the model's bound is cut to head and tail and saved whole to
// a file the note names, which read_file reads without asking and which
// the session removes when it ends.
func TestRunCommandLongOutput(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	res := e.run(t.Context(), "run_command", command(t, `i=0; while [ $i -lt 5000 ]; do echo "line $i of the output"; i=$((i+1)); done`))
	got := mustOK(t, res)
	if !strings.HasPrefix(got, "line 0 of the output\n") || !strings.Contains(got, "line 4999 of the output\n") || strings.Contains(got, "line 2500 of") || len(got) > 2*30_000+1000 {
		t.Fatalf("bounded output: %d bytes", len(got))
	}
	if len(e.jobs.saved) != 1 {
		t.Fatalf("saved outputs %v", e.jobs.saved)
	}
	saved := e.jobs.saved[0]
	if !strings.Contains(got, saved) {
		t.Fatalf("the note does not name %s", saved)
	}
	e.mode = permissions.ModeAsk
	read := mustOK(t, e.run(t.Context(), "read_file", input(t, map[string]any{"path": saved, "offset": 2501, "limit": 1})))
	if !strings.HasPrefix(read, "  2501\tline 2500 of the output\n") || len(e.requests()) != 0 {
		t.Fatalf("read of the saved output %q, %d requests", read, len(e.requests()))
	}
	e.jobs.Close(t.Context())
	if _, err := os.Stat(saved); !os.IsNotExist(err) {
		t.Fatalf("the saved output outlived the session: %v", err)
	}
}

// The title is the command line verbatim, every line of it.
func TestCommandTitle(t *testing.T) {
	t.Parallel()
	tool := runCommandTool(Options{})
	for in, want := range map[string]string{
		`{"command":"make\nrm -rf /"}`: "make\nrm -rf /",
		`{"command":"  "}`:             "Run a command",
		`{"command":`:                  "Run a command",
	} {
		if got := tool.Title(json.RawMessage(in)); got != want {
			t.Errorf("title of %s = %q, want %q", in, got, want)
		}
	}
}

// In the OS sandbox a command writes inside the session roots but not
// elsewhere; the failure asks nothing (its output is the command's own) but
// tells the model how to request escalation; running it outside the
// sandbox needs that explicit request and the user's approval, and refused,
// the write stays undone.
func TestRunCommandSandboxed(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	if st := sandbox.Available(); st.Err != nil {
		t.Skipf("no OS sandbox: %v", st.Err)
	}
	e.sandbox = sandbox.Policy{Mode: sandbox.WorkspaceWrite, Roots: []string{e.dir}}
	mustOK(t, e.run(t.Context(), "run_command", command(t, "echo in > inside.txt")))
	if got := e.read("inside.txt"); got != "in\n" {
		t.Fatalf("inside.txt = %q", got)
	}
	// Outside the roots and outside /tmp (private in the sandbox, so a
	// write there would not even meet the denial).
	outDir, err := os.MkdirTemp("/var/tmp", "acpd-tools-test-")
	if err != nil {
		t.Skipf("no /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(outDir) })
	out := filepath.Join(outDir, "outside.txt")
	e.answer = permissions.RejectOnce
	res := e.run(t.Context(), "run_command", command(t, "echo out > "+out))
	if !res.IsError {
		t.Fatalf("a write outside the roots succeeded in the sandbox: %+v", res)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the sandboxed command wrote outside the roots: %v", err)
	}
	if asked := e.requests(); len(asked) != 0 || !strings.Contains(res.Text, `"require_escalated"`) {
		t.Fatalf("requests %+v after a denial; result %q", asked, res.Text)
	}
	esc := command(t, "echo out > "+out, "sandbox_permissions", "require_escalated", "justification", "write next to the project")
	mustFail(t, e.run(t.Context(), "run_command", esc), "not approved")
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a refused escalation wrote outside the roots: %v", err)
	}
	if asked := e.requests(); len(asked) != 1 || !asked[0].req.Escalate || !strings.HasPrefix(*asked[0].upd.Title, EscalationTitlePrefix) {
		t.Fatalf("requests %+v", asked)
	}
	e.answer = permissions.AllowOnce
	mustOK(t, e.run(t.Context(), "run_command", esc))
	if _, err := os.Stat(out); err != nil {
		t.Fatalf("the approved escalation did not run outside the sandbox: %v", err)
	}
}

// In a repository whose .git the sandbox keeps read-only, a git command
// that writes asks to run outside the sandbox, saying why; git status does
// not.
func TestRunCommandGitWriteEscalates(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	if st := sandbox.Available(); st.Err != nil {
		t.Skipf("no OS sandbox: %v", st.Err)
	}
	if err := os.MkdirAll(e.path(".git/objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.sandbox = sandbox.Policy{Mode: sandbox.WorkspaceWrite, Roots: []string{e.dir}}
	if _, ok := e.sandbox.ProtectedGitDir(e.dir); !ok {
		t.Skip("the sandbox does not keep this .git read-only")
	}
	e.answer = permissions.RejectOnce
	mustFail(t, e.run(t.Context(), "run_command", command(t, "git add -A && git commit -m x")), "git add writes to .git")
	if asked := e.requests(); len(asked) != 1 || !asked[0].req.Escalate {
		t.Fatalf("requests %+v", asked)
	}
	e.run(t.Context(), "run_command", command(t, "git status || true"))
	if asked := e.requests(); len(asked) != 1 {
		t.Fatalf("git status asked: %+v", asked)
	}
}

// Output longer than the terminal keeps (seq -w 1 200000 is 1.4 MB, the
// terminal keeps 1 MiB) reaches the model as its real first and last
// lines, with one note naming the real numbers of the lines cut, and the
// saved file is the whole output, byte for byte.
func TestRunCommandOutputOverTerminalLimit(t *testing.T) {
	t.Parallel()
	e := shellEnv(t)
	want, err := exec.Command("seq", "-w", "1", "200000").Output()
	if err != nil {
		t.Skip("no seq:", err)
	}
	res := e.run(t.Context(), "run_command", command(t, "seq -w 1 200000"))
	got := mustOK(t, res)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if lines[0] != "000001" || lines[len(lines)-1] != "[exit code 0]" || lines[len(lines)-2] != "200000" {
		t.Fatalf("first line %q, last lines %q", lines[0], lines[max(len(lines)-3, 0):])
	}
	if strings.Contains(got, "truncated") || strings.Count(got, "[") != 2 {
		t.Fatalf("more than one note:\n%s", notes(got))
	}
	// Every line shown is the real line of its number: the head from 1,
	// the tail up to 200000, the note naming exactly the lines between.
	var n, from, to, total, bytes int
	var name string
	k := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "[… ") })
	note := lines[k]
	if _, err := fmt.Sscanf(note, "[… %d lines (%d bytes) cut from the middle of the output, lines %d-%d of %d …", &n, &bytes, &from, &to, &total); err != nil {
		t.Fatalf("note %q: %v", note, err)
	}
	for i, l := range lines[:k] {
		if l != fmt.Sprintf("%06d", i+1) {
			t.Fatalf("head line %d is %q", i+1, l)
		}
	}
	tail := lines[k+1 : len(lines)-1]
	for i, l := range tail {
		if l != fmt.Sprintf("%06d", to+1+i) {
			t.Fatalf("tail line %d is %q, want line %d", i, l, to+1+i)
		}
	}
	if from != k+1 || to+len(tail) != 200000 || total != 200000 || n != to-from+1 || bytes != 7*n {
		t.Fatalf("note %q after %d head lines, before %d tail lines", note, k, len(tail))
	}
	m := regexp.MustCompile(`The whole output is saved in (\S+): read it with read_file \(offset (\d+)\) or search it with grep; it has 200000 lines \((\d+) bytes\)\.\]$`).FindStringSubmatch(note)
	if m == nil || m[2] != fmt.Sprint(from) || m[3] != fmt.Sprint(len(want)) {
		t.Fatalf("note %q does not name the saved file", note)
	}
	name = m[1]
	if saved, err := os.ReadFile(name); err != nil || string(saved) != string(want) {
		t.Fatalf("the saved output (%d bytes, %v) is not the output", len(saved), err)
	}
	if !strings.Contains(note, fmt.Sprintf("read_file (offset %d)", from)) {
		t.Fatalf("note %q", note)
	}
	if raw, _ := res.Raw.(map[string]any); raw["truncated"] != true {
		t.Errorf("raw output %v", res.Raw)
	}
}

// notes are the bracketed lines of a result.
func notes(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "[") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
