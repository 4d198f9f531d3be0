package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"acpd/acp"
	"acpd/agent/internal/listing"
	"acpd/model"
	"acpd/session"
)

func TestInitializeNegotiatesVersion(t *testing.T) {
	env := newEnv(t, "")
	c := env.connect()
	for _, asked := range []acp.ProtocolVersion{2, 1} {
		var resp acp.InitializeResponse
		if err := c.call(acp.AgentMethodInitialize, acp.InitializeRequest{ProtocolVersion: asked}, &resp); err != nil {
			t.Fatalf("initialize(%d): %v", asked, err)
		}
		if resp.ProtocolVersion != acp.ProtocolVersion1 {
			t.Errorf("client asked %d: agent answered version %d, want 1", asked, resp.ProtocolVersion)
		}
		caps := resp.AgentCapabilities
		if caps == nil {
			t.Fatal("no agentCapabilities")
		}
		if !caps.LoadSession {
			t.Error("loadSession not advertised")
		}
		if pc := caps.PromptCapabilities; pc == nil || !pc.Image || !pc.EmbeddedContext {
			t.Errorf("promptCapabilities = %+v, want image and embeddedContext", pc)
		}
		sc := caps.SessionCapabilities
		if sc == nil || sc.List == nil || sc.Resume == nil || sc.Close == nil || sc.Delete == nil {
			t.Errorf("sessionCapabilities = %+v, want list, resume, close and delete", sc)
		}
		if resp.AgentInfo == nil || resp.AgentInfo.Name != "acpd-test" || resp.AgentInfo.Version != "0.0.0-test" {
			t.Errorf("agentInfo = %+v", resp.AgentInfo)
		}
	}
}

func TestNewSessionValidatesCwd(t *testing.T) {
	env := newEnv(t, "")
	c := env.start(nil)
	var resp acp.NewSessionResponse
	err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: "relative/dir", McpServers: []acp.McpServer{}}, &resp)
	if rpcCode(err) != int(acp.ErrorCodeInvalidParams) || !strings.Contains(err.Error(), "absolute") {
		t.Errorf("relative cwd: %v, want -32602 saying the cwd must be absolute", err)
	}
	missing := env.path("does-not-exist")
	err = c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: missing, McpServers: []acp.McpServer{}}, &resp)
	if err == nil {
		t.Fatal("nonexistent cwd: session/new succeeded")
	}
	if !strings.Contains(err.Error(), "does-not-exist") {
		t.Errorf("nonexistent cwd: error %q does not name the directory", err)
	}
	if metas, err := env.store.List(session.Filter{}); err != nil || len(metas) != 0 {
		t.Errorf("failed session/new left sessions behind: %v %v", metas, err)
	}
}

// TestNewSessionReplyPrecedesUpdates: clients drop updates for a session
// they do not know yet, so the session/new reply must come first.
func TestNewSessionReplyPrecedesUpdates(t *testing.T) {
	env := newEnv(t, "")
	c := env.start(nil)
	for range 5 {
		var resp acp.NewSessionResponse
		pos, err := c.callAt(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{}}, &resp)
		if err != nil {
			t.Fatal(err)
		}
		if pos < 0 {
			t.Fatal("reply not found on the wire")
		}
		var ups []wireUpdate
		waitFor(t, "available_commands_update", func() bool {
			ups = c.updates(resp.SessionID)
			return len(ups) > 0
		})
		if ups[0].pos < pos {
			t.Fatalf("session/update %s (wire #%d) arrived before the session/new reply (wire #%d)", kind(ups[0].u), ups[0].pos, pos)
		}
		if ups[0].u.AvailableCommandsUpdate == nil {
			t.Errorf("first update is %s, want available_commands_update", kind(ups[0].u))
		} else if !slices.ContainsFunc(ups[0].u.AvailableCommandsUpdate.AvailableCommands, func(c acp.AvailableCommand) bool { return c.Name == "plan" }) {
			t.Errorf("available commands %+v lack /plan", ups[0].u.AvailableCommandsUpdate.AvailableCommands)
		}
		if resp.Modes == nil || resp.Modes.CurrentModeID != modeAsk {
			t.Errorf("modes = %+v, want current mode ask", resp.Modes)
		}
		if len(resp.ConfigOptions) != 3 {
			t.Errorf("config options = %d, want mode, model and thought_level", len(resp.ConfigOptions))
		}
	}
}

// optionValue returns the current value of a config option.
func optionValue(opts []acp.SessionConfigOption, id string) string {
	for _, o := range opts {
		if string(o.ID) == id && o.Select != nil {
			return string(o.Select.CurrentValue)
		}
	}
	return ""
}

func TestSetConfigOption(t *testing.T) {
	env := newEnv(t, "")
	c := env.start(nil)
	sid := c.newSession()

	// Valid values: the reply carries the options, and the updates follow it.
	for _, tc := range []struct{ id, value string }{
		{optMode, modePlan},
		{optModel, otherModel},
		{optThought, "high"},
	} {
		var resp acp.SetSessionConfigOptionResponse
		mark := len(c.in.messages()) - 1
		pos, err := c.callAt(acp.AgentMethodSessionSetConfigOption, acp.SetSessionConfigOptionRequest{
			SessionID: sid, ConfigID: acp.SessionConfigID(tc.id),
			ValueID: &acp.SetSessionConfigOptionRequestValueID{Value: acp.SessionConfigValueID(tc.value)},
		}, &resp)
		if err != nil {
			t.Fatalf("set %s=%s: %v", tc.id, tc.value, err)
		}
		if got := optionValue(resp.ConfigOptions, tc.id); got != tc.value {
			t.Errorf("set %s=%s: reply says %q", tc.id, tc.value, got)
		}
		var after []acp.SessionUpdate
		waitFor(t, "config_option_update", func() bool {
			after = c.updatesBetween(sid, pos, -1)
			return slices.Contains(kinds(after), "config_option_update")
		})
		if before := c.updatesBetween(sid, mark, pos); slices.Contains(kinds(before), "config_option_update") {
			t.Errorf("set %s: config_option_update sent before the reply", tc.id)
		}
		for _, u := range after {
			if u.ConfigOptionUpdate != nil {
				if got := optionValue(u.ConfigOptionUpdate.ConfigOptions, tc.id); got != tc.value {
					t.Errorf("set %s=%s: config_option_update says %q", tc.id, tc.value, got)
				}
			}
		}
		if wantMode := tc.id == optMode; slices.Contains(kinds(after), "current_mode_update") != wantMode {
			t.Errorf("set %s: current_mode_update sent = %v, want %v", tc.id, !wantMode, wantMode)
		}
	}

	// Invalid values are -32602 and change nothing.
	for _, tc := range []struct{ id, value string }{
		{optMode, "yolo"},
		{optModel, "no-provider"},
		{optThought, "extreme"},
		{"temperature", "1"},
	} {
		_, err := c.setConfig(sid, tc.id, tc.value)
		if rpcCode(err) != int(acp.ErrorCodeInvalidParams) || !strings.Contains(err.Error(), tc.value) && !strings.Contains(err.Error(), tc.id) {
			t.Errorf("set %s=%s: %v, want -32602 naming the bad value", tc.id, tc.value, err)
		}
	}
	_, err := c.setConfig("s_unknown", optMode, modeAsk)
	if rpcCode(err) != int(acp.ErrorCodeResourceNotFound) {
		t.Errorf("set on unknown session: %v, want -32002", err)
	}

	// Legacy session/set_mode: current_mode_update after the reply.
	pos, err := c.callAt(acp.AgentMethodSessionSetMode, acp.SetSessionModeRequest{SessionID: sid, ModeID: modeAutoEdit}, &acp.SetSessionModeResponse{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "current_mode_update", func() bool {
		for _, u := range c.updatesBetween(sid, pos, -1) {
			if u.CurrentModeUpdate != nil && u.CurrentModeUpdate.CurrentModeID == modeAutoEdit {
				return true
			}
		}
		return false
	})
	err = c.call(acp.AgentMethodSessionSetMode, acp.SetSessionModeRequest{SessionID: sid, ModeID: "yolo"}, &acp.SetSessionModeResponse{})
	if rpcCode(err) != int(acp.ErrorCodeInvalidParams) {
		t.Errorf("set_mode yolo: %v, want -32602", err)
	}

	// Legacy session/set_model sets the model option.
	pos, err = c.callAt(acp.AgentMethodSessionSetModel, acp.SetSessionModelRequest{SessionID: sid, ModelID: mainModel}, &acp.SetSessionModelResponse{})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "config_option_update with the model", func() bool {
		for _, u := range c.updatesBetween(sid, pos, -1) {
			if u.ConfigOptionUpdate != nil && optionValue(u.ConfigOptionUpdate.ConfigOptions, optModel) == mainModel {
				return true
			}
		}
		return false
	})

	// Settings persist: a second agent loading the session sees them.
	c.close()
	c2 := env.start(nil)
	var resp acp.LoadSessionResponse
	if err := c2.call(acp.AgentMethodSessionLoad, acp.LoadSessionRequest{SessionID: sid, Cwd: env.cwd, McpServers: []acp.McpServer{}}, &resp); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]string{optMode: modeAutoEdit, optModel: mainModel, optThought: "high"} {
		if got := optionValue(resp.ConfigOptions, id); got != want {
			t.Errorf("after load, %s = %q, want %q", id, got, want)
		}
	}
	if resp.Modes == nil || resp.Modes.CurrentModeID != modeAutoEdit {
		t.Errorf("after load, modes = %+v", resp.Modes)
	}
}

func TestPlanSlashCommand(t *testing.T) {
	env := newEnv(t, "")
	rec := record(toolSeq())
	env.setModel(mainModel, rec)
	c := env.start(nil)
	sid := c.newSession()
	ups := c.promptUpdates(sid, "/plan")
	if n := len(rec.requests()); n != 0 {
		t.Errorf("/plan made %d model requests", n)
	}
	var mode, opts bool
	for _, u := range ups {
		if u.CurrentModeUpdate != nil && u.CurrentModeUpdate.CurrentModeID == modePlan {
			mode = true
		}
		if u.ConfigOptionUpdate != nil && optionValue(u.ConfigOptionUpdate.ConfigOptions, optMode) == modePlan {
			opts = true
		}
	}
	if !mode || !opts {
		t.Errorf("/plan updates %v: want current_mode_update and config_option_update to plan", kinds(ups))
	}
	if !strings.Contains(chunkText(ups), "plan mode") {
		t.Errorf("/plan said %q", chunkText(ups))
	}
	// The mode took effect: a write is refused without asking.
	env.setModel(mainModel, toolSeq(toolCallReq{"write_file", map[string]string{"path": "x.txt", "content": "x"}}))
	c.mustPrompt(sid, "write x", acp.StopReasonEndTurn)
	if fileExists(env.path("x.txt")) || len(c.permissionRequests()) != 0 {
		t.Error("write_file ran or asked in plan mode")
	}
}

// TestLoadReplaysHistory: session/load in a second agent (the first one
// closed) replays the conversation and the current settings before its
// reply, and the model continues with the whole transcript.
func TestLoadReplaysHistory(t *testing.T) {
	env := newEnv(t, "")
	env.setModel(mainModel, env.script(
		`{"type":"reasoning","text":"Think "}`,
		`{"type":"reasoning","text":"hard."}`,
		`{"type":"text","text":"Hello "}`,
		`{"type":"text","text":"world"}`,
		`{"type":"tool_done","toolCallId":"p1","toolName":"update_plan","input":{"entries":[{"content":"Step one","status":"in_progress","priority":"high"}]}}`,
		`{"type":"finish"}`,
		`{"type":"text","text":"Planned."}`,
		`{"type":"finish"}`,
	))
	c1 := env.start(nil)
	sid := c1.newSession()
	c1.mustPrompt(sid, "make a plan", acp.StopReasonEndTurn)
	c1.mustMode(sid, modeAutoEdit)
	c1.close()

	rec := record(env.script(
		`{"type":"text","text":"one"}`, `{"type":"finish"}`,
		`{"type":"text","text":"two"}`, `{"type":"finish"}`,
		`{"type":"expect","contains":"Hello world"}`,
		`{"type":"expect","contains":"make a plan"}`,
		`{"type":"expect","contains":"Step one"}`,
		`{"type":"text","text":"Still here."}`, `{"type":"finish"}`,
	))
	env.setModel(mainModel, rec)
	c2 := env.start(nil)
	var resp acp.LoadSessionResponse
	pos, err := c2.callAt(acp.AgentMethodSessionLoad, acp.LoadSessionRequest{SessionID: sid, Cwd: env.cwd, McpServers: []acp.McpServer{}}, &resp)
	if err != nil {
		t.Fatalf("session/load: %v", err)
	}
	before := c2.updatesBetween(sid, -1, pos)
	ks := kinds(before)
	t.Logf("replayed: %v", ks)

	var user, thought, msgs []string
	for _, u := range before {
		switch {
		case u.UserMessageChunk != nil:
			user = append(user, u.UserMessageChunk.Content.Text.Text)
		case u.AgentThoughtChunk != nil:
			thought = append(thought, u.AgentThoughtChunk.Content.Text.Text)
		case u.AgentMessageChunk != nil:
			msgs = append(msgs, u.AgentMessageChunk.Content.Text.Text)
			if u.AgentMessageChunk.MessageID == nil {
				t.Error("replayed agent chunk without messageId")
			}
		}
	}
	if !slices.Equal(user, []string{"make a plan"}) {
		t.Errorf("user chunks %q", user)
	}
	if !slices.Equal(thought, []string{"Think hard."}) {
		t.Errorf("thought chunks %q, want one coalesced chunk", thought)
	}
	if !slices.Equal(msgs, []string{"Hello world", "Planned."}) {
		t.Errorf("agent chunks %q, want the two messages coalesced", msgs)
	}
	if st := finalStatus(before, "p1"); st != acp.ToolCallStatusCompleted {
		t.Errorf("replayed tool call ends %q, want completed", st)
	}
	if !slices.Contains(ks, "plan") {
		t.Error("plan not replayed")
	}
	// The current settings come after the history, still before the reply.
	lastHistory := -1
	for i, k := range ks {
		if k == "agent_message_chunk" || k == "tool_call" || k == "tool_call_update" || k == "plan" {
			lastHistory = i
		}
	}
	modeAt := slices.IndexFunc(before[lastHistory+1:], func(u acp.SessionUpdate) bool {
		return u.CurrentModeUpdate != nil && u.CurrentModeUpdate.CurrentModeID == modeAutoEdit
	})
	optsAt := slices.IndexFunc(before[lastHistory+1:], func(u acp.SessionUpdate) bool {
		return u.ConfigOptionUpdate != nil && optionValue(u.ConfigOptionUpdate.ConfigOptions, optMode) == modeAutoEdit
	})
	if modeAt < 0 || optsAt < 0 || optsAt < modeAt {
		t.Errorf("after the history want current_mode_update then config_option_update; got %v", ks[lastHistory+1:])
	}
	if optionValue(resp.ConfigOptions, optMode) != modeAutoEdit {
		t.Errorf("load reply mode = %q", optionValue(resp.ConfigOptions, optMode))
	}
	if slices.Contains(ks, "available_commands_update") {
		t.Error("available_commands_update sent before the load reply")
	}

	// The transcript is restored: the next request carries the history.
	c2.mustPrompt(sid, "still there?", acp.StopReasonEndTurn)
	req := rec.last(t)
	if len(req.Messages) != 5 {
		t.Errorf("request after load has %d messages, want 5 (user, assistant, tool result, assistant, user)", len(req.Messages))
	}
	if got := chunkText(c2.updatesBetween(sid, pos, -1)); !strings.Contains(got, "Still here.") {
		t.Errorf("turn after load said %q", got)
	}
	c2.close()

	// session/resume restores without replaying.
	c3 := env.start(nil)
	pos, err = c3.callAt(acp.AgentMethodSessionResume, acp.ResumeSessionRequest{SessionID: sid, Cwd: env.cwd}, &acp.ResumeSessionResponse{})
	if err != nil {
		t.Fatalf("session/resume: %v", err)
	}
	if ups := c3.updatesBetween(sid, -1, pos); len(ups) != 0 {
		t.Errorf("session/resume replayed %v", kinds(ups))
	}
	rec2 := record(toolSeq())
	env.setModel(mainModel, rec2)
	c3.mustPrompt(sid, "after resume", acp.StopReasonEndTurn)
	if n := len(rec2.last(t).Messages); n != 7 {
		t.Errorf("request after resume has %d messages, want 7", n)
	}
}

func TestLoadOfSessionOpenElsewhere(t *testing.T) {
	env := newEnv(t, "")
	c1 := env.start(nil)
	sid := c1.newSession()
	c2 := env.start(nil)
	for _, method := range []string{acp.AgentMethodSessionLoad, acp.AgentMethodSessionResume} {
		var err error
		if method == acp.AgentMethodSessionLoad {
			err = c2.call(method, acp.LoadSessionRequest{SessionID: sid, Cwd: env.cwd, McpServers: []acp.McpServer{}}, &acp.LoadSessionResponse{})
		} else {
			err = c2.call(method, acp.ResumeSessionRequest{SessionID: sid, Cwd: env.cwd}, &acp.ResumeSessionResponse{})
		}
		if err == nil || !strings.Contains(err.Error(), "is open in") {
			t.Errorf("%s of a session open in another agent: %v, want an error saying where it is open", method, err)
		}
	}
	// The same agent refuses a second open too.
	err := c1.call(acp.AgentMethodSessionLoad, acp.LoadSessionRequest{SessionID: sid, Cwd: env.cwd, McpServers: []acp.McpServer{}}, &acp.LoadSessionResponse{})
	if err == nil || !strings.Contains(err.Error(), "already open") {
		t.Errorf("second load in the same agent: %v", err)
	}
	// Unknown and malformed ids.
	err = c2.call(acp.AgentMethodSessionLoad, acp.LoadSessionRequest{SessionID: "s_0000000000000000", Cwd: env.cwd, McpServers: []acp.McpServer{}}, &acp.LoadSessionResponse{})
	if rpcCode(err) != int(acp.ErrorCodeResourceNotFound) {
		t.Errorf("load of an unknown session: %v, want -32002", err)
	}
	err = c2.call(acp.AgentMethodSessionLoad, acp.LoadSessionRequest{SessionID: "../../etc/passwd", Cwd: env.cwd, McpServers: []acp.McpServer{}}, &acp.LoadSessionResponse{})
	if err == nil {
		t.Error("load of a path-like session id succeeded")
	}
}

func TestListSessionsPaging(t *testing.T) {
	env := newEnv(t, "")
	other := env.outside
	want := map[string]bool{}
	for i := range 60 {
		cwd := env.cwd
		if i%12 == 0 {
			cwd = other
		}
		l, err := env.store.Create(session.Meta{Cwd: cwd})
		if err != nil {
			t.Fatal(err)
		}
		want[l.ID()] = true
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
	}
	c := env.start(nil)
	var p1, p2 acp.ListSessionsResponse
	if err := c.call(acp.AgentMethodSessionList, acp.ListSessionsRequest{}, &p1); err != nil {
		t.Fatal(err)
	}
	if len(p1.Sessions) != listing.PageSize || p1.NextCursor == nil {
		t.Fatalf("first page: %d sessions, cursor %v; want %d and a cursor", len(p1.Sessions), p1.NextCursor, listing.PageSize)
	}
	if err := c.call(acp.AgentMethodSessionList, acp.ListSessionsRequest{Cursor: p1.NextCursor}, &p2); err != nil {
		t.Fatal(err)
	}
	if len(p2.Sessions) != 60-listing.PageSize || p2.NextCursor != nil {
		t.Fatalf("second page: %d sessions, cursor %v; want %d and no cursor", len(p2.Sessions), p2.NextCursor, 60-listing.PageSize)
	}
	seen := map[string]bool{}
	for _, s := range append(p1.Sessions, p2.Sessions...) {
		if seen[string(s.SessionID)] || !want[string(s.SessionID)] {
			t.Errorf("session %s listed twice or unknown", s.SessionID)
		}
		seen[string(s.SessionID)] = true
		if s.UpdatedAt == nil {
			t.Errorf("session %s without updatedAt", s.SessionID)
		}
	}
	if len(seen) != 60 {
		t.Errorf("listed %d distinct sessions, want 60", len(seen))
	}

	var f acp.ListSessionsResponse
	if err := c.call(acp.AgentMethodSessionList, acp.ListSessionsRequest{Cwd: &other}, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Sessions) != 5 || f.NextCursor != nil {
		t.Errorf("cwd filter: %d sessions, want 5", len(f.Sessions))
	}
	for _, s := range f.Sessions {
		if s.Cwd != other {
			t.Errorf("cwd filter returned a session in %s", s.Cwd)
		}
	}
	bad := "!!"
	if err := c.call(acp.AgentMethodSessionList, acp.ListSessionsRequest{Cursor: &bad}, &f); rpcCode(err) != int(acp.ErrorCodeInvalidParams) {
		t.Errorf("bad cursor: %v, want -32602", err)
	}
	rel := "relative"
	if err := c.call(acp.AgentMethodSessionList, acp.ListSessionsRequest{Cwd: &rel}, &f); rpcCode(err) != int(acp.ErrorCodeInvalidParams) {
		t.Errorf("relative cwd filter: %v, want -32602", err)
	}
}

func TestCloseAndDelete(t *testing.T) {
	env := newEnv(t, "")
	c := env.start(nil)
	sid := c.newSession()
	if err := c.call(acp.AgentMethodSessionClose, acp.CloseSessionRequest{SessionID: sid}, &acp.CloseSessionResponse{}); err != nil {
		t.Fatalf("close: %v", err)
	}
	// Closed means unlocked: the store can open it.
	l, _, err := env.store.Open(string(sid))
	if err != nil {
		t.Fatalf("after session/close the log is still locked: %v", err)
	}
	l.Close()
	_, err = c.prompt(sid, "hello")
	if rpcCode(err) != int(acp.ErrorCodeResourceNotFound) {
		t.Errorf("prompt on a closed session: %v, want -32002", err)
	}
	if err := c.call(acp.AgentMethodSessionClose, acp.CloseSessionRequest{SessionID: sid}, &acp.CloseSessionResponse{}); rpcCode(err) != int(acp.ErrorCodeResourceNotFound) {
		t.Errorf("second close: %v, want -32002", err)
	}
	if err := c.call(acp.AgentMethodSessionDelete, acp.DeleteSessionRequest{SessionID: sid}, &acp.DeleteSessionResponse{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := env.store.Get(string(sid)); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("after delete, store.Get: %v", err)
	}
	err = c.call(acp.AgentMethodSessionDelete, acp.DeleteSessionRequest{SessionID: sid}, &acp.DeleteSessionResponse{})
	if rpcCode(err) != int(acp.ErrorCodeResourceNotFound) {
		t.Errorf("delete of a deleted session: %v, want -32002", err)
	}
	err = c.call(acp.AgentMethodSessionDelete, acp.DeleteSessionRequest{SessionID: "s_ffffffffffffffff"}, &acp.DeleteSessionResponse{})
	if rpcCode(err) != int(acp.ErrorCodeResourceNotFound) {
		t.Errorf("delete of an unknown session: %v, want -32002", err)
	}
	// Deleting an open session closes it first.
	sid2 := c.newSession()
	if err := c.call(acp.AgentMethodSessionDelete, acp.DeleteSessionRequest{SessionID: sid2}, &acp.DeleteSessionResponse{}); err != nil {
		t.Errorf("delete of an open session: %v", err)
	}
	if _, err := c.prompt(sid2, "x"); rpcCode(err) != int(acp.ErrorCodeResourceNotFound) {
		t.Errorf("prompt on a deleted session: %v", err)
	}
}

func TestUnknownMethodAndBadParams(t *testing.T) {
	env := newEnv(t, "")
	c := env.start(nil)
	if err := c.call("session/frobnicate", map[string]any{}, nil); rpcCode(err) != -32601 {
		t.Errorf("unknown method: %v, want -32601", err)
	}
	if err := c.call(acp.AgentMethodSessionPrompt, map[string]any{"sessionId": 7}, nil); rpcCode(err) != int(acp.ErrorCodeInvalidParams) {
		t.Errorf("bad params: %v, want -32602", err)
	}
	sid := c.newSession()
	var resp acp.PromptResponse
	// An empty prompt (CodeCompanion's empty Enter) is a turn with nothing
	// to do, not an error.
	err := c.call(acp.AgentMethodSessionPrompt, acp.PromptRequest{SessionID: sid, Prompt: []acp.ContentBlock{}}, &resp)
	if err != nil || resp.StopReason != acp.StopReasonEndTurn {
		t.Errorf("empty prompt: %v %+v, want end_turn", err, resp)
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// sessionRecords returns the stored records of a session, failing the test
// on error.
func sessionRecords(t *testing.T, env *testEnv, sid acp.SessionID) []session.Record {
	t.Helper()
	recs, err := env.store.Records(string(sid))
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// recordCount is the number of records of kind in sid's log.
func recordCount(t *testing.T, env *testEnv, sid acp.SessionID, kind string) int {
	n := 0
	for _, r := range sessionRecords(t, env, sid) {
		if r.Kind == kind {
			n++
		}
	}
	return n
}

// loggedMessages are the transcript messages of sid's log ("message"
// records), in order.
func loggedMessages(t *testing.T, env *testEnv, sid acp.SessionID) []model.Message {
	t.Helper()
	var msgs []model.Message
	for _, r := range sessionRecords(t, env, sid) {
		if r.Kind != kindMessage {
			continue
		}
		var m model.Message
		if err := json.Unmarshal(r.Data, &m); err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func describeRecords(recs []session.Record) string {
	var b strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&b, "%d %s %s\n", r.Seq, r.Kind, r.Data)
	}
	return b.String()
}

// TestCloseDuringTurn: session/close cancels the running turn and waits for
// it; the turn ends "cancelled" and the log is unlocked.
func TestCloseDuringTurn(t *testing.T) {
	env := newEnv(t, "")
	g := newGate()
	env.setModel(mainModel, g)
	c := env.start(nil)
	for _, method := range []string{acp.AgentMethodSessionClose, acp.AgentMethodSessionDelete} {
		sid := c.newSession()
		res := c.promptAsync(sid, "block")
		g.waitStarted(t)
		var err error
		if method == acp.AgentMethodSessionClose {
			err = c.call(method, acp.CloseSessionRequest{SessionID: sid}, &acp.CloseSessionResponse{})
		} else {
			err = c.call(method, acp.DeleteSessionRequest{SessionID: sid}, &acp.DeleteSessionResponse{})
		}
		if err != nil {
			t.Fatalf("%s during a turn: %v", method, err)
		}
		if r := await(t, "the prompt", res); r.err != nil || r.stop != acp.StopReasonCancelled {
			t.Errorf("%s: the running prompt ended %v %q, want cancelled", method, r.err, r.stop)
		}
		if method == acp.AgentMethodSessionClose {
			l, _, err := env.store.Open(string(sid))
			if err != nil {
				t.Fatalf("after session/close during a turn: %v", err)
			}
			l.Close()
		} else if _, err := env.store.Get(string(sid)); !errors.Is(err, session.ErrNotFound) {
			t.Errorf("after session/delete during a turn: %v", err)
		}
	}
}

// A session open here that never had a prompt (an editor's fresh chat) is
// not listed, so a /resume list does not start with it; once prompted it
// is, and sessions stored before are listed as always.
func TestListSessionsHidesEmptyOpenSession(t *testing.T) {
	env := newEnv(t, "")
	env.setModel(mainModel, env.script(`{"type":"text","text":"hi"}`, `{"type":"finish"}`))
	stored, err := env.store.Create(session.Meta{Cwd: env.cwd})
	if err != nil {
		t.Fatal(err)
	}
	if err := stored.Close(); err != nil {
		t.Fatal(err)
	}
	c := env.start(nil)
	sid := c.newSession()
	list := func() map[acp.SessionID]bool {
		var r acp.ListSessionsResponse
		if err := c.call(acp.AgentMethodSessionList, acp.ListSessionsRequest{}, &r); err != nil {
			t.Fatal(err)
		}
		ids := map[acp.SessionID]bool{}
		for _, s := range r.Sessions {
			ids[s.SessionID] = true
		}
		return ids
	}
	if got := list(); got[sid] || !got[acp.SessionID(stored.ID())] {
		t.Errorf("before a prompt: listed %v; want the stored session and not the fresh one %s", got, sid)
	}
	c.mustPrompt(sid, "hello", acp.StopReasonEndTurn)
	if got := list(); !got[sid] || !got[acp.SessionID(stored.ID())] {
		t.Errorf("after a prompt: listed %v; want both", got)
	}
}
