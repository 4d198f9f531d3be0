package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"acpd/acp"
	"acpd/fs"
	"acpd/model"
	"acpd/permissions"
)

// maxListEntries bounds list_dir's output.
const maxListEntries = 1000

// permPath is the permission policy's view of a resolved path.
func permPath(r fs.Resolved) permissions.Path {
	return permissions.Path{Abs: r.Path, Rel: r.Rel, Inside: r.Inside()}
}

// display shows a path relative to the cwd when inside it.
func display(env Env, abs string) string {
	if rel, err := filepath.Rel(env.Files().Roots().Cwd(), abs); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return abs
}

func pathTitle(verb string) func(json.RawMessage) string {
	return func(in json.RawMessage) string {
		var p struct {
			Path    string `json:"path"`
			Pattern string `json:"pattern"`
		}
		_ = json.Unmarshal(in, &p)
		switch {
		case p.Pattern != "" && p.Path != "":
			return fmt.Sprintf("%s %q in %s", verb, p.Pattern, p.Path)
		case p.Pattern != "":
			return fmt.Sprintf("%s %q", verb, p.Pattern)
		case p.Path != "":
			return verb + " " + p.Path
		}
		return verb
	}
}

// gate resolves the call's path and asks permission. ok=false means res is
// the tool's answer.
func gate(ctx context.Context, env Env, c *Call, path string, kind acp.ToolKind, title string) (fs.Resolved, Result, bool) {
	t, err := env.Resolve(path)
	if err != nil {
		return t, Errorf("%v", err), false
	}
	upd := acp.ToolCallUpdate{Title: &title, Kind: &kind, RawInput: c.Input, Locations: []acp.ToolCallLocation{{Path: t.Path}}}
	if ok, why := env.Authorize(ctx, c, permissions.Call{Tool: c.Name, Kind: kind, ReadOnly: kind != acp.ToolKindEdit, Paths: []permissions.Path{permPath(t)}}, upd); !ok {
		return t, Errorf("%s", why), false
	}
	return t, Result{}, true
}

func location(env Env, c *Call, path string, line int) {
	loc := acp.ToolCallLocation{Path: path}
	if line > 0 {
		l := uint32(line)
		loc.Line = &l
	}
	env.Update(acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(c.ID), Locations: []acp.ToolCallLocation{loc}})
}

func readFileTool() *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name:        "read_file",
			Description: "Read a text file. Returns numbered lines (cat -n style). Large files are read in windows: pass offset (1-based line) and limit (default 2000 lines).",
			InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string","description":"Absolute path, or relative to the working directory"},"offset":{"type":"integer","minimum":1,"description":"First line to read (1-based)"},"limit":{"type":"integer","minimum":1,"description":"Number of lines to read"}},"required":["path"],"additionalProperties":false}`),
		},
		Kind:     acp.ToolKindRead,
		ReadOnly: true,
		Title:    pathTitle("Read"),
		Run: func(ctx context.Context, env Env, c *Call) Result {
			in, err := DecodeInput[struct {
				Path   string `json:"path"`
				Offset int    `json:"offset"`
				Limit  int    `json:"limit"`
			}](c.Input)
			if err != nil {
				return Errorf("invalid read_file arguments: %v", err)
			}
			t, res, ok := gate(ctx, env, c, in.Path, acp.ToolKindRead, "Read "+in.Path)
			if !ok {
				return res
			}
			lines, err := env.Files().ReadLines(ctx, t.Path, in.Offset, in.Limit)
			if err != nil {
				return Errorf("reading %s: %v", in.Path, err)
			}
			env.SawFile(t.Path)
			location(env, c, t.Path, lines.FirstLine)
			var b strings.Builder
			for i, l := range lines.Lines {
				fmt.Fprintf(&b, "%6d\t%s\n", lines.FirstLine+i, l)
			}
			switch {
			case lines.TotalLines == 0:
				b.WriteString("(the file is empty)\n")
			case len(lines.Lines) == 0:
				fmt.Fprintf(&b, "(no lines at offset %d; the file has %d lines)\n", lines.FirstLine, lines.TotalLines)
			case lines.More:
				last := lines.FirstLine + len(lines.Lines) - 1
				fmt.Fprintf(&b, "(showing lines %d-%d of %d; read on with offset %d)\n", lines.FirstLine, last, lines.TotalLines, last+1)
			}
			return Result{Text: b.String()}
		},
	}
}

func writeFileTool() *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name:        "write_file",
			Description: "Create a file or replace its whole content. To change part of an existing file prefer edit_file; an existing file must have been read first.",
			InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`),
		},
		Kind:  acp.ToolKindEdit,
		Title: pathTitle("Write"),
		Run: func(ctx context.Context, env Env, c *Call) Result {
			in, err := DecodeInput[struct {
				Path    string `json:"path"`
				Content string `json:"content"`
			}](c.Input)
			if err != nil {
				return Errorf("invalid write_file arguments: %v", err)
			}
			t, res, ok := gate(ctx, env, c, in.Path, acp.ToolKindEdit, "Write "+in.Path)
			if !ok {
				return res
			}
			prev, existed, err := env.Files().WriteFile(ctx, t.Path, in.Content)
			if err != nil {
				return Errorf("writing %s: %v", in.Path, err)
			}
			env.SawFile(t.Path)
			d := &acp.Diff{Path: t.Path, NewText: in.Content}
			if existed {
				d.OldText = &prev
			}
			verb := "Created"
			if existed {
				verb = "Wrote"
			}
			return Result{
				Text:    fmt.Sprintf("%s %s (%d bytes, %d lines).", verb, display(env, t.Path), len(in.Content), strings.Count(in.Content, "\n")),
				Content: []acp.ToolCallContent{{Diff: d}},
			}
		},
	}
}

// errEdit is an edit_file mismatch; its message goes to the model.
type errEdit struct{ msg string }

func (e errEdit) Error() string { return e.msg }

func editFileTool() *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name:        "edit_file",
			Description: "Replace an exact string in a file. old_string must match the file exactly (including whitespace) and be unique unless replace_all is true; read the file first.",
			InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string"},"old_string":{"type":"string"},"new_string":{"type":"string"},"replace_all":{"type":"boolean"}},"required":["path","old_string","new_string"],"additionalProperties":false}`),
		},
		Kind:  acp.ToolKindEdit,
		Title: pathTitle("Edit"),
		Run: func(ctx context.Context, env Env, c *Call) Result {
			in, err := DecodeInput[struct {
				Path       string `json:"path"`
				OldString  string `json:"old_string"`
				NewString  string `json:"new_string"`
				ReplaceAll bool   `json:"replace_all"`
			}](c.Input)
			if err != nil {
				return Errorf("invalid edit_file arguments: %v", err)
			}
			if in.OldString == "" {
				return Errorf("old_string is empty; use write_file to create a file")
			}
			if in.OldString == in.NewString {
				return Errorf("old_string and new_string are the same; nothing to change")
			}
			t, res, ok := gate(ctx, env, c, in.Path, acp.ToolKindEdit, "Edit "+in.Path)
			if !ok {
				return res
			}
			var count int
			prev, next, err := env.Files().EditFile(ctx, t.Path, func(old string) (string, error) {
				count = strings.Count(old, in.OldString)
				switch {
				case count == 0:
					return "", errEdit{"old_string was not found in the file; read the file again and copy the text exactly"}
				case count > 1 && !in.ReplaceAll:
					return "", errEdit{fmt.Sprintf("old_string occurs %d times; add surrounding context to make it unique, or set replace_all", count)}
				}
				if in.ReplaceAll {
					return strings.ReplaceAll(old, in.OldString, in.NewString), nil
				}
				return strings.Replace(old, in.OldString, in.NewString, 1), nil
			})
			if err != nil {
				var ee errEdit
				if errors.As(err, &ee) {
					return Errorf("%s: %s", in.Path, ee.msg)
				}
				return Errorf("editing %s: %v", in.Path, err)
			}
			before, _, _ := strings.Cut(prev, in.OldString)
			line := strings.Count(before, "\n") + 1
			location(env, c, t.Path, line)
			return Result{
				Text:    fmt.Sprintf("Edited %s: replaced %d occurrence(s) (first at line %d).", display(env, t.Path), max(1, count), line),
				Content: []acp.ToolCallContent{{Diff: &acp.Diff{Path: t.Path, OldText: &prev, NewText: next}}},
			}
		},
	}
}

func listDirTool(Options) *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name:        "list_dir",
			Description: "List a directory's entries (directories end with /).",
			InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`),
		},
		Kind:     acp.ToolKindRead,
		ReadOnly: true,
		Title:    pathTitle("List"),
		Run: func(ctx context.Context, env Env, c *Call) Result {
			in, err := DecodeInput[struct {
				Path string `json:"path"`
			}](c.Input)
			if err != nil {
				return Errorf("invalid list_dir arguments: %v", err)
			}
			t, res, ok := gate(ctx, env, c, in.Path, acp.ToolKindRead, "List "+in.Path)
			if !ok {
				return res
			}
			ents, err := os.ReadDir(t.Path)
			if err != nil {
				return Errorf("listing %s: %v", in.Path, err)
			}
			var b strings.Builder
			for i, e := range ents {
				if i == maxListEntries {
					fmt.Fprintf(&b, "[… %d more entries]\n", len(ents)-i)
					break
				}
				name := e.Name()
				switch {
				case e.IsDir():
					name += "/"
				case e.Type()&iofs.ModeSymlink != 0:
					name += "@"
				}
				b.WriteString(name)
				b.WriteByte('\n')
			}
			if len(ents) == 0 {
				b.WriteString("(empty directory)\n")
			}
			return Result{Text: b.String()}
		},
	}
}
