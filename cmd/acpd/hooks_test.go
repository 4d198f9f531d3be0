//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The hooks tests run Claude Code-protocol hooks through the binary with a
// scripted (replay) model, or with the fake OpenAI server where what the
// model received matters.

// guardScript is a PreToolUse hook as Claude Code users write them: it
// reads the event from stdin and blocks rm -rf with exit code 2.
const guardScript = `import json, sys
ev = json.load(sys.stdin)
cmd = ev.get("tool_input", {}).get("command", "")
if ev.get("tool_name") == "Bash" and "rm -rf" in cmd:
    print("rm -rf is not allowed here", file=sys.stderr)
    sys.exit(2)
`

// hookCards returns the hook cards (tool calls named "hook") of seen.
func hookCards(t *testing.T, seen string) []string {
	t.Helper()
	var cards []string
	for _, l := range strings.Split(seen, "\n") {
		if strings.Contains(l, `"sessionUpdate":"tool_call"`) && strings.Contains(l, `"name":"hook"`) {
			cards = append(cards, l)
		}
	}
	return cards
}

// TestHookPreToolUseBlocksRmRf: a user's PreToolUse hook (matcher "Bash",
// Claude Code's name for run_command) blocks rm -rf with exit code 2: the
// directory survives, the model is told why, the card shows the block, and
// the next command runs.
func TestHookPreToolUseBlocksRmRf(t *testing.T) {
	t.Parallel()
	a := newAttack(t)
	guard := writeFile(t, filepath.Join(a.iso.Home, "hooks", "guard.py"), guardScript)
	a.iso.writeUserConfig(t, "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\ncommand = \"python3 "+guard+"\"\n")
	victim := filepath.Join(a.project, "victim")
	writeFile(t, filepath.Join(victim, "keep.txt"), "keep\n")
	script := a.script(
		toolCall{"run_command", map[string]any{"command": "rm -rf victim"}},
		toolCall{"run_command", map[string]any{"command": "touch made"}},
	)
	seen, asked := a.turn("full", script, nil, "")
	if !a.exists(filepath.Join(victim, "keep.txt")) {
		t.Fatalf("rm -rf ran despite the hook:\n%s", seen)
	}
	if !a.exists(filepath.Join(a.project, "made")) {
		t.Errorf("the unblocked command did not run:\n%s", seen)
	}
	if asked != 0 {
		t.Errorf("%d permission requests for the user's own hooks", asked)
	}
	if !strings.Contains(seen, "A PreToolUse hook blocked this call: rm -rf is not allowed here") {
		t.Errorf("the refused call's result does not give the hook's reason:\n%s", seen)
	}
	cards := hookCards(t, seen)
	if len(cards) != 2 || !strings.Contains(cards[0], "Blocked: rm -rf is not allowed here") || !strings.Contains(cards[0], "Hook PreToolUse: python3") {
		t.Errorf("hook cards %d, want the blocking run then the passing one:\n%s", len(cards), strings.Join(cards, "\n"))
	}
}

// TestHookPostToolUseFormatter: a PostToolUse hook on Edit|Write formats
// the file the model wrote (found through tool_input.file_path).
func TestHookPostToolUseFormatter(t *testing.T) {
	t.Parallel()
	a := newAttack(t)
	format := writeFile(t, filepath.Join(a.iso.Home, "hooks", "fmt.py"), `import json, sys
p = json.load(sys.stdin)["tool_input"]["file_path"]
text = open(p).read()
open(p, "w").write("".join(l.rstrip() + "\n" for l in text.splitlines()))
print("formatted " + p)
`)
	a.iso.writeUserConfig(t, "[[hooks.PostToolUse]]\nmatcher = \"Edit|Write\"\ncommand = \"python3 "+format+"\"\n")
	script := a.script(toolCall{"write_file", map[string]any{"path": "notes.txt", "content": "one   \ntwo\t\n"}})
	seen, _ := a.turn("full", script, nil, "")
	data, err := os.ReadFile(filepath.Join(a.project, "notes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "one\ntwo\n" {
		t.Errorf("notes.txt is %q after the formatter, want %q\n%s", data, "one\ntwo\n", seen)
	}
	cards := hookCards(t, seen)
	if len(cards) != 1 || !strings.Contains(cards[0], "formatted "+filepath.Join(a.project, "notes.txt")) {
		t.Errorf("hook cards: %s", strings.Join(cards, "\n"))
	}
}

// TestHookUserPromptSubmitAddsContext: a UserPromptSubmit hook's plain
// output reaches the model with the user's prompt (which it saw on stdin).
func TestHookUserPromptSubmitAddsContext(t *testing.T) {
	t.Parallel()
	srv := newFakeProvider(t, "openai", "", nil, fakeStep{text: "noted"})
	iso := newIsolation(t)
	seenPrompt := filepath.Join(iso.Home, "prompt.json")
	iso.writeUserConfig(t, "[[hooks.UserPromptSubmit]]\ncommand = \"cat > "+seenPrompt+"; echo 'Ticket ABC-123 is in progress.'\"\n")
	p := startProc(t, withEnv(iso, "ACPD_DISCOVER=0", "OPENAI_API_KEY=sk-hooks", "OPENAI_BASE_URL="+srv.srv.URL+"/v1"), "--model", "openai/gpt-test")
	p.initialize()
	r := p.prompt(p.newSession(e2eProject(t)), "what is next?")
	p.close()
	if r.err != nil || r.stopReason != "end_turn" {
		t.Fatalf("prompt: %v %q", r.err, r.stopReason)
	}
	reqs := srv.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	last, _ := json.Marshal(body.Messages[len(body.Messages)-1])
	if !strings.Contains(string(last), "what is next?") || !strings.Contains(string(last), "Ticket ABC-123 is in progress.") {
		t.Errorf("the user message the model got lacks the prompt or the hook's context: %s", last)
	}
	data, err := os.ReadFile(seenPrompt)
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(data, &ev); err != nil || ev["prompt"] != "what is next?" || ev["hook_event_name"] != "UserPromptSubmit" {
		t.Errorf("the hook got %s (%v)", data, err)
	}
}

// TestHookTimeout: a hook that hangs is killed at its timeout (with what it
// started), the card says so, and the turn goes on.
func TestHookTimeout(t *testing.T) {
	t.Parallel()
	a := newAttack(t)
	pidFile := filepath.Join(a.iso.Home, "sleeper.pid")
	a.iso.writeUserConfig(t, "[[hooks.PreToolUse]]\ncommand = \"sleep 600 & echo $! > "+pidFile+"; wait\"\ntimeout = 1\n")
	script := a.script(toolCall{"run_command", map[string]any{"command": "touch ran"}})
	seen, _ := a.turn("full", script, nil, "")
	cards := hookCards(t, seen)
	if len(cards) != 1 || !strings.Contains(cards[0], "Killed: it timed out after 1s") || !strings.Contains(cards[0], `"status":"failed"`) {
		t.Errorf("hook cards: %s", strings.Join(cards, "\n"))
	}
	if !a.exists(filepath.Join(a.project, "ran")) {
		t.Errorf("a failing (not blocking) hook stopped the call:\n%s", seen)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid := strings.TrimSpace(string(data))
	deadline := time.Now().Add(10 * time.Second)
	for {
		// SIGKILL is delivered asynchronously: poll until it is gone.
		stat, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil || strings.Contains(string(stat), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the hung hook's child survived its timeout: %s", stat)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHookProjectTrust: a project's hooks (Claude Code's
// .claude/settings.json) run only once the user trusts them: asked once,
// remembered across processes, asked again when the file changes, and not
// run when refused.
func TestHookProjectTrust(t *testing.T) {
	t.Parallel()
	a := newAttack(t)
	marker := filepath.Join(a.project, "hook-ran")
	settings := filepath.Join(a.project, ".claude", "settings.json")
	writeSettings := func(extra string) {
		cfg := map[string]any{"hooks": map[string]any{"PreToolUse": []any{map[string]any{"matcher": "Bash",
			"hooks": []any{map[string]any{"type": "command", "command": "echo ran >> \"$CLAUDE_PROJECT_DIR/hook-ran\"" + extra}}}}}}
		b, _ := json.Marshal(cfg)
		writeFile(t, settings, string(b))
	}
	writeSettings("")
	script := a.script(toolCall{"run_command", map[string]any{"command": "true"}})
	runs := func() int {
		data, _ := os.ReadFile(marker)
		return strings.Count(string(data), "ran")
	}

	seen, asked := a.turn("full", script, nil, "allow_always")
	if asked != 1 || !strings.Contains(seen, `echo ran \u003e\u003e \"$CLAUDE_PROJECT_DIR/hook-ran\"`) || runs() != 1 {
		t.Fatalf("first session: %d requests, %d runs; want the trust question showing the command, then one run:\n%s", asked, runs(), seen)
	}
	// A new process: remembered.
	seen, asked = a.turn("full", script, nil, "reject_once")
	if asked != 0 || runs() != 2 {
		t.Fatalf("second session: %d requests, %d runs; want no question and a second run:\n%s", asked, runs(), seen)
	}
	// The file changed: asked again; refused, the hook does not run.
	writeSettings(" # changed")
	seen, asked = a.turn("full", script, nil, "reject_once")
	if asked != 1 || runs() != 2 {
		t.Fatalf("after the change: %d requests, %d runs; want the question again and no run:\n%s", asked, runs(), seen)
	}
	if len(hookCards(t, seen)) != 0 {
		t.Errorf("a refused hook shows a run card:\n%s", seen)
	}
}

// TestHookStopContinues: a Stop hook that blocks (JSON decision "block")
// sends the model back to work with its reason; the next time
// (stop_hook_active true) it lets the turn end.
func TestHookStopContinues(t *testing.T) {
	t.Parallel()
	a := newAttack(t)
	stop := writeFile(t, filepath.Join(a.iso.Home, "hooks", "stop.py"), `import json, sys
ev = json.load(sys.stdin)
if not ev["stop_hook_active"]:
    print(json.dumps({"decision": "block", "reason": "run the tests before you stop"}))
`)
	a.iso.writeUserConfig(t, "[[hooks.Stop]]\ncommand = \"python3 "+stop+"\"\n")
	script := writeFile(t, filepath.Join(t.TempDir(), "stop.jsonl"), `{"type":"text","text":"first answer"}
{"type":"finish"}
{"type":"text","text":"the tests pass"}
{"type":"finish"}
`)
	seen, _ := a.turn("full", script, nil, "")
	if !strings.Contains(seen, "first answer") || !strings.Contains(seen, "the tests pass") {
		t.Fatalf("the Stop hook did not send the model back once:\n%s", seen)
	}
	cards := hookCards(t, seen)
	if len(cards) != 2 || !strings.Contains(cards[0], "Blocked: run the tests before you stop") || strings.Contains(cards[1], "Blocked") {
		t.Errorf("hook cards: %s", strings.Join(cards, "\n"))
	}
}

// TestHookStopNotOnQuestion: a turn that ends on ask_user's question (the
// client shows no forms, so the question is the agent's message) waits for
// the user's answer: the Stop hook that would send the model back to work
// does not run.
func TestHookStopNotOnQuestion(t *testing.T) {
	t.Parallel()
	a := newAttack(t)
	ran := filepath.Join(a.iso.Home, "stop-ran")
	stop := writeFile(t, filepath.Join(a.iso.Home, "hooks", "stop.py"), `import json, sys
open(`+"\""+ran+"\""+`, "a").write("ran\n")
print(json.dumps({"decision": "block", "reason": "run the tests before you stop"}))
`)
	a.iso.writeUserConfig(t, "[[hooks.Stop]]\ncommand = \"python3 "+stop+"\"\n")
	script := a.script(toolCall{"ask_user", map[string]any{"question": "Which database should the cache use?"}})
	seen, _ := a.turn("full", script, nil, "")
	if !strings.Contains(seen, "Which database should the cache use?") {
		t.Fatalf("the question was not the agent's message:\n%s", seen)
	}
	if a.exists(ran) {
		t.Errorf("the Stop hook ran on a turn that ends on a question:\n%s", seen)
	}
	if cards := hookCards(t, seen); len(cards) != 0 {
		t.Errorf("hook cards on a question: %s", strings.Join(cards, "\n"))
	}
}
