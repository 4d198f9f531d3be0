package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"acpd/acp"
	"acpd/files"
	"acpd/model"
	"acpd/permissions"
	"acpd/tools/patch"
	"acpd/tools/textedit"
)

// editResult describes a successful replacement for the model: where it
// landed, the matcher that found old_string when it was not an exact match,
// and the edited region with 3 lines around it.
func editResult(env Env, path string, rs []textedit.Result) string {
	var b strings.Builder
	if len(rs) > 1 {
		fmt.Fprintf(&b, "Edited %s with %d edits:\n", display(env, path), len(rs))
	} else {
		fmt.Fprintf(&b, "Edited %s: ", display(env, path))
	}
	for i, r := range rs {
		if len(rs) > 1 {
			fmt.Fprintf(&b, "edit %d ", i+1)
		}
		fmt.Fprintf(&b, "replaced %d occurrence(s)", r.Count)
		switch {
		case r.Last > r.First:
			fmt.Fprintf(&b, " (lines %d-%d)", r.First, r.Last)
		case r.Last == r.First:
			fmt.Fprintf(&b, " (line %d)", r.First)
		default:
			fmt.Fprintf(&b, " (at line %d)", r.First)
		}
		if r.Matcher != textedit.Exact {
			fmt.Fprintf(&b, "; old_string matched %s, not exactly", r.Matcher)
		}
		b.WriteString(".\n")
	}
	last := rs[len(rs)-1]
	if len(rs) > 1 {
		b.WriteString("The last edited region now reads:\n")
	} else {
		b.WriteString("The edited region now reads:\n")
	}
	b.WriteString(last.Snippet)
	return b.String()
}

// replaceFile runs edits on the file through the broker (stale-write rules)
// and reports the result.
func replaceFile(ctx context.Context, env Env, c *Call, shown string, t files.Resolved, edits []textedit.Edit) Result {
	var rs []textedit.Result
	prev, next, err := env.Files().EditFile(ctx, t.Path, func(old string) (out string, err error) {
		out, rs, err = applyEdits(old, edits)
		return out, err
	})
	if err != nil {
		var te *textedit.Error
		if errors.As(err, &te) {
			return Errorf("%s: %s", shown, te.Msg)
		}
		return Errorf("editing %s: %v", shown, err)
	}
	env.SawFile(t.Path)
	location(env, c, t.Path, rs[0].First)
	return Result{
		Text:    editResult(env, t.Path, rs),
		Content: []acp.ToolCallContent{{Diff: &acp.Diff{Path: t.Path, OldText: &prev, NewText: next}}},
	}
}

// applyEdits applies edits to old.
func applyEdits(old string, edits []textedit.Edit) (string, []textedit.Result, error) {
	if len(edits) == 1 {
		r, err := textedit.Replace(old, edits[0].Old, edits[0].New, edits[0].All)
		return r.Content, []textedit.Result{r}, err
	}
	return textedit.ReplaceEach(old, edits)
}

// peekFile is the current content of an existing file as an edit would see
// it (through the broker, under its stale check), without writing or
// recording anything.
func peekFile(ctx context.Context, env Env, t files.Resolved) (string, error) {
	var content string
	_, _, err := env.Files().EditFile(ctx, t.Path, func(old string) (string, error) {
		content = old
		return "", errPeek
	})
	if errors.Is(err, errPeek) {
		return content, nil
	}
	return "", err
}

// editPreview is the diff edits would make to the file, for the
// permission request; nil when they do not apply (the error is reported
// after approval).
func editPreview(ctx context.Context, env Env, edits []textedit.Edit) func(files.Resolved) []acp.ToolCallContent {
	return func(t files.Resolved) []acp.ToolCallContent {
		old, err := peekFile(ctx, env, t)
		if err != nil {
			return nil
		}
		next, _, err := applyEdits(old, edits)
		if err != nil {
			return nil
		}
		return []acp.ToolCallContent{{Diff: &acp.Diff{Path: t.Path, OldText: &old, NewText: next}}}
	}
}

// editFileInput is edit_file's arguments.
type editFileInput struct {
	Path       string `json:"path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

func editFileTool() *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name: "edit_file",
			Description: "Replace text in a file: old_string becomes new_string. Read the file first. " +
				"Copy old_string from read_file's output without the line-number prefix, with enough surrounding lines to be unique; it must occur exactly once unless replace_all is set. " +
				"Line endings need not match (a CRLF file stays CRLF). If there is no exact match, a unique match ignoring trailing whitespace, indentation (new_string is then re-indented to match) or typographic quotes and dashes is used, and the result says so. " +
				"The result shows the edited region. For several changes to one file use multi_edit.",
			InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string","description":"Absolute path, or relative to the working directory"},"old_string":{"type":"string","description":"The text to replace"},"new_string":{"type":"string","description":"The replacement text"},"replace_all":{"type":"boolean","description":"Replace every occurrence (default false)"}},"required":["path","old_string","new_string"],"additionalProperties":false}`),
		},
		Kind:  acp.ToolKindEdit,
		Title: pathTitle("Edit"),
		Run: func(ctx context.Context, env Env, c *Call) Result {
			in, err := DecodeInput[editFileInput](c.Input)
			if err != nil {
				return Errorf("invalid edit_file arguments: %v", err)
			}
			if in.OldString == "" {
				return Errorf("old_string is empty; use write_file to create a file")
			}
			if in.OldString == in.NewString {
				return Errorf("old_string and new_string are the same; nothing to change")
			}
			edits := []textedit.Edit{{Old: in.OldString, New: in.NewString, All: in.ReplaceAll}}
			t, res, ok := gatePreview(ctx, env, c, in.Path, acp.ToolKindEdit, "Edit "+in.Path, editPreview(ctx, env, edits))
			if !ok {
				return res
			}
			return replaceFile(ctx, env, c, in.Path, t, edits)
		},
	}
}

// multiEditInput is multi_edit's arguments.
type multiEditInput struct {
	Path  string          `json:"path"`
	Edits []multiEditStep `json:"edits"`
}

// multiEditStep is one edit of multi_edit.
type multiEditStep struct {
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

func multiEditTool() *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name: "multi_edit",
			Description: "Make several replacements in one file in one step: each edit works like edit_file and applies to the result of the edits before it. " +
				"Either every edit applies or none does. Read the file first.",
			InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string","description":"Absolute path, or relative to the working directory"},"edits":{"type":"array","minItems":1,"items":{"type":"object","properties":{"old_string":{"type":"string"},"new_string":{"type":"string"},"replace_all":{"type":"boolean"}},"required":["old_string","new_string"],"additionalProperties":false}}},"required":["path","edits"],"additionalProperties":false}`),
		},
		Kind:  acp.ToolKindEdit,
		Title: pathTitle("Edit"),
		Run: func(ctx context.Context, env Env, c *Call) Result {
			in, err := DecodeInput[multiEditInput](c.Input)
			if err != nil {
				return Errorf("invalid multi_edit arguments: %v", err)
			}
			if len(in.Edits) == 0 {
				return Errorf("edits is empty")
			}
			edits := make([]textedit.Edit, len(in.Edits))
			for i, e := range in.Edits {
				if e.OldString == "" {
					return Errorf("edit %d: old_string is empty; use write_file to create a file", i+1)
				}
				edits[i] = textedit.Edit{Old: e.OldString, New: e.NewString, All: e.ReplaceAll}
			}
			t, res, ok := gatePreview(ctx, env, c, in.Path, acp.ToolKindEdit, "Edit "+in.Path, editPreview(ctx, env, edits))
			if !ok {
				return res
			}
			return replaceFile(ctx, env, c, in.Path, t, edits)
		},
	}
}

// patchDescription explains the apply_patch format in the words Codex
// models were trained on.
const patchDescription = `Edit files with a patch. The patch text is:

*** Begin Patch
[one or more file operations]
*** End Patch

Each operation starts with a header:
*** Add File: <path> - create a file; every following line starts with + and is a line of the new file.
*** Delete File: <path> - delete a file; nothing follows.
*** Update File: <path> - change a file; optionally followed by *** Move to: <new path> to rename it, then one or more chunks.

A chunk starts with @@, optionally followed by a line that comes before the change (such as a function or class header) to locate it. Then the chunk's lines: " " (space) for an unchanged context line, "-" for a removed line, "+" for an added line. Give 3 lines of context above and below each change; chunks of one file go in file order. "*** End of File" after a chunk's lines anchors it at the end of the file.

Example:
*** Begin Patch
*** Update File: src/app.py
@@ def greet():
-    print("hi")
+    print("hello")
*** End Patch

Paths are relative to the working directory (or absolute). Every operation is checked before anything is written: if one does not fit, nothing changes.`

func applyPatchTool() *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name:        "apply_patch",
			Description: patchDescription,
			InputSchema: schema(`{"type":"object","properties":{"input":{"type":"string","description":"The whole patch, from *** Begin Patch to *** End Patch"}},"required":["input"],"additionalProperties":false}`),
		},
		Kind:  acp.ToolKindEdit,
		Title: func(json.RawMessage) string { return "Apply patch" },
		Run:   runApplyPatch,
	}
}

// errPeek aborts a broker edit after its stale check: the content was only
// wanted for planning.
var errPeek = errors.New("peek")

// brokerFiles is patch.Files over the session's broker, with the edit
// tools' rules: an existing file must be unchanged since the agent last read
// or wrote it (the broker's stale check), and paths resolve against the
// session roots.
type brokerFiles struct {
	env      Env
	resolved map[string]files.Resolved
}

func (f brokerFiles) Read(ctx context.Context, p string) (string, error) {
	return peekFile(ctx, f.env, f.resolved[p])
}

func (f brokerFiles) Write(ctx context.Context, p, content string) error {
	t := f.resolved[p]
	_, _, err := f.env.Files().WriteFile(ctx, t.Path, content)
	if err == nil {
		f.env.SawFile(t.Path)
	}
	return err
}

func (f brokerFiles) Remove(ctx context.Context, p string) error {
	// The broker removes it from the directory the path named (no link
	// swapped into it since the permission decision).
	return f.env.Files().Remove(ctx, f.resolved[p].Path)
}

// applyPatchInput is apply_patch's arguments.
type applyPatchInput struct {
	Input string `json:"input"`
}

func runApplyPatch(ctx context.Context, env Env, c *Call) Result {
	in, err := DecodeInput[applyPatchInput](c.Input)
	if err != nil {
		return Errorf("invalid apply_patch arguments: %v", err)
	}
	p, err := patch.Parse(in.Input)
	if err != nil {
		return Errorf("%v", err)
	}
	bf := brokerFiles{env: env, resolved: map[string]files.Resolved{}}
	var perm []permissions.Path
	var locs []acp.ToolCallLocation
	for _, h := range p.Hunks {
		for _, path := range []string{h.Path, h.MoveTo} {
			if _, done := bf.resolved[path]; path == "" || done {
				continue
			}
			t, err := env.Resolve(path)
			if err != nil {
				return Errorf("%s: %v", path, err)
			}
			bf.resolved[path] = t
			perm = append(perm, permPath(t))
			locs = append(locs, acp.ToolCallLocation{Path: t.Path})
		}
	}
	title := fmt.Sprintf("Patch %d file(s)", len(perm))
	kind := acp.ToolKindEdit
	upd := acp.ToolCallUpdate{Title: &title, Kind: &kind, RawInput: c.Input, Locations: locs}
	// The permission request shows the patch's effect when it fits; one
	// that does not is reported after approval, as without a preview.
	preview := func() []acp.ToolCallContent {
		planned, err := patch.Plan(ctx, p, bf.Read)
		if err != nil {
			return nil
		}
		return patchContent(bf, planned)
	}
	if ok, why := env.AuthorizeShowing(ctx, c, permissions.Call{Tool: c.Name, Kind: acp.ToolKindEdit, Paths: perm}, upd, preview); !ok {
		return Errorf("%s", why)
	}
	changes, err := patch.Apply(ctx, p, bf)
	content := patchContent(bf, changes)
	var b strings.Builder
	for _, ch := range changes {
		verb := map[patch.Op]string{patch.Add: "A", patch.Delete: "D", patch.Update: "M"}[ch.Op]
		fmt.Fprintf(&b, "%s %s\n", verb, display(env, bf.resolved[ch.Path].Path))
	}
	if err != nil {
		var se *files.StaleError
		var ae *patch.ApplyError
		switch {
		case errors.As(err, &ae):
			return Errorf("the patch was not applied, nothing changed: %v", err)
		case errors.As(err, &se), errors.Is(err, fs.ErrNotExist):
			return Errorf("the patch was not applied, nothing changed: %v", err)
		case len(changes) == 0:
			return Errorf("the patch was not applied, nothing changed: %v", err)
		}
		r := Errorf("the patch was applied only in part: %v\nChanged:\n%s", err, b.String())
		r.Content = content
		return r
	}
	return Result{Text: "Applied the patch:\n" + b.String(), Content: content}
}

// patchContent shows a patch's changes as diffs.
func patchContent(bf brokerFiles, changes []patch.Change) []acp.ToolCallContent {
	var content []acp.ToolCallContent
	for _, ch := range changes {
		d := &acp.Diff{Path: bf.resolved[ch.Path].Path, NewText: ch.New}
		if ch.Op != patch.Add {
			d.OldText = &ch.Old
		}
		content = append(content, acp.ToolCallContent{Diff: d})
	}
	return content
}
