package agent

import (
	"strings"
	"testing"

	"acpd/acp"
	"acpd/tools/mcptools"
)

// lastCommands returns the latest available_commands_update of sid, or nil.
func lastCommands(c *client, sid acp.SessionID) []acp.AvailableCommand {
	var out []acp.AvailableCommand
	for _, u := range c.allUpdates(sid) {
		if u.AvailableCommandsUpdate != nil {
			out = u.AvailableCommandsUpdate.AvailableCommands
		}
	}
	return out
}

func findCommand(cmds []acp.AvailableCommand, name string) (acp.AvailableCommand, bool) {
	for _, c := range cmds {
		if c.Name == name {
			return c, true
		}
	}
	return acp.AvailableCommand{}, false
}

// MCP prompts are announced as /server:prompt commands once the servers are
// connected, and running one sends the expanded prompt to the model.
func TestMCPPromptCommands(t *testing.T) {
	env := newEnv(t, "")
	rec := record(toolSeq())
	env.setModel(mainModel, rec)
	c := env.start(nil)
	sid := c.everythingSession()
	waitFor(t, "MCP prompts in available_commands_update", func() bool {
		_, ok := findCommand(lastCommands(c, sid), "everything:args-prompt")
		return ok
	})
	cmds := lastCommands(c, sid)
	for _, builtin := range []string{"compact", "init", "plan", "everything:simple-prompt"} {
		if _, ok := findCommand(cmds, builtin); !ok {
			t.Errorf("command %s missing from %+v", builtin, cmds)
		}
	}
	args, _ := findCommand(cmds, "everything:args-prompt")
	if args.Input == nil || args.Input.Unstructured == nil || args.Input.Unstructured.Hint != "city [state=…]" {
		t.Errorf("args-prompt input = %+v", args.Input)
	}
	if simple, _ := findCommand(cmds, "everything:simple-prompt"); simple.Input != nil {
		t.Errorf("simple-prompt has input %+v", simple.Input)
	}

	c.mustPrompt(sid, "/everything:simple-prompt", acp.StopReasonEndTurn)
	req := rec.last(t)
	if got := lastUserText(&req); got != "This is a simple prompt without arguments." {
		t.Errorf("user message = %q", got)
	}

	c.mustPrompt(sid, "/everything:args-prompt New York state=NY", acp.StopReasonEndTurn)
	req = rec.last(t)
	if got := lastUserText(&req); got != "What's weather in New York, NY?" {
		t.Errorf("user message = %q", got)
	}

	// A missing required argument is explained without a model request.
	n := len(rec.requests())
	mark := len(c.allUpdates(sid))
	c.mustPrompt(sid, "/everything:args-prompt state=NY", acp.StopReasonEndTurn)
	if len(rec.requests()) != n {
		t.Error("the model was called for an incomplete prompt command")
	}
	if msg := chunkText(c.allUpdates(sid)[mark:]); !strings.Contains(msg, "missing required argument city") {
		t.Errorf("reply = %q", msg)
	}

	// "/a:b" naming no prompt is ordinary text.
	c.mustPrompt(sid, "/nothing:here please", acp.StopReasonEndTurn)
	req = rec.last(t)
	if got := lastUserText(&req); got != "/nothing:here please" {
		t.Errorf("user message = %q", got)
	}
}

// The resource tools list and read an MCP server's resources for the model
// without asking permission.
func TestMCPResourceTools(t *testing.T) {
	env := newEnv(t, "")
	const uri = "demo://resource/dynamic/text/7"
	rec := record(toolSeq(
		toolCallReq{mcptools.ListResources, map[string]any{"server": "everything"}},
		toolCallReq{mcptools.ReadResource, map[string]any{"server": "everything", "uri": uri}},
		toolCallReq{mcptools.ReadResource, map[string]any{"server": "nope", "uri": uri}},
	))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	sid := c.everythingSession()
	c.mustPrompt(sid, "look at the resources", acp.StopReasonEndTurn)
	req := rec.last(t)
	var offered int
	for _, d := range req.Tools {
		if d.Name == mcptools.ListResources || d.Name == mcptools.ReadResource {
			offered++
		}
	}
	if offered != 2 {
		t.Errorf("resource tools offered: %d, want 2", offered)
	}
	res := toolResults(req)
	if len(res) != 3 {
		t.Fatalf("tool results: %+v", res)
	}
	if list := resultText(res[0]); res[0].IsError || !strings.Contains(list, "server=everything uri=demo://resource/static/document/") || !strings.Contains(list, "server=everything template=") {
		t.Errorf("list result = %q", list)
	}
	if text := resultText(res[1]); res[1].IsError || !strings.Contains(text, "7") {
		t.Errorf("read result = %q", text)
	}
	if text := resultText(res[2]); !res[2].IsError || !strings.Contains(text, "unknown or disconnected server") {
		t.Errorf("read of an unknown server = %q (error %v)", text, res[2].IsError)
	}
	if n := len(c.permissionRequests()); n != 0 {
		t.Errorf("%d permission requests, want 0", n)
	}
}

// Without MCP servers, neither the resource tools nor prompt commands exist.
func TestNoMCPNoResourceTools(t *testing.T) {
	env := newEnv(t, "")
	rec := record(toolSeq())
	env.setModel(mainModel, rec)
	c := env.start(nil)
	sid := c.newSession()
	c.mustPrompt(sid, "/x:y hi", acp.StopReasonEndTurn)
	req := rec.last(t)
	for _, d := range req.Tools {
		if strings.HasPrefix(d.Name, "mcp_") {
			t.Errorf("tool %s offered without MCP servers", d.Name)
		}
	}
	if got := lastUserText(&req); got != "/x:y hi" {
		t.Errorf("user message = %q", got)
	}
}
