package agent

import (
	"context"
	"os"
	"strings"
	"testing"

	"acpd/acp"
	"acpd/model"
)

// A file:// resource link in the prompt reaches the model as the file's
// content, read through the file broker.
func TestPromptResourceLinkIsRead(t *testing.T) {
	env := newEnv(t, "")
	env.write("notes.txt", "the secret word is pomegranate\n")
	rec := record(env.script(`{"type":"text","text":"ok"}`, `{"type":"finish"}`))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	sid := c.newSession()
	var resp acp.PromptResponse
	err := c.call(acp.AgentMethodSessionPrompt, acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{
		{Text: &acp.TextContent{Text: "summarise this"}},
		{ResourceLink: &acp.ResourceLink{Name: "notes.txt", URI: "file://" + env.path("notes.txt")}},
		{ResourceLink: &acp.ResourceLink{Name: "elsewhere", URI: "https://example.invalid/x"}},
	}}, &resp)
	if err != nil || resp.StopReason != acp.StopReasonEndTurn {
		t.Fatalf("prompt: %v %v", resp.StopReason, err)
	}
	var text strings.Builder
	for _, p := range rec.last(t).Messages[0].Parts {
		text.WriteString(p.Text)
	}
	if !strings.Contains(text.String(), "pomegranate") {
		t.Errorf("the model did not get the linked file's content: %q", text.String())
	}
	if !strings.Contains(text.String(), "https://example.invalid/x") {
		t.Errorf("a non-file link is not named: %q", text.String())
	}
}

// A file the agent read and that then changes outside it is named in a
// reminder attached to the newest user message (not in the system prompt,
// which stays the same for prompt caching) until the agent reads it again.
func TestChangedFilesReachTheModel(t *testing.T) {
	env := newEnv(t, "")
	env.write("a.txt", "one\n")
	c := env.start(nil)
	sid := c.newSession()
	runTools(t, env, c, sid, toolCallReq{"read_file", map[string]any{"path": "a.txt"}})

	// An editor-style save: temp file and rename.
	tmp := env.path(".a.txt.swp")
	if err := os.WriteFile(tmp, []byte("two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, env.path("a.txt")); err != nil {
		t.Fatal(err)
	}
	rec := record(okBackend)
	env.setModel(mainModel, rec)
	var req model.Request
	waitFor(t, "the change to be reported", func() bool {
		c.mustPrompt(sid, "anything new?", acp.StopReasonEndTurn)
		req = rec.last(t)
		return strings.Contains(lastUserText(&req), env.path("a.txt"))
	})
	if text := lastUserText(&req); !strings.Contains(text, "changed outside the file tools") || !strings.HasPrefix(text, "anything new?") {
		t.Fatalf("the prompt does not explain the change:\n%s", text)
	}
	if strings.Contains(req.System, env.path("a.txt")) {
		t.Fatalf("the system prompt names the changed file:\n%s", req.System)
	}
	// Reading it again clears the notice.
	runTools(t, env, c, sid, toolCallReq{"read_file", map[string]any{"path": "a.txt"}})
	env.setModel(mainModel, rec)
	c.mustPrompt(sid, "and now?", acp.StopReasonEndTurn)
	if req := rec.last(t); strings.Contains(lastUserText(&req), env.path("a.txt")) {
		t.Fatalf("the file is still reported after a re-read:\n%s", lastUserText(&req))
	}
}

// okBackend answers every request with "ok".
var okBackend = backendFunc(func(ctx context.Context, req *model.Request, yield func(model.Event, error) bool) {
	_ = yield(model.Event{Type: model.EventText, Text: "ok"}, nil) &&
		yield(model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn}, nil)
})
