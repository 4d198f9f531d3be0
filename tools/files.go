package tools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"acpd/acp"
	"acpd/files"
	"acpd/internal/lazy"
	"acpd/model"
	"acpd/permissions"
	"acpd/tools/clip"
)

// maxListEntries bounds list_dir's output.
const maxListEntries = 1000

// permPath is the permission policy's view of a resolved path.
func permPath(r files.Resolved) permissions.Path {
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
func gate(ctx context.Context, env Env, c *Call, path string, kind acp.ToolKind, title string) (files.Resolved, Result, bool) {
	return gatePreview(ctx, env, c, path, kind, title, nil)
}

// gatePreview is gate with the proposed change shown in the permission
// request: preview (when not nil) returns the content (a diff) the user
// approves, or nil when it cannot be computed (the call then asks without
// it and reports any error after approval, so nothing of the file reaches
// the model before the user allowed the call).
func gatePreview(ctx context.Context, env Env, c *Call, path string, kind acp.ToolKind, title string, preview func(files.Resolved) []acp.ToolCallContent) (files.Resolved, Result, bool) {
	t, err := env.Resolve(path)
	if err != nil {
		return t, Errorf("%v", err), false
	}
	upd := acp.ToolCallUpdate{Title: &title, Kind: &kind, RawInput: c.Input, Locations: []acp.ToolCallLocation{{Path: t.Path}}}
	pp := permPath(t)
	if kind != acp.ToolKindEdit && !pp.Inside && env.Jobs().IsSaved(t.Path) {
		// A command output this session saved (named in a run_command
		// note) reads like a project file; rules still apply.
		pp.Inside, pp.Rel = true, filepath.Base(t.Path)
	}
	req := permissions.Call{Tool: c.Name, Kind: kind, ReadOnly: kind != acp.ToolKindEdit, Paths: []permissions.Path{pp}}
	var ok bool
	var why string
	if preview == nil {
		ok, why = env.Authorize(ctx, c, req, upd)
	} else {
		ok, why = env.AuthorizeShowing(ctx, c, req, upd, func() []acp.ToolCallContent { return preview(t) })
	}
	if !ok {
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

// readFileInput is read_file's arguments.
type readFileInput struct {
	Path   string `json:"path"`
	Offset int    `json:"offset"`
	Limit  int    `json:"limit"`
}

func readFileTool() *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name: "read_file",
			Description: "Read a text file. Returns numbered lines (cat -n style: the number, a tab, the line); the numbers are not part of the file. " +
				"A call shows at most limit lines (default 2000) and about 50 KB, ending at a whole line; a footer then names the last line shown and the offset to read on from. " +
				"Lines over 2000 characters are cut. Binary files are refused; for a directory use list_dir. Read several files at once by making several calls in one response.",
			InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string","description":"Absolute path, or relative to the working directory"},"offset":{"type":"integer","minimum":1,"description":"First line to read (1-based; default 1)"},"limit":{"type":"integer","minimum":1,"description":"Most lines to read (default 2000)"}},"required":["path"],"additionalProperties":false}`),
		},
		Kind:     acp.ToolKindRead,
		ReadOnly: true,
		Title:    pathTitle("Read"),
		Run: func(ctx context.Context, env Env, c *Call) Result {
			in, err := DecodeInput[readFileInput](c.Input)
			if err != nil {
				return Errorf("invalid read_file arguments: %v", err)
			}
			t, res, ok := gate(ctx, env, c, in.Path, acp.ToolKindRead, "Read "+in.Path)
			if !ok {
				return res
			}
			if st, err := os.Stat(t.Path); err == nil && st.IsDir() {
				return Errorf("%s is a directory; use list_dir to see its entries", in.Path)
			}
			if mime := imageType(t.Path); mime != "" {
				return readImage(env, c, t.Path, in.Path, mime)
			}
			if binaryFile(t.Path) {
				return Errorf("%s is a binary file; read_file shows text only", in.Path)
			}
			lines, err := env.Files().ReadLines(ctx, t.Path, in.Offset, in.Limit)
			if err != nil {
				return Errorf("reading %s: %v", in.Path, err)
			}
			env.SawFile(t.Path)
			location(env, c, t.Path, lines.FirstLine)
			for _, l := range lines.Lines {
				if strings.IndexByte(l, 0) >= 0 {
					return Errorf("%s is a binary file; read_file shows text only", in.Path)
				}
			}
			return Result{Text: clip.Window(lines.Lines, lines.FirstLine, lines.TotalLines, lines.More, clip.WindowBytes), Bounded: true,
				Content: []acp.ToolCallContent{TextContent(fenced(t.Path, lines.Lines, clip.WindowBytes))}}
		},
	}
}

// fenced is what the editor shows of a file read: the lines (up to about
// max bytes, as the model's copy) as a fenced Markdown code block with the
// file's language, without the model's line numbers, which editors that
// render Markdown misalign. The fence is longer than any run of backticks
// in the text.
func fenced(path string, lines []string, max int) string {
	var body strings.Builder
	for _, l := range lines {
		if body.Len() > 0 && body.Len()+len(l)+1 > max {
			break
		}
		body.WriteString(l)
		body.WriteByte('\n')
	}
	fence := "```"
	for strings.Contains(body.String(), fence) {
		fence += "`"
	}
	lang := strings.TrimPrefix(filepath.Ext(path), ".")
	if !langName.Get().MatchString(lang) {
		lang = ""
	}
	return fence + lang + "\n" + body.String() + fence
}

// langName is a file extension usable as a code block's info string.
var langName = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_+-]{1,16}$`) }}

// maxImageBytes is the largest image read_file gives the model.
const maxImageBytes = 5 << 20

// imageType is the MIME type of an image file the models read (PNG, JPEG,
// GIF, WebP), judged by its name and its first bytes, or "".
func imageType(path string) string {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
	default:
		return ""
	}
	f, err := files.OpenRegular(path) // a FIFO must not block
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	switch mime := http.DetectContentType(head[:n]); mime {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return mime
	}
	return ""
}

// readImage gives the model an image file as an image.
func readImage(env Env, c *Call, abs, shown, mime string) Result {
	f, err := files.OpenRegular(abs) // a FIFO must not block
	if err != nil {
		return Errorf("reading %s: %v", shown, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Errorf("reading %s: %v", shown, err)
	}
	if st.Size() > maxImageBytes {
		return Errorf("%s is an image of %d bytes, over the %d-byte limit for images", shown, st.Size(), maxImageBytes)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxImageBytes+1))
	if err == nil && len(data) > maxImageBytes {
		return Errorf("%s is an image of more than %d bytes, over the limit for images", shown, maxImageBytes)
	}
	if err != nil {
		return Errorf("reading %s: %v", shown, err)
	}
	env.SawFile(abs)
	location(env, c, abs, 0)
	return Result{
		Text:   fmt.Sprintf("%s is an image (%s, %d bytes); it follows.", shown, mime, len(data)),
		Images: []model.Part{{Type: model.PartImage, MimeType: mime, Data: base64.StdEncoding.EncodeToString(data)}},
	}
}

// binaryFile reports whether the file on disk at path starts like a binary
// file (unreadable files are left to the read to report).
func binaryFile(path string) bool {
	f, err := files.OpenRegular(path) // a FIFO must not block
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, 8<<10)
	n, _ := io.ReadFull(f, buf)
	return clip.Binary(buf[:n])
}

// writeFileInput is write_file's arguments.
type writeFileInput struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

func writeFileTool() *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name: "write_file",
			Description: "Create a file, or replace an existing file's whole content. Missing parent directories are created. " +
				"To change part of an existing file use edit_file (or multi_edit) instead; an existing file must have been read first.",
			InputSchema: schema(`{"type":"object","properties":{"path":{"type":"string","description":"Absolute path, or relative to the working directory"},"content":{"type":"string","description":"The whole new content"}},"required":["path","content"],"additionalProperties":false}`),
		},
		Kind:  acp.ToolKindEdit,
		Title: pathTitle("Write"),
		Run: func(ctx context.Context, env Env, c *Call) Result {
			in, err := DecodeInput[writeFileInput](c.Input)
			if err != nil {
				return Errorf("invalid write_file arguments: %v", err)
			}
			t, res, ok := gatePreview(ctx, env, c, in.Path, acp.ToolKindEdit, "Write "+in.Path, func(t files.Resolved) []acp.ToolCallContent {
				d := &acp.Diff{Path: t.Path, NewText: in.Content}
				prev, err := peekFile(ctx, env, t)
				switch {
				case err == nil:
					d.OldText = &prev
				case !errors.Is(err, fs.ErrNotExist):
					return nil
				}
				return []acp.ToolCallContent{{Diff: d}}
			})
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

// listDirInput is list_dir's arguments.
type listDirInput struct {
	Path string `json:"path"`
}

func listDirTool() *Tool {
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
			in, err := DecodeInput[listDirInput](c.Input)
			if err != nil {
				return Errorf("invalid list_dir arguments: %v", err)
			}
			t, res, ok := gate(ctx, env, c, in.Path, acp.ToolKindRead, "List "+in.Path)
			if !ok {
				return res
			}
			tr, err := openTree(env, t)
			if err != nil {
				return Errorf("listing %s: %v", in.Path, err)
			}
			defer tr.close()
			if st, err := fs.Stat(tr.fsys, tr.rel); err == nil && !st.IsDir() {
				return Errorf("%s is not a directory; list_dir lists directories (read a file with read_file)", in.Path)
			}
			ents, err := fs.ReadDir(tr.fsys, tr.rel)
			if err != nil {
				return Errorf("listing %s: %v", in.Path, tr.absErr(err))
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
				case e.Type()&fs.ModeSymlink != 0:
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
