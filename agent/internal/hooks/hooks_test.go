package hooks

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func skipWindows(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the hooks here are POSIX shell lines")
	}
}

func run(t *testing.T, h Hook, input any) Result {
	t.Helper()
	dir := t.TempDir()
	return Runner{Dir: dir, Env: os.Environ(), ProjectDir: dir}.Run(context.Background(), h, input)
}

func TestExitCodes(t *testing.T) {
	skipWindows(t)
	for _, tc := range []struct {
		name, event, cmd string
		block, failed    bool
		decision, reason string
		context          string
	}{
		{"exit 2 blocks with stderr", PreToolUse, `cat >/dev/null; echo "no rm -rf here" >&2; exit 2`, true, false, "deny", "no rm -rf here", ""},
		{"exit 1 is a non-blocking error", PreToolUse, `echo oops >&2; exit 1`, false, true, "", "", ""},
		{"exit 0 plain stdout is context for UserPromptSubmit", UserPromptSubmit, `echo "ticket ABC-1 is open"`, false, false, "", "", "ticket ABC-1 is open"},
		{"exit 0 plain stdout is no context for PostToolUse", PostToolUse, `echo formatted`, false, false, "", "", ""},
		{"JSON deny", PreToolUse, `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"protected file"}}'`, true, false, "deny", "protected file", ""},
		{"JSON allow", PreToolUse, `echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'`, false, false, "allow", "", ""},
		{"legacy approve", PreToolUse, `echo '{"decision":"approve","reason":"ok"}'`, false, false, "allow", "ok", ""},
		{"JSON block on Stop", Stop, `echo '{"decision":"block","reason":"run the tests first"}'`, true, false, "", "run the tests first", ""},
		{"JSON additional context", PostToolUse, `echo '{"hookSpecificOutput":{"additionalContext":"lint: 2 warnings"}}'`, false, false, "", "", "lint: 2 warnings"},
		{"invalid JSON fails", PostToolUse, `echo '{not json'`, false, true, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, Hook{Event: tc.event, Command: tc.cmd}, map[string]any{"hook_event_name": tc.event})
			if r.Block != tc.block || r.Failed() != tc.failed || r.Decision != tc.decision || r.Reason != tc.reason || r.Context != tc.context {
				t.Errorf("block %v failed %v decision %q reason %q context %q (exit %d, err %v); want %v %v %q %q %q",
					r.Block, r.Failed(), r.Decision, r.Reason, r.Context, r.Exit, r.Err, tc.block, tc.failed, tc.decision, tc.reason, tc.context)
			}
		})
	}
}

func TestInputEnvAndDir(t *testing.T) {
	skipWindows(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "seen")
	r := Runner{Dir: dir, Env: []string{"PATH=" + os.Getenv("PATH"), "KEEP=1"}, ProjectDir: "/the/project"}.Run(context.Background(),
		Hook{Event: PreToolUse, Command: `cat > seen; printf '%s|%s|%s|%s' "$PWD" "$CLAUDE_PROJECT_DIR" "$KEEP" "${SECRET-unset}" >> seen`},
		map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "ls"}})
	if r.Failed() {
		t.Fatal(r.Err, r.Stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tool_input":{"command":"ls"},"tool_name":"Bash"}` + dir + "|/the/project|1|unset"
	if string(data) != want {
		t.Errorf("the hook saw %q, want %q", data, want)
	}
}

func TestTimeoutKillsTheGroup(t *testing.T) {
	skipWindows(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	r := Runner{Dir: dir, Env: os.Environ()}.Run(context.Background(),
		Hook{Event: PreToolUse, Command: `sleep 300 & echo $! > pid; wait`, Timeout: 300 * time.Millisecond}, nil)
	if !r.TimedOut || !r.Failed() || r.Block || !strings.Contains(r.Err.Error(), "timed out after 300ms") {
		t.Fatalf("timed out %v failed %v block %v err %v", r.TimedOut, r.Failed(), r.Block, r.Err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	// The grandchild was in the hook's group, which got SIGKILL: it dies
	// (the kernel delivers the signal asynchronously; it may show as
	// running for a moment).
	if stat, alive := waitDead(strings.TrimSpace(string(data))); alive {
		t.Errorf("the hook's child still runs: %s", stat)
	}
}

func TestMatch(t *testing.T) {
	s := Set{
		{Event: PreToolUse, Matcher: "Bash", Command: "a"},
		{Event: PreToolUse, Matcher: "Edit|Write", Command: "b"},
		{Event: PreToolUse, Matcher: "", Command: "c"},
		{Event: PreToolUse, Matcher: "mcp__memory__.*", Command: "d"},
		{Event: PostToolUse, Matcher: "*", Command: "e"},
		{Event: PreToolUse, Matcher: "run_command", Command: "f"},
		{Event: PreToolUse, Matcher: "(", Command: "g"},
	}
	names := func(hs []Hook) string {
		var out []string
		for _, h := range hs {
			out = append(out, h.Command)
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		event string
		tool  []string
		want  string
	}{
		{PreToolUse, []string{"run_command", "Bash"}, "a,c,f"},
		{PreToolUse, []string{"write_file", "Write"}, "b,c"},
		{PreToolUse, []string{"mcp__memory__store"}, "c,d"},
		{PreToolUse, []string{"mcp__other__store"}, "c"},
		{PreToolUse, []string{"("}, "c,g"},
		{PostToolUse, []string{"read_file", "Read"}, "e"},
		{Stop, nil, ""},
	} {
		if got := names(s.Match(tc.event, tc.tool...)); got != tc.want {
			t.Errorf("Match(%s, %v) = %s, want %s", tc.event, tc.tool, got, tc.want)
		}
	}
}

func TestReadClaude(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "settings.json")
	if err := os.WriteFile(p, []byte(`{"permissions":{"allow":["Bash(ls)"]},"hooks":{
	  "PostToolUse":[{"matcher":"Edit|Write","hooks":[{"type":"command","command":"npx prettier --write","timeout":30}]}],
	  "PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"guard.sh"},{"type":"prompt","prompt":"x"}]}],
	  "Notification":[{"hooks":[{"type":"command","command":"notify-send hi"}]}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s, skipped, err := ReadClaude(p, true)
	if err != nil {
		t.Fatal(err)
	}
	want := Set{
		{Event: PreToolUse, Matcher: "Bash", Command: "guard.sh", Source: p, Project: true},
		{Event: PostToolUse, Matcher: "Edit|Write", Command: "npx prettier --write", Timeout: 30 * time.Second, Source: p, Project: true},
	}
	if len(s) != len(want) || s[0] != want[0] || s[1] != want[1] {
		t.Errorf("hooks %+v, want %+v", s, want)
	}
	if strings.Join(skipped, ";") != "PreToolUse (prompt);Notification" {
		t.Errorf("skipped %q", skipped)
	}
	if s, _, err := ReadClaude(filepath.Join(dir, "missing.json"), true); err != nil || s != nil {
		t.Errorf("missing file: %v %v", s, err)
	}
	if err := os.WriteFile(p, []byte(`{"hooks":`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadClaude(p, true); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("broken file: %v, want an error naming it", err)
	}
}

func TestDigestAndTrust(t *testing.T) {
	a := Set{{Event: PreToolUse, Matcher: "Bash", Command: "guard.sh", Source: "/p/.claude/settings.json", Project: true}}
	b := Set{{Event: PreToolUse, Matcher: "Bash", Command: "guard.sh --strict", Source: "/p/.claude/settings.json", Project: true}}
	same := Set{{Event: PreToolUse, Matcher: "Bash", Command: "guard.sh", Source: "/p/.claude/settings.json", Project: true}}
	if a.Digest() == b.Digest() || a.Digest() != same.Digest() {
		t.Fatal("digest does not follow the commands")
	}
	path := filepath.Join(t.TempDir(), "state", "hooks-trust.json")
	tr := NewTrust(path)
	if tr.Trusted("/p", a.Digest()) {
		t.Fatal("trusted before approval")
	}
	if err := tr.Approve("/p", a.Digest()); err != nil {
		t.Fatal(err)
	}
	again := NewTrust(path)
	if !again.Trusted("/p", a.Digest()) || again.Trusted("/p", b.Digest()) || again.Trusted("/q", a.Digest()) {
		t.Error("approval not remembered per project and digest")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("trust file: %v %v", fi, err)
	}
	if err := os.WriteFile(path, []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	if again.Trusted("/p", a.Digest()) {
		t.Error("an unreadable trust file trusted something")
	}
}

// waitDead waits, at most 10 s, for pid to be gone or a zombie; alive
// reports that it was neither, with its /proc stat.
func waitDead(pid string) (stat string, alive bool) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil || strings.Contains(string(b), ") Z ") {
			return "", false
		}
		if time.Now().After(deadline) {
			return string(b), true
		}
		time.Sleep(10 * time.Millisecond)
	}
}
