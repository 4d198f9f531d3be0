package agent

import (
	"context"
	"encoding/json"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"

	"acpd/acp"
	"acpd/internal/skilltest"
	"acpd/model"
)

// readsAt is a backend that notes, at every request, which files the
// skills server has served so far.
type readsAt struct {
	inner model.Backend
	srv   *skilltest.Server
	mu    sync.Mutex
	reads [][]string
}

func (r *readsAt) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	r.mu.Lock()
	r.reads = append(r.reads, r.srv.Reads())
	r.mu.Unlock()
	return r.inner.Stream(ctx, req)
}

// requestHas reports whether anything of req (system prompt, messages,
// tool results) contains s.
func requestHas(req model.Request, s string) bool {
	b, _ := json.Marshal(req)
	return strings.Contains(string(b), s)
}

// TestMCPSkills: an MCP server's skill (a Go SDK server serving the skills
// extension) is listed in the system prompt beside the local ones, named
// by its server and marked as its; nothing of it is read until the model
// uses it with the skill tool, which loads its SKILL.md (verified) and
// then, asked for a file, that file; once the server serves a SKILL.md
// that no longer matches its listed digest, the skill tool refuses it with
// a clear error, and the tampered text never reaches the model.
func TestMCPSkills(t *testing.T) {
	sk := skilltest.Skill{Path: "pdf-processing",
		Frontmatter: map[string]any{"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents", "metadata": map[string]any{"version": "2"}},
		Body:        "# PDF\nFill forms as references/FORMS.md says. MCP-SKILL-BODY\n",
		Files:       map[string]string{"references/FORMS.md": "MCP-FORMS-FILE\n"}}
	srv := skilltest.New(t, "docs", sk)
	env := newEnv(t, "")
	env.write(".agents/skills/local-one/SKILL.md", "---\nname: local-one\ndescription: A local skill.\n---\nlocal body\n")
	rec := record(toolSeq(
		toolCallReq{"skill", map[string]any{"name": "docs:pdf-processing"}},
		toolCallReq{"skill", map[string]any{"name": "docs:pdf-processing", "file": "references/FORMS.md"}},
	))
	watch := &readsAt{inner: rec, srv: srv}
	env.setModel(mainModel, watch)
	c := env.start(nil)
	var resp acp.NewSessionResponse
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{
		{HTTP: &acp.McpServerHTTP{Name: "docs", URL: srv.URL, Headers: []acp.HTTPHeader{}}}}}, &resp); err != nil {
		t.Fatalf("session/new: %v", err)
	}
	sid := resp.SessionID
	c.mustMode(sid, modeFull)
	c.mustPrompt(sid, "fill the form", acp.StopReasonEndTurn)

	reqs := rec.requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	first := reqs[0]
	for _, want := range []string{"- local-one: A local skill.", "- docs:pdf-processing: Extract, fill, and assemble PDF documents (from MCP server docs)", "untrusted"} {
		if !strings.Contains(first.System, want) {
			t.Errorf("the system prompt lacks %q:\n%s", want, first.System)
		}
	}
	if requestHas(first, "MCP-SKILL-BODY") || requestHas(reqs[1], "MCP-FORMS-FILE") {
		t.Error("the skill reached the model before it was used")
	}
	watch.mu.Lock()
	reads := slices.Clone(watch.reads)
	watch.mu.Unlock()
	skillMD, forms := skilltest.URI("pdf-processing", "SKILL.md"), skilltest.URI("pdf-processing", "references/FORMS.md")
	if len(reads[0]) != 0 || !slices.Equal(reads[1], []string{skillMD}) || !slices.Equal(reads[2], []string{skillMD, forms}) {
		t.Errorf("server reads at each request %q: want none before the skill is used, then the SKILL.md, then the file", reads)
	}
	res := toolResults(reqs[2])
	if len(res) != 2 || res[0].IsError || res[1].IsError {
		t.Fatalf("tool results %+v", res)
	}
	if got := resultText(res[0]); !strings.Contains(got, "MCP-SKILL-BODY") || !strings.Contains(got, "MCP server docs") || !strings.Contains(got, "untrusted") || !strings.Contains(got, "references/FORMS.md") {
		t.Errorf("the skill tool returned %q", got)
	}
	if got := resultText(res[1]); !strings.Contains(got, "MCP-FORMS-FILE") {
		t.Errorf("the skill file read returned %q", got)
	}
	// The user's /skill:docs:pdf-processing is offered and loads it too.
	before := len(rec.requests())
	c.mustPrompt(sid, "/skill:docs:pdf-processing the tax form", acp.StopReasonEndTurn)
	if msgs := rec.requests()[before].Messages; !strings.Contains(msgs[len(msgs)-1].Text(), "MCP-SKILL-BODY") {
		t.Errorf("/skill:docs:pdf-processing sent %q", msgs[len(msgs)-1].Text())
	}

	// Tampered: the listed digest no longer matches.
	srv.Tamper(skillMD, strings.Replace(sk.Content(), "MCP-SKILL-BODY", "BAD-SKILL-BODY", 1))
	before = len(rec.requests())
	c.mustPrompt(sid, "fill it again", acp.StopReasonEndTurn)
	reqs = rec.requests()[before:]
	res = toolResults(reqs[len(reqs)-1])
	res = res[len(res)-2:]
	if got := resultText(res[0]); !res[0].IsError || !strings.Contains(got, "skill verification failed") || !strings.Contains(got, "digest") {
		t.Errorf("the tampered skill gave %+v (%q), want a verification error", res[0], got)
	}
	if got := resultText(res[1]); !res[1].IsError || !strings.Contains(got, "not in use: call the skill tool") {
		t.Errorf("a file of the refused skill gave %+v (%q), want an error", res[1], got)
	}
	for _, r := range reqs {
		if requestHas(r, "BAD-SKILL-BODY") {
			t.Fatal("the tampered SKILL.md reached the model")
		}
	}
}

// TestMCPSkillCommandsAsk: once an MCP server's skill is in the
// conversation, a command asks first even in full mode (allow once or
// reject, nothing remembered), also after session/load in another process;
// before it, the command runs unasked.
func TestMCPSkillCommandsAsk(t *testing.T) {
	srv := skilltest.New(t, "docs", skilltest.Skill{Path: "build",
		Frontmatter: map[string]any{"name": "build", "description": "Build the project"}, Body: "Run make.\n"})
	env := newEnv(t, "")
	rec := record(toolSeq(
		toolCallReq{"run_command", map[string]any{"command": "echo before"}},
		toolCallReq{"skill", map[string]any{"name": "docs:build"}},
		toolCallReq{"run_command", map[string]any{"command": "echo after"}},
	))
	env.setModel(mainModel, rec)
	c := env.start(nil)
	c.setPerm(choose(acp.PermissionOptionKindAllowOnce))
	var resp acp.NewSessionResponse
	if err := c.call(acp.AgentMethodSessionNew, acp.NewSessionRequest{Cwd: env.cwd, McpServers: []acp.McpServer{
		{HTTP: &acp.McpServerHTTP{Name: "docs", URL: srv.URL, Headers: []acp.HTTPHeader{}}}}}, &resp); err != nil {
		t.Fatalf("session/new: %v", err)
	}
	c.mustMode(resp.SessionID, modeFull)
	c.mustPrompt(resp.SessionID, "build it", acp.StopReasonEndTurn)
	reqs := c.permissionRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d permission requests, want 1 (the command after the skill)", len(reqs))
	}
	if title := reqs[0].ToolCall.Title; title == nil || !strings.Contains(*title, "echo after") {
		t.Errorf("asked about %v", reqs[0].ToolCall.Title)
	}
	for _, o := range reqs[0].Options {
		if o.Kind == acp.PermissionOptionKindAllowAlways {
			t.Errorf("offered to remember %q", o.Name)
		}
	}
	res := toolResults(rec.last(t))
	if len(res) != 3 || res[0].IsError || res[1].IsError || res[2].IsError || !strings.Contains(resultText(res[2]), "after") {
		t.Errorf("results %+v", res)
	}

	// The session loaded in another process (the skill's text is in its
	// transcript): commands still ask.
	c.close()
	env.setModel(mainModel, toolSeq(toolCallReq{"run_command", map[string]any{"command": "echo later"}}))
	c2 := env.start(nil)
	c2.setPerm(choose(acp.PermissionOptionKindAllowOnce))
	c2.load(resp.SessionID)
	c2.mustMode(resp.SessionID, modeFull)
	c2.mustPrompt(resp.SessionID, "build again", acp.StopReasonEndTurn)
	if reqs := c2.permissionRequests(); len(reqs) != 1 || reqs[0].ToolCall.Title == nil || !strings.Contains(*reqs[0].ToolCall.Title, "echo later") {
		t.Errorf("after session/load: permission requests %+v, want one for the command", reqs)
	}
}
