package tools

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"acpd/model"
	"acpd/permissions"
)

// What the editor shows of a read: a fenced block in the file's language,
// no line numbers, a fence longer than the text's backtick runs.
func TestFenced(t *testing.T) {
	for _, tc := range []struct {
		path  string
		lines []string
		max   int
		want  string
	}{
		{"/p/main.go", []string{"package main", "", "func main() {}"}, 1 << 10, "```go\npackage main\n\nfunc main() {}\n```"},
		{"/p/README.md", []string{"```sh", "make", "```"}, 1 << 10, "````md\n```sh\nmake\n```\n````"},
		{"/p/Makefile", []string{"all:"}, 1 << 10, "```\nall:\n```"},
		{"/p/weird.a b", []string{"x"}, 1 << 10, "```\nx\n```"},
		{"/p/big.txt", []string{"0123456789", "0123456789", "0123456789"}, 15, "```txt\n0123456789\n```"},
	} {
		if got := fenced(tc.path, tc.lines, tc.max); got != tc.want {
			t.Errorf("fenced(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}

// read_file shows a window of numbered lines with a footer saying where to
// read on, reports the first line's location and records the file as seen.
func TestReadFileWindow(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModeAsk)
	var body strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&body, "line %d\n", i)
	}
	p := e.write("src/a.go", body.String())

	res := e.run(t.Context(), "read_file", `{"path":"src/a.go","offset":3,"limit":2}`)
	want := "     3\tline 3\n     4\tline 4\n(showing lines 3-4 of 10; read on with offset 5)\n"
	if got := mustOK(t, res); got != want || !res.Bounded {
		t.Fatalf("window = %q (bounded %v), want %q", got, res.Bounded, want)
	}
	if len(res.Content) != 1 || res.Content[0].Content.Content.Text.Text != "```go\nline 3\nline 4\n```" {
		t.Fatalf("content %+v", res.Content)
	}
	if saw := e.seen(); !slices.Equal(saw, []string{p}) {
		t.Fatalf("seen %v, want %s", saw, p)
	}
	var line uint32
	for _, u := range e.recordedUpdates() {
		for _, l := range u.Locations {
			if l.Path == p && l.Line != nil {
				line = *l.Line
			}
		}
	}
	if line != 3 {
		t.Fatalf("location line %d, want 3", line)
	}
	// Inside the project reads need no approval in ask mode.
	if n := len(e.requests()); n != 0 {
		t.Fatalf("%d permission requests for a read inside the project", n)
	}

	// The whole file by default, no footer; past the end says so.
	if got := mustOK(t, e.run(t.Context(), "read_file", `{"path":"src/a.go"}`)); !strings.HasPrefix(got, "     1\tline 1\n") || !strings.HasSuffix(got, "    10\tline 10\n") {
		t.Fatalf("whole file = %q", got)
	}
	if got := mustOK(t, e.run(t.Context(), "read_file", `{"path":"src/a.go","offset":20}`)); got != "(no lines at offset 20; the file has 10 lines)\n" {
		t.Fatalf("past the end = %q", got)
	}
	e.write("empty.txt", "")
	if got := mustOK(t, e.run(t.Context(), "read_file", `{"path":"empty.txt"}`)); got != "(the file is empty)\n" {
		t.Fatalf("empty file = %q", got)
	}
	// An alias of path is taken as path.
	if got := mustOK(t, e.run(t.Context(), "read_file", `{"file_path":"src/a.go","limit":1}`)); !strings.HasPrefix(got, "     1\tline 1\n(showing lines 1-1 of 10") {
		t.Fatalf("file_path alias = %q", got)
	}
}

// read_file refuses directories, binary files (NUL at the start or later)
// and bad arguments, and names a missing file.
func TestReadFileRefusals(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModeAsk)
	e.write("dir/x.txt", "x\n")
	e.write("blob.bin", "\x00\x01\x02ELF")
	e.write("late.txt", strings.Repeat("text line\n", 1000)+"a\x00b\n")
	for _, tc := range []struct{ in, want string }{
		{`{"path":"dir"}`, "dir is a directory; use list_dir"},
		{`{"path":"blob.bin"}`, "blob.bin is a binary file"},
		{`{"path":"late.txt"}`, "late.txt is a binary file"},
		{`{"path":"missing.txt"}`, "reading missing.txt:"},
		{`{"path":"a","bogus":1}`, `invalid read_file arguments: unknown argument "bogus"; the arguments are path, offset, limit`},
		{`{"path":7}`, "invalid read_file arguments"},
	} {
		res := e.run(t.Context(), "read_file", tc.in)
		mustFail(t, res, tc.want)
		if len(res.Content) != 0 {
			t.Errorf("%s: a refusal shows content %+v", tc.in, res.Content)
		}
	}
	// Only late.txt was read (its NUL shows only then).
	if saw := e.seen(); !slices.Equal(saw, []string{e.path("late.txt")}) {
		t.Fatalf("refused reads recorded files as seen: %v", saw)
	}
}

// tinyPNG is a 1x1 PNG image.
var tinyPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

// An image is given to the model as an image part; one over the limit is
// refused; a file named .png that is not an image is read as text.
func TestReadFileImage(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModeAsk)
	p := e.write("logo.png", string(tinyPNG))
	res := e.run(t.Context(), "read_file", `{"path":"logo.png"}`)
	if got := mustOK(t, res); got != fmt.Sprintf("logo.png is an image (image/png, %d bytes); it follows.", len(tinyPNG)) {
		t.Fatalf("text %q", got)
	}
	if len(res.Images) != 1 || res.Images[0].Type != model.PartImage || res.Images[0].MimeType != "image/png" || res.Images[0].Data != base64.StdEncoding.EncodeToString(tinyPNG) {
		t.Fatalf("images %+v", res.Images)
	}
	if part := res.Part("id"); len(part.Content) != 2 || part.Content[1].Type != model.PartImage {
		t.Fatalf("model part %+v", part)
	}
	if !slices.Contains(e.seen(), p) {
		t.Fatal("the image was not recorded as seen")
	}

	big := append(slices.Clone(tinyPNG), make([]byte, maxImageBytes)...)
	e.write("big.png", string(big))
	mustFail(t, e.run(t.Context(), "read_file", `{"path":"big.png"}`), "over the 5242880-byte limit")

	e.write("notes.png", "not an image\n")
	if got := mustOK(t, e.run(t.Context(), "read_file", `{"path":"notes.png"}`)); got != "     1\tnot an image\n" {
		t.Fatalf("text named .png = %q", got)
	}
}

// A read outside the project asks; refused, nothing of the file is shown.
// A command output the session saved reads without asking.
func TestReadFileOutsideAsks(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModeAsk)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("k3y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.answer = permissions.RejectOnce
	res := e.run(t.Context(), "read_file", input(t, map[string]string{"path": outside}))
	mustFail(t, res, "The user rejected this call.")
	if strings.Contains(res.Text, "k3y") || len(e.requests()) != 1 || e.requests()[0].req.Paths[0].Inside {
		t.Fatalf("result %+v, requests %+v", res, e.requests())
	}

	saved := filepath.Join(t.TempDir(), "acpd-output-1.txt")
	if err := os.WriteFile(saved, []byte("whole output\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.jobs.addSaved(saved)
	real, _ := filepath.EvalSymlinks(saved)
	if !e.jobs.IsSaved(real) {
		t.Fatal("IsSaved is false for a saved output")
	}
	if got := mustOK(t, e.run(t.Context(), "read_file", input(t, map[string]string{"path": saved}))); got != "     1\twhole output\n" {
		t.Fatalf("saved output = %q", got)
	}
	if n := len(e.requests()); n != 1 {
		t.Fatalf("reading a saved output asked (%d requests)", n)
	}
	// Plan mode still reads inside the project.
	e.mode = permissions.ModePlan
	e.write("a.txt", "a\n")
	mustOK(t, e.run(t.Context(), "read_file", `{"path":"a.txt"}`))
}

// write_file creates files (and their directories) and replaces read ones,
// with a diff; an existing file never read is refused as stale.
func TestWriteFile(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModeAutoEdit)
	res := e.run(t.Context(), "write_file", `{"path":"new/dir/a.txt","content":"one\ntwo\n"}`)
	if got := mustOK(t, res); got != "Created new/dir/a.txt (8 bytes, 2 lines)." {
		t.Fatalf("create: %q", got)
	}
	if d := diffOf(t, res); d.Path != e.path("new/dir/a.txt") || d.OldText != nil || d.NewText != "one\ntwo\n" {
		t.Fatalf("create diff %+v", d)
	}
	if got := e.read("new/dir/a.txt"); got != "one\ntwo\n" {
		t.Fatalf("on disk %q", got)
	}
	res = e.run(t.Context(), "write_file", `{"path":"new/dir/a.txt","content":"three\n"}`)
	if got := mustOK(t, res); got != "Wrote new/dir/a.txt (6 bytes, 1 lines)." {
		t.Fatalf("replace: %q", got)
	}
	if d := diffOf(t, res); d.OldText == nil || *d.OldText != "one\ntwo\n" || d.NewText != "three\n" {
		t.Fatalf("replace diff %+v", d)
	}

	e.write("old.txt", "before\n")
	mustFail(t, e.run(t.Context(), "write_file", `{"path":"old.txt","content":"after\n"}`), "writing old.txt:")
	if got := e.read("old.txt"); got != "before\n" {
		t.Fatalf("a stale write changed the file: %q", got)
	}
	mustFail(t, e.run(t.Context(), "write_file", `{"path":"x","content":"y","mode":1}`), `unknown argument "mode"`)
}

// In ask mode the permission request shows the write's diff; refused,
// nothing is written.
func TestWriteFileAsksWithDiff(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModeAsk)
	e.write("a.txt", "old\n")
	mustOK(t, e.run(t.Context(), "read_file", `{"path":"a.txt"}`))
	e.answer = permissions.RejectOnce
	mustFail(t, e.run(t.Context(), "write_file", `{"path":"a.txt","content":"new\n"}`), "rejected")
	asked := e.requests()
	if len(asked) != 1 || len(asked[0].preview) != 1 {
		t.Fatalf("requests %+v", asked)
	}
	if d := asked[0].preview[0].Diff; d == nil || d.OldText == nil || *d.OldText != "old\n" || d.NewText != "new\n" || d.Path != e.path("a.txt") {
		t.Fatalf("preview %+v", asked[0].preview)
	}
	if got := e.read("a.txt"); got != "old\n" {
		t.Fatalf("a refused write changed the file: %q", got)
	}
	// A new file's preview has no old text.
	mustFail(t, e.run(t.Context(), "write_file", `{"path":"b.txt","content":"b\n"}`), "rejected")
	if d := e.requests()[1].preview[0].Diff; d.OldText != nil || d.NewText != "b\n" {
		t.Fatalf("new file preview %+v", d)
	}
	if _, err := os.Stat(e.path("b.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a refused write created the file: %v", err)
	}
	// Plan mode refuses edits outright.
	e.mode = permissions.ModePlan
	mustFail(t, e.run(t.Context(), "write_file", `{"path":"b.txt","content":"b\n"}`), "Not allowed:")
}

// list_dir marks directories with / and symbolic links with @, says when a
// directory is empty and bounds long listings.
func TestListDir(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModeAsk)
	e.write("b.txt", "")
	e.write("a/x.txt", "")
	if err := os.Symlink("b.txt", e.path("link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(e.path("empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := mustOK(t, e.run(t.Context(), "list_dir", `{"path":"."}`)); got != "a/\nb.txt\nempty/\nlink@\n" {
		t.Fatalf("listing %q", got)
	}
	if got := mustOK(t, e.run(t.Context(), "list_dir", `{"path":"empty"}`)); got != "(empty directory)\n" {
		t.Fatalf("empty %q", got)
	}
	mustFail(t, e.run(t.Context(), "list_dir", `{"path":"nope"}`), "listing nope:")
	// No path (or "") is the working directory.
	if got := mustOK(t, e.run(t.Context(), "list_dir", `{}`)); got != "a/\nb.txt\nempty/\nlink@\n" {
		t.Fatalf("listing the working directory: %q", got)
	}

	for i := range maxListEntries + 5 {
		e.write(fmt.Sprintf("many/f%04d", i), "")
	}
	got := mustOK(t, e.run(t.Context(), "list_dir", `{"path":"many"}`))
	if lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n"); len(lines) != maxListEntries+1 || lines[maxListEntries] != "[… 5 more entries]" {
		t.Fatalf("%d lines, last %q", len(lines), lines[len(lines)-1])
	}
}
