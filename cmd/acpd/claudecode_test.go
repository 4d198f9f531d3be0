//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"acpd/cmd/acpd/internal/run"
	"acpd/internal/testpeers"
)

// claudeCodeACP returns node and the entry point of claude-code-acp (the
// npm package @zed-industries/claude-code-acp in testdata), or skips.
func claudeCodeACP(t *testing.T) (node, entry string) {
	t.Helper()
	entry = filepath.Join(testpeers.ModulesDir(t), "@zed-industries", "claude-code-acp", "dist", "index.js")
	_, err := os.Stat(entry)
	if err == nil {
		node, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("claude-code-acp missing (CI=true): %v; %s", err, testpeers.InstallHint)
		}
		t.Skipf("claude-code-acp missing: %v; %s", err, testpeers.InstallHint)
	}
	return node, entry
}

// fakeClaude is a local Anthropic Messages server for Claude Code: the
// conversation with tools writes out.txt (the Write tool), runs a command
// (Bash), then answers; other requests (titles, checks) get a short text.
// With stall set, the first conversation request holds its stream open
// until the client goes away.
type fakeClaude struct {
	t      *testing.T
	dir    string
	stall  bool
	mu     sync.Mutex
	paths  []string
	tools  []string
	stalls chan struct{} // gets a value when a stalled request started
}

func (f *fakeClaude) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.paths = append(f.paths, r.Method+" "+r.URL.Path)
	f.mu.Unlock()
	if !strings.HasSuffix(r.URL.Path, "/v1/messages") {
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"input_tokens": 100}`)
			return
		}
		http.NotFound(w, r)
		return
	}
	// Decoded loosely: Claude Code sends tool results' content as a string.
	var req struct {
		Model    string                  `json:"model"`
		Stream   bool                    `json:"stream"`
		Tools    []struct{ Name string } `json:"tools"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	results := 0
	for _, m := range req.Messages {
		var blocks []struct{ Type string }
		if json.Unmarshal(m.Content, &blocks) == nil {
			for _, b := range blocks {
				if b.Type == "tool_result" {
					results++
				}
			}
		}
	}
	var write, bash string
	for _, tl := range req.Tools {
		switch {
		case strings.HasSuffix(tl.Name, "Write") && (write == "" || strings.HasPrefix(tl.Name, "mcp__acp")):
			write = tl.Name
		case strings.HasSuffix(tl.Name, "Bash") && (bash == "" || strings.HasPrefix(tl.Name, "mcp__acp")):
			bash = tl.Name
		}
	}
	step := fakeStep{text: "ok"}
	if write != "" && bash != "" {
		f.mu.Lock()
		f.tools = []string{write, bash}
		f.mu.Unlock()
		switch results {
		case 0:
			if f.stall {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(200)
				w.(http.Flusher).Flush()
				f.stalls <- struct{}{}
				<-r.Context().Done()
				return
			}
			args, _ := json.Marshal(map[string]string{"file_path": filepath.Join(f.dir, "out.txt"), "content": "hello from claude\n"})
			step = fakeStep{callID: "toolu_w", tool: write, args: string(args)}
		case 1:
			args, _ := json.Marshal(map[string]any{"command": "echo ran-$((40+2))", "description": "Print a number", "timeout": 60000})
			step = fakeStep{callID: "toolu_b", tool: bash, args: string(args)}
		default:
			step = fakeStep{text: "All done."}
		}
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "msg_x", "type": "message", "role": "assistant", "model": req.Model,
			"content": []any{map[string]any{"type": "text", "text": step.text}}, "stop_reason": "end_turn", "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 10, "output_tokens": 2}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	anthropicStream(&sseWriter{w}, step)
}

// claudeEnv is the environment for a run hosting claude-code-acp against
// the fake server: no network beyond it, no telemetry, no updates.
func claudeEnv(iso *isolation, url string) []string {
	return append(iso.Env(),
		"ANTHROPIC_BASE_URL="+url,
		"ANTHROPIC_API_KEY=sk-ant-test-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1", "DISABLE_AUTOUPDATER=1", "DISABLE_ERROR_REPORTING=1",
		// Claude Code refuses to skip permissions as root outside a sandbox;
		// claude-code-acp offers that mode, and tests may run as root.
		"IS_SANDBOX=1",
		"CLAUDE_CONFIG_DIR="+filepath.Join(iso.Home, ".claude"),
	)
}

// claudeAgent is the --agent line: sh records the agent's pid (the group
// leader) and execs node.
func claudeAgent(node, entry, pidFile string) string {
	return fmt.Sprintf(`sh -c 'echo $$ > "$0"; exec "$1" "$2"' '%s' '%s' '%s'`, pidFile, node, entry)
}

func readPidFile(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestRunClaudeCodeACP hosts a real third-party agent, claude-code-acp
// (npm), against a local Anthropic server, in one of its own modes
// (acceptEdits): it writes a file through acpd's fs/write_text_file and runs
// a command on acpd's terminal; nothing of it is left running afterwards.
func TestRunClaudeCodeACP(t *testing.T) {
	t.Parallel()
	node, entry := claudeCodeACP(t)
	iso, project, _ := runSetup(t, "")
	f := &fakeClaude{t: t, dir: project}
	srv := httptest.NewServer(f)
	defer srv.Close()
	pidFile := filepath.Join(t.TempDir(), "pid")
	start := time.Now()
	stdout, stderr, code := runCLI(t, claudeEnv(iso, srv.URL), "--log-level", "debug", "run", "--yes", "--mode", "acceptEdits", "--output", "json", "--cwd", project,
		"--agent", claudeAgent(node, entry, pidFile), "write the file and run the command")
	t.Logf("the run took %v; requests %v; tools %v", time.Since(start), f.paths, f.tools)
	if code != 0 {
		t.Fatalf("exit %d; stdout %s; stderr:\n%s", code, stdout, stderr)
	}
	res := checkResult(t, stdout)
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "agent stopped") {
			t.Logf("claude-code-acp ignores the end of its input: %s", l)
		}
	}
	if got, _ := fileContent(filepath.Join(project, "out.txt")); got != "hello from claude\n" {
		t.Errorf("out.txt = %q", got)
	}
	if !strings.Contains(res.Text, "All done.") || res.StopReason != "end_turn" {
		t.Errorf("result %+v", res)
	}
	ran := false
	for _, tc := range res.ToolCalls {
		ran = ran || tc.Kind == "execute" && tc.Status == "completed"
	}
	if !ran {
		t.Errorf("no command ran: %+v", res.ToolCalls)
	}
	pid := readPidFile(t, pidFile)
	if left := groupMembers(pid); len(left) > 0 {
		syscall.Kill(-pid, syscall.SIGKILL)
		t.Errorf("processes %v of claude-code-acp outlived acpd run", left)
	}
}

// TestRunClaudeCodeACPCancel: SIGINT while claude-code-acp waits for the
// model cancels the turn (exit 130) and leaves no process behind.
func TestRunClaudeCodeACPCancel(t *testing.T) {
	t.Parallel()
	node, entry := claudeCodeACP(t)
	iso, project, _ := runSetup(t, "")
	f := &fakeClaude{t: t, dir: project, stall: true, stalls: make(chan struct{}, 4)}
	srv := httptest.NewServer(f)
	defer srv.Close()
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd, stdout, stderr := startRun(t, claudeEnv(iso, srv.URL), "", "run", "--output", "json", "--cwd", project,
		"--agent", claudeAgent(node, entry, pidFile), "write the file")
	select {
	case <-f.stalls:
	case <-time.After(*flagReplyWait):
		t.Fatalf("the model was not asked; stderr:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd, stderr); code != run.ExitCancelled {
		t.Errorf("exit %d, want %d; stderr:\n%s", code, run.ExitCancelled, stderr.String())
	}
	if res := checkResult(t, stdout.String()); res.StopReason != "cancelled" {
		t.Errorf("result %+v", res)
	}
	pid := readPidFile(t, pidFile)
	if left := groupMembers(pid); len(left) > 0 {
		syscall.Kill(-pid, syscall.SIGKILL)
		t.Errorf("processes %v of claude-code-acp outlived acpd run", left)
	}
}
