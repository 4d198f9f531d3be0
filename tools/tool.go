// Package tools holds acpd's built-in tools: the tools the model calls to
// read, search and edit files, run commands and keep a plan. A [Tool] is its
// definition for the model, its ACP kind, whether it is read-only, a title
// renderer and its Run function; [Builtin] returns the built-in tools.
//
// A tool reaches the session only through [Env]: resolving a path against
// the session roots, asking permission, the file broker, reporting progress,
// starting a terminal, the children's environment and the plan. The agent
// implements Env; nothing else of the session is visible to a tool.
//
// # Concurrency
//
// Tools are immutable once built and may run concurrently: the agent runs
// consecutive read-only calls of one response in parallel. Run returns only
// when everything the call started has finished.
package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"

	"acpd/acp"
	"acpd/files"
	"acpd/internal/lazy"
	"acpd/model"
	"acpd/permissions"
	"acpd/sandbox"
	"acpd/terminal"
)

// Tool is one tool offered to the model.
type Tool struct {
	// Def is the tool's name, description and input schema for the model.
	Def model.ToolDef
	// Kind is the ACP tool kind shown to the client; a tool passes the kind
	// the permission policy judges its calls by in its permissions.Call.
	Kind acp.ToolKind
	// ReadOnly marks a tool whose calls change nothing, so consecutive
	// read-only calls of one response may run in parallel.
	ReadOnly bool
	// Title renders a readable title from the call's input (which may be
	// partial or invalid JSON); nil means the tool's name.
	Title func(in json.RawMessage) string
	// Run executes the call and returns the result for the model. It sends
	// its own progress updates through env and asks permission (through
	// env) before it changes or reveals anything.
	Run func(ctx context.Context, env Env, call *Call) Result
}

// Call is one tool call being run.
type Call struct {
	ID    string
	Name  string
	Input json.RawMessage
	// Refusal is set by Env.Authorize when the user refused the call: what
	// the editor's card shows instead of the result's text, which is
	// meant for the model ("Do not retry it; ask the user…").
	Refusal string
}

// Result is what a tool returns: text for the model and, optionally,
// content for the client (the text is shown when Content is empty).
type Result struct {
	Text    string
	IsError bool
	Content []acp.ToolCallContent
	// Raw is the call's rawOutput for the client (nil for none).
	Raw any
	// Images are image parts (model.PartImage) for the model after Text;
	// the agent replaces them by a note for a model that cannot read
	// images.
	Images []model.Part
	// Bounded reports that Text is already bounded by the tool (at line
	// boundaries, saying how to get the rest): the agent gives it to the
	// model as it is instead of cutting it generically.
	Bounded bool
	// Meta is the _meta of the call's final tool_call_update (nil for
	// none).
	Meta map[string]any
	// After, when not nil, runs right after the call's final
	// tool_call_update was sent: it releases what that update still shows
	// (the editor's terminal, which the client forgets on release).
	After func()
	// EndTurn, when not empty, ends the prompt turn once the response's
	// calls have run: the agent shows it as its message (ask_user's
	// question to a client without forms, answered by the next prompt)
	// and the turn stops with end_turn.
	EndTurn string
}

// MaxResultBytes bounds a tool result given back to the model.
const MaxResultBytes = 64 << 10

// Bound truncates long tool output to MaxResultBytes, keeping head and
// tail, with a note saying how much was cut.
func Bound(s string) string {
	if len(s) <= MaxResultBytes {
		return s
	}
	head := MaxResultBytes / 2
	tail := MaxResultBytes / 2
	for head > 0 && !isRuneStart(s[head]) {
		head--
	}
	start := len(s) - tail
	for start < len(s) && !isRuneStart(s[start]) {
		start++
	}
	cut := start - head
	return s[:head] + fmt.Sprintf("\n\n[… %d bytes cut from the middle of this output …]\n\n", cut) + s[start:]
}

// Part is r as the model's tool result for the call id: its text ("(no
// output)" for an empty success), then its images.
func (r Result) Part(id string) model.Part {
	text := r.Text
	if text == "" && !r.IsError {
		text = "(no output)"
	}
	p := model.Part{Type: model.PartToolResult, ToolCallID: id, IsError: r.IsError, Content: []model.Part{{Type: model.PartText, Text: text}}}
	p.Content = append(p.Content, r.Images...)
	return p
}

// Errorf is a failed call's result.
func Errorf(format string, args ...any) Result {
	return Result{Text: fmt.Sprintf(format, args...), IsError: true}
}

// Env is what a tool may use of its session. Implementations are safe for
// concurrent use.
type Env interface {
	// Resolve resolves a tool path (absolute, or relative to the working
	// directory; "" is the working directory) against the session roots.
	Resolve(path string) (files.Resolved, error)
	// Authorize decides whether the call may run, asking the user when the
	// policy says so; upd describes the call in the permission request. It
	// fails closed. On success the call is reported in progress; otherwise
	// why explains the refusal to the model.
	Authorize(ctx context.Context, call *Call, req permissions.Call, upd acp.ToolCallUpdate) (ok bool, why string)
	// AuthorizeShowing is Authorize for a call whose permission request
	// shows what it would change: preview runs only when the user is asked
	// and returns the content (diffs) shown in the request, or nil.
	AuthorizeShowing(ctx context.Context, call *Call, req permissions.Call, upd acp.ToolCallUpdate, preview func() []acp.ToolCallContent) (ok bool, why string)
	// Files is the session's file broker.
	Files() *files.Broker
	// SawFile records that the agent read or wrote path (a real path), so
	// it is no longer reported to the model as changed outside the agent.
	SawFile(path string)
	// Update reports a tool_call_update (u.ToolCallID set) to the client.
	Update(u acp.ToolCallUpdate)
	// StartTerminal starts spec in the editor's terminal when the editor
	// offers terminals, else on a local PTY. On error, the returned
	// Terminal still tells where it was started.
	StartTerminal(ctx context.Context, spec terminal.Spec) (Terminal, error)
	// ChildEnv is the base environment of the session's child processes.
	ChildEnv() []string
	// Sandbox is the OS sandbox policy of the session's commands.
	Sandbox() sandbox.Policy
	// Jobs are the session's background commands.
	Jobs() *Jobs
	// SetPlan replaces the session's plan and reports it to the client.
	SetPlan(p *acp.Plan)
}

// Terminal is a started command.
type Terminal struct {
	terminal.Terminal
	// InEditor means the editor runs it and shows its output itself.
	InEditor bool
	// OutputMeta means the client wants the output through Zed's
	// terminal_output _meta extension (local terminals only).
	OutputMeta bool
}

// Options configure [Builtin].
type Options struct {
	// Protected are directories the search tools never enter (acpd's
	// configuration and state): the permission check covers only the
	// searched path, so a search must not reach into places that always ask.
	Protected []string
	// Logger receives diagnostics; nil discards.
	Logger *slog.Logger
}

// Builtin returns acpd's built-in tools, sorted by name. apply_patch is
// meant for the models trained on its format (see [PatchModel]).
func Builtin(o Options) []*Tool {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	ts := []*Tool{
		readFileTool(), writeFileTool(), editFileTool(), listDirTool(),
		globTool(o), grepTool(o), runCommandTool(o), planTool(),
		multiEditTool(), applyPatchTool(), jobOutputTool(), jobStopTool(), webFetchTool(), webSearchTool(), askUserTool(),
	}
	slices.SortFunc(ts, func(a, b *Tool) int { return strings.Compare(a.Def.Name, b.Def.Name) })
	return ts
}

// PatchModel reports whether the model (its ID without provider) belongs
// to a family trained on apply_patch's format: OpenAI's GPT, o-series and
// Codex models. Others get edit_file and multi_edit only.
func PatchModel(id string) bool {
	id = strings.ToLower(id)
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:] // e.g. openrouter's "openai/gpt-5"
	}
	switch {
	case strings.HasPrefix(id, "gpt-"), strings.Contains(id, "codex"):
		return true
	case len(id) >= 2 && id[0] == 'o' && id[1] >= '1' && id[1] <= '9':
		return true
	}
	return false
}

// DecodeInput decodes a tool call's arguments strictly, forgiving the
// usual slips: an argument spelled as a known alias (file_path or filePath
// for path, old_str for old_string, cmd for command, …) or in camelCase
// (oldString) is taken as the field it names when that field is not given
// too. Any other unknown argument is an error naming it and listing the
// expected arguments, for the model to correct.
func DecodeInput[T any](in json.RawMessage) (T, error) {
	var v T
	var args map[string]json.RawMessage
	if err := acp.Unmarshal(in, &args); err != nil {
		return v, err
	}
	fields := jsonFields(reflect.TypeFor[T]())
	var unknown []string
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if slices.Contains(fields, k) {
			continue
		}
		to := ""
		for _, c := range append(argAliases.Get()[k], snakeCase(k)) {
			if _, given := args[c]; slices.Contains(fields, c) && !given {
				to = c
				break
			}
		}
		if to == "" {
			unknown = append(unknown, fmt.Sprintf("%q", k))
			continue
		}
		args[to] = args[k]
		delete(args, k)
	}
	if len(unknown) > 0 {
		return v, fmt.Errorf("unknown argument %s; the arguments are %s", strings.Join(unknown, ", "), strings.Join(fields, ", "))
	}
	data, err := json.Marshal(args)
	if err != nil {
		return v, err
	}
	if err := acp.Unmarshal(data, &v); err != nil {
		return v, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err = dec.Decode(&v)
	return v, err
}

// argAliases are other names models use for the built-in tools' arguments,
// each with the fields it may stand for, in order of preference.
var argAliases = lazy.Value[map[string][]string]{New: func() map[string][]string {
	return map[string][]string{
		"file_path": {"path"}, "filePath": {"path"}, "filepath": {"path"}, "file": {"path"}, "filename": {"path"},
		"directory": {"path", "cwd"}, "dir": {"path", "cwd"}, "workdir": {"cwd"}, "working_directory": {"cwd"},
		"old_str": {"old_string"}, "new_str": {"new_string"}, "old": {"old_string"}, "new": {"new_string"},
		"cmd": {"command"}, "regex": {"pattern"}, "query": {"pattern"}, "glob": {"include"},
		"text": {"content"}, "contents": {"content"}, "patch": {"input"},
		"options": {"choices"},
	}
}}

// jsonFields lists the JSON names of t's fields (t a struct type).
func jsonFields(t reflect.Type) []string {
	if t.Kind() != reflect.Struct {
		return nil
	}
	var out []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, name)
	}
	return out
}

// snakeCase turns camelCase into snake_case ("oldString" → "old_string");
// other names are returned as they are.
func snakeCase(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		if 'A' <= r && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// TextContent is tool call content showing text.
func TextContent(text string) acp.ToolCallContent {
	return acp.ToolCallContent{Content: &acp.Content{Content: acp.ContentBlock{Text: &acp.TextContent{Text: text}}}}
}

// Truncate cuts s to at most n bytes at a character boundary, marking the
// cut with "…".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func schema(s string) json.RawMessage { return json.RawMessage(s) }
