package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"acpd/acp"
	"acpd/files"
	"acpd/permissions"
	"acpd/sandbox"
	"acpd/terminal"
)

// testEnv is a session as a tool sees it, built from the real parts: a
// file broker over a temporary project, the permission policy, local PTY
// terminals, the job table. The user answers every permission request
// with answer; updates, permission requests, files seen and plans are
// recorded.
type testEnv struct {
	t       *testing.T
	dir     string // the project (the session's working directory), a real path
	roots   *files.Roots
	broker  *files.Broker
	policy  *permissions.Policy
	mode    permissions.Mode
	answer  permissions.OptionKind
	terms   *terminal.Manager
	jobs    *Jobs
	sandbox sandbox.Policy
	// outputMeta makes terminals report through Zed's terminal_output
	// _meta extension.
	outputMeta bool
	childEnv   []string

	mu      sync.Mutex
	updates []acp.ToolCallUpdate
	asked   []permAsk
	saw     []string
	plans   []*acp.Plan
	// onUpdate, when set, sees every update as it is reported.
	onUpdate func(acp.ToolCallUpdate)
}

// permAsk is one permission request the user saw.
type permAsk struct {
	req     permissions.Call
	upd     acp.ToolCallUpdate
	preview []acp.ToolCallContent
}

// newTestEnv returns an env over a fresh project directory in mode, whose
// user allows every request once.
func newTestEnv(t *testing.T, mode permissions.Mode) *testEnv {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	roots, err := files.NewRoots(dir)
	if err != nil {
		t.Fatal(err)
	}
	store, err := permissions.OpenStore(filepath.Join(t.TempDir(), "permissions.json"))
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]acp.ToolKind{}
	for _, tl := range Builtin(Options{}) {
		tools[tl.Def.Name] = tl.Kind
	}
	pol, err := permissions.NewPolicy(permissions.PolicyOptions{Store: store, Project: dir, Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	e := &testEnv{
		t: t, dir: dir, roots: roots, policy: pol, mode: mode, answer: permissions.AllowOnce,
		broker:   files.NewBroker(files.BrokerOptions{Roots: roots}),
		terms:    terminal.NewManager(terminal.ManagerOptions{KillGrace: 200 * time.Millisecond}),
		jobs:     NewJobs(nil, filepath.Join(t.TempDir(), "outputs")),
		sandbox:  sandbox.Policy{Mode: sandbox.Off},
		childEnv: append(terminal.FilterEnv(os.Environ(), nil), "ACPD_TOOLS_TEST=marked"),
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		e.jobs.Close(ctx)
		if err := e.terms.Close(); err != nil {
			t.Errorf("closing the terminals: %v", err)
		}
		if err := e.broker.Close(); err != nil {
			t.Errorf("closing the broker: %v", err)
		}
	})
	return e
}

var _ Env = (*testEnv)(nil)

func (e *testEnv) Resolve(p string) (files.Resolved, error) {
	if p == "" {
		p = "."
	}
	return e.roots.Resolve(p)
}

func (e *testEnv) Authorize(ctx context.Context, c *Call, req permissions.Call, upd acp.ToolCallUpdate) (bool, string) {
	return e.AuthorizeShowing(ctx, c, req, upd, nil)
}

// AuthorizeShowing decides as the agent does: the policy, then the user
// (e.answer), whose "always" answers are remembered; an allowed call is
// reported in progress.
func (e *testEnv) AuthorizeShowing(ctx context.Context, c *Call, req permissions.Call, upd acp.ToolCallUpdate, preview func() []acp.ToolCallContent) (bool, string) {
	running := func() {
		st := acp.ToolCallStatusInProgress
		e.Update(acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(c.ID), Status: &st})
	}
	d := e.policy.Decide(e.mode, req)
	switch d.Action {
	case permissions.Allow:
		running()
		return true, ""
	case permissions.Deny:
		return false, "Not allowed: " + d.Reason
	}
	a := permAsk{req: req, upd: upd}
	if preview != nil {
		a.preview = preview()
	}
	e.mu.Lock()
	e.asked = append(e.asked, a)
	e.mu.Unlock()
	offered := permissions.Options(d)
	allowed, remember, _ := permissions.Verdict(offered, "selected", string(e.answer), ctx.Err() != nil)
	if remember {
		if err := e.policy.Remember(req, d, allowed); err != nil {
			return false, err.Error()
		}
	}
	if !allowed {
		c.Refusal = "Rejected."
		return false, "The user rejected this call."
	}
	running()
	return true, ""
}

func (e *testEnv) Files() *files.Broker { return e.broker }

func (e *testEnv) SawFile(path string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.saw = append(e.saw, path)
}

func (e *testEnv) Update(u acp.ToolCallUpdate) {
	e.mu.Lock()
	e.updates = append(e.updates, u)
	f := e.onUpdate
	e.mu.Unlock()
	if f != nil {
		f(u)
	}
}

func (e *testEnv) StartTerminal(ctx context.Context, spec terminal.Spec) (Terminal, error) {
	lt, err := e.terms.Start(ctx, spec)
	if err != nil {
		return Terminal{}, err
	}
	return Terminal{Terminal: lt, OutputMeta: e.outputMeta}, nil
}

func (e *testEnv) ChildEnv() []string      { return e.childEnv }
func (e *testEnv) Sandbox() sandbox.Policy { return e.sandbox }
func (e *testEnv) Jobs() *Jobs             { return e.jobs }

func (e *testEnv) SetPlan(p *acp.Plan) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.plans = append(e.plans, p)
}

func (e *testEnv) recordedUpdates() []acp.ToolCallUpdate {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.updates)
}

func (e *testEnv) requests() []permAsk {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.asked)
}

func (e *testEnv) seen() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.saw)
}

// path is name (slash-separated) in the project.
func (e *testEnv) path(name string) string { return filepath.Join(e.dir, filepath.FromSlash(name)) }

// write creates the file name in the project with content.
func (e *testEnv) write(name, content string) string {
	e.t.Helper()
	p := e.path(name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// read is the content of the file name in the project.
func (e *testEnv) read(name string) string {
	e.t.Helper()
	data, err := os.ReadFile(e.path(name))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(data)
}

// run runs the built-in tool name with the JSON input in.
func (e *testEnv) run(ctx context.Context, name, in string) Result {
	e.t.Helper()
	return e.runCall(ctx, &Call{ID: "call-" + name, Name: name, Input: json.RawMessage(in)})
}

func (e *testEnv) runCall(ctx context.Context, c *Call) Result {
	e.t.Helper()
	for _, tl := range Builtin(Options{Protected: []string{e.path(".acpd")}}) {
		if tl.Def.Name == c.Name {
			return tl.Run(ctx, e, c)
		}
	}
	e.t.Fatalf("no built-in tool %q", c.Name)
	return Result{}
}

// input is v as a tool call's JSON arguments.
func input(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// mustOK fails the test unless res is a success; it returns res.Text.
func mustOK(t *testing.T, res Result) string {
	t.Helper()
	if res.IsError {
		t.Fatalf("unexpected error result: %s", res.Text)
	}
	return res.Text
}

// mustFail fails the test unless res is an error containing want.
func mustFail(t *testing.T, res Result, want string) {
	t.Helper()
	if !res.IsError || !strings.Contains(res.Text, want) {
		t.Fatalf("want an error containing %q, got %+v", want, res)
	}
}

// diffOf is the only diff of res's content.
func diffOf(t *testing.T, res Result) *acp.Diff {
	t.Helper()
	if len(res.Content) != 1 || res.Content[0].Diff == nil {
		t.Fatalf("want one diff in the content, got %+v", res.Content)
	}
	return res.Content[0].Diff
}
