package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"acpd/acp"
	"acpd/model"
)

// TestCustomSubAgent: a Claude Code sub-agent definition
// (.claude/agents/NAME.md: name, description, tools, prompt) is offered
// through task's subagent_type; it runs with its own prompt and only its
// tools, and a call its parent's mode would ask about is refused, not
// asked.
func TestCustomSubAgent(t *testing.T) {
	env := newEnv(t, "")
	env.write(".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews a change for bugs\ntools: Read, Grep, Bash\n---\nYou are the reviewer. Find bugs.\n")
	env.write("pkg/parse.go", "package pkg\n\nfunc Parse() {}\n")
	var subReqs []model.Request
	var mu sync.Mutex
	rec := record(backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		done := func(text string) {
			_ = yield(model.Event{Type: model.EventText, Text: text}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
		}
		call := func(id, name, in string) {
			_ = yield(model.Event{Type: model.EventToolDone, ToolCallID: id, ToolName: name, Input: json.RawMessage(in)}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishToolUse}, nil)
		}
		if strings.HasPrefix(req.System, "You are the reviewer.") {
			mu.Lock()
			subReqs = append(subReqs, *req)
			mu.Unlock()
			switch len(toolResults(*req)) {
			case 0:
				call("s1", "run_command", `{"command":"touch made-by-subagent"}`)
			case 1:
				call("s2", "edit_file", `{"path":"pkg/parse.go","old_string":"Parse","new_string":"Broken"}`)
			default:
				done("No bugs in pkg/parse.go.")
			}
			return
		}
		if len(toolResults(*req)) == 0 {
			call("t1", "task", `{"description":"review","prompt":"Review pkg/","subagent_type":"reviewer"}`)
			return
		}
		done("ok")
	}))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	sid := c.newSession()
	c.mustPrompt(sid, "review pkg", acp.StopReasonEndTurn)
	first := rec.requests()[0]
	var taskDef *model.ToolDef
	for i := range first.Tools {
		if first.Tools[i].Name == "task" {
			taskDef = &first.Tools[i]
		}
	}
	if taskDef == nil || !strings.Contains(taskDef.Description, "- reviewer: Reviews a change for bugs") || !strings.Contains(string(taskDef.InputSchema), `"enum":["reviewer"]`) {
		t.Fatalf("the task tool does not offer the reviewer: %+v", taskDef)
	}
	res := toolResults(rec.last(t))
	if len(res) != 1 || res[0].IsError || !strings.Contains(resultText(res[0]), "No bugs in pkg/parse.go.") {
		t.Fatalf("task result: %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(subReqs) != 3 {
		t.Fatalf("%d sub-agent requests", len(subReqs))
	}
	if names := toolNames(subReqs[0]); !slices.Equal(names, []string{"read_file", "grep", "run_command"}) {
		t.Errorf("sub-agent tools %v, want its file's (Read, Grep, Bash)", names)
	}
	if r := toolResults(subReqs[1])[0]; !r.IsError || !strings.Contains(resultText(r), "Not allowed in a sub-agent") {
		t.Errorf("the command the ask mode would ask about was not refused: %+v", r)
	}
	if r := toolResults(subReqs[2])[1]; !r.IsError || !strings.Contains(resultText(r), `unknown tool "edit_file"`) {
		t.Errorf("the sub-agent used a tool outside its list: %+v", r)
	}
	if _, err := os.Stat(env.path("made-by-subagent")); err == nil {
		t.Error("the sub-agent's command ran")
	}
}

// TestCustomSubAgentAllTools: a sub-agent whose file names no tools gets
// every built-in tool but task and ask_user (its parent asks the user).
func TestCustomSubAgentAllTools(t *testing.T) {
	env := newEnv(t, "")
	env.write(".claude/agents/helper.md", "---\nname: helper\ndescription: Helps\n---\nYou are the helper.\n")
	var sub []string
	var mu sync.Mutex
	env.setModel(mainModel, backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		if strings.HasPrefix(req.System, "You are the helper.") {
			mu.Lock()
			sub = toolNames(*req)
			mu.Unlock()
		} else if len(toolResults(*req)) == 0 {
			_ = yield(model.Event{Type: model.EventToolDone, ToolCallID: "t1", ToolName: "task", Input: json.RawMessage(`{"description":"help","prompt":"Help","subagent_type":"helper"}`)}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishToolUse}, nil)
			return
		}
		_ = yield(model.Event{Type: model.EventText, Text: "ok"}, nil) &&
			yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
	}))
	c := env.start(nil)
	c.mustPrompt(c.newSession(), "help", acp.StopReasonEndTurn)
	mu.Lock()
	defer mu.Unlock()
	if len(sub) == 0 || slices.Contains(sub, "task") || slices.Contains(sub, "ask_user") || !slices.Contains(sub, "read_file") {
		t.Errorf("sub-agent tools %v, want the built-in ones but task and ask_user", sub)
	}
}

// TestSubAgentWebSearch: a custom sub-agent with every tool gets
// web_search only where its model's provider searches, and its search asks
// that model (a nested request with WebSearch set), allowed by the user's
// rule without asking.
func TestSubAgentWebSearch(t *testing.T) {
	for _, searches := range []bool{true, false} {
		env := newEnv(t, "[[permissions.rules]]\naction = \"allow\"\ntool = \"web_search\"\n")
		env.write(".claude/agents/researcher.md", "---\nname: researcher\ndescription: Looks things up\n---\nYou are the researcher.\n")
		var mu sync.Mutex
		var subTools []string
		searched, result := false, ""
		env.setModel(mainModel, backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
			text := func(s string) {
				_ = yield(model.Event{Type: model.EventText, Text: s}, nil) &&
					yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
			}
			call := func(id, name, in string) {
				_ = yield(model.Event{Type: model.EventToolDone, ToolCallID: id, ToolName: name, Input: json.RawMessage(in)}, nil) &&
					yield(model.Event{Type: model.EventFinish, Finish: model.FinishToolUse}, nil)
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case req.WebSearch:
				searched = true
				text("Go 1.26 is the newest release.")
			case strings.HasPrefix(req.System, "You are the researcher."):
				if subTools == nil {
					subTools = toolNames(*req)
				}
				if res := toolResults(*req); len(res) > 0 {
					result = resultText(res[0])
					text("found it")
				} else if searches {
					call("s1", "web_search", `{"query":"newest Go release"}`)
				} else {
					text("no search here")
				}
			case len(toolResults(*req)) == 0:
				call("t1", "task", `{"description":"look up","prompt":"Which Go release is newest?","subagent_type":"researcher"}`)
			default:
				text("ok")
			}
		}))
		c := env.startWith(nil, func(i *model.ModelInfo) { i.WebSearch = searches }, nil)
		c.mustPrompt(c.newSession(), "look it up", acp.StopReasonEndTurn)
		mu.Lock()
		if got := slices.Contains(subTools, "web_search"); got != searches {
			t.Errorf("provider searches %v: sub-agent offered web_search %v (tools %v)", searches, got, subTools)
		}
		if searches && (!searched || !strings.Contains(result, "Go 1.26 is the newest release.")) {
			t.Errorf("the sub-agent's search: asked the model %v, result %q", searched, result)
		}
		mu.Unlock()
	}
}

// TestSubAgentHooks: the user's PreToolUse hook runs for a sub-agent's
// calls as for its parent's: a blocked command does not run and the
// sub-agent reads why; PostToolUse feedback reaches its results.
func TestSubAgentHooks(t *testing.T) {
	guard := filepath.Join(t.TempDir(), "guard.py")
	if err := os.WriteFile(guard, []byte(`import json, sys
ev = json.load(sys.stdin)
cmd = ev.get("tool_input", {}).get("command", "")
if ev["hook_event_name"] == "PreToolUse" and "rm -rf" in cmd:
    print("rm -rf is not allowed here", file=sys.stderr)
    sys.exit(2)
if ev["hook_event_name"] == "PostToolUse":
    print(json.dumps({"decision": "block", "reason": "checked by the post hook"}))
`), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\ncommand = \"python3 " + guard + "\"\n" +
		"[[hooks.PostToolUse]]\nmatcher = \"Bash\"\ncommand = \"python3 " + guard + "\"\n"
	env := newEnv(t, conf)
	env.write(".claude/agents/cleaner.md", "---\nname: cleaner\ndescription: Cleans up\ntools: Bash\n---\nYou are the cleaner.\n")
	env.write("victim/keep.txt", "keep\n")
	var mu sync.Mutex
	var results []string
	env.setModel(mainModel, backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
		call := func(id, name, in string) {
			_ = yield(model.Event{Type: model.EventToolDone, ToolCallID: id, ToolName: name, Input: json.RawMessage(in)}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishToolUse}, nil)
		}
		text := func(s string) {
			_ = yield(model.Event{Type: model.EventText, Text: s}, nil) &&
				yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
		}
		res := toolResults(*req)
		if strings.HasPrefix(req.System, "You are the cleaner.") {
			switch len(res) {
			case 0:
				call("s1", "run_command", `{"command":"rm -rf victim"}`)
			case 1:
				call("s2", "run_command", `{"command":"touch made"}`)
			default:
				mu.Lock()
				for _, p := range res {
					results = append(results, resultText(p))
				}
				mu.Unlock()
				text("cleaned")
			}
			return
		}
		if len(res) == 0 {
			call("t1", "task", `{"description":"clean","prompt":"Clean up","subagent_type":"cleaner"}`)
			return
		}
		text("ok")
	}))
	c, sid := env.fullSession()
	c.mustPrompt(sid, "clean up", acp.StopReasonEndTurn)
	if _, err := os.Stat(env.path("victim/keep.txt")); err != nil {
		t.Fatalf("the sub-agent's rm -rf ran despite the hook: %v", err)
	}
	if _, err := os.Stat(env.path("made")); err != nil {
		t.Errorf("the unblocked command did not run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 2 || !strings.Contains(results[0], "rm -rf is not allowed here") || !strings.Contains(results[1], "checked by the post hook") {
		t.Errorf("the sub-agent's results: %q", results)
	}
}
