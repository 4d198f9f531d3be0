package tools

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"acpd/model"
)

// Builtin returns every tool once, sorted by name, each with a kind and a
// run function.
func TestBuiltin(t *testing.T) {
	t.Parallel()
	ts := Builtin(Options{})
	var names []string
	for _, tl := range ts {
		if tl.Run == nil || tl.Kind == "" || tl.Def.Description == "" || tl.Title == nil {
			t.Errorf("%s is incomplete: %+v", tl.Def.Name, tl)
		}
		names = append(names, tl.Def.Name)
	}
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Fatalf("names %v", names)
	}
	for _, n := range []string{"read_file", "write_file", "edit_file", "multi_edit", "apply_patch", "list_dir", "glob", "grep", "run_command", "job_output", "job_stop", "update_plan", "web_fetch", "ask_user"} {
		if !slices.Contains(names, n) {
			t.Errorf("no %s in %v", n, names)
		}
	}
}

// Titles are readable from partial or invalid input.
func TestTitles(t *testing.T) {
	t.Parallel()
	titles := map[string]func(json.RawMessage) string{}
	for _, tl := range Builtin(Options{}) {
		titles[tl.Def.Name] = tl.Title
	}
	for _, tc := range []struct{ tool, in, want string }{
		{"read_file", `{"path":"a.go"}`, "Read a.go"},
		{"read_file", `{"pa`, "Read"},
		{"grep", `{"pattern":"TODO","path":"src"}`, `Search "TODO" in src`},
		{"glob", `{"pattern":"*.go"}`, `Find "*.go"`},
		{"job_stop", `{"id":"job3"}`, "Stop job3"},
		{"job_output", `{"id":"job3"}`, "Output of job3"},
		{"apply_patch", `{}`, "Apply patch"},
		{"update_plan", `{}`, "Update plan"},
		{"web_fetch", `{"url":"https://example.org/a"}`, "Fetch https://example.org/a"},
		{"web_fetch", `{"url":"https://example.org/` + strings.Repeat("x", 200) + `"}`, "Fetch https://example.org/" + strings.Repeat("x", 100-len("https://example.org/")) + "…"},
	} {
		if got := titles[tc.tool](json.RawMessage(tc.in)); got != tc.want {
			t.Errorf("%s title of %s = %q, want %q", tc.tool, tc.in, got, tc.want)
		}
	}
}

// Bound keeps head and tail of long output at character boundaries and
// says how much it cut; Truncate cuts at a boundary and marks it.
func TestBoundAndTruncate(t *testing.T) {
	t.Parallel()
	if got := Bound("short"); got != "short" {
		t.Fatalf("Bound(short) = %q", got)
	}
	long := strings.Repeat("é", MaxResultBytes) // 2 bytes each
	got := Bound(long)
	if !utf8.ValidString(got) || len(got) > MaxResultBytes+100 || !strings.Contains(got, " bytes cut from the middle of this output …]") {
		t.Fatalf("Bound: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	if got := Truncate("héllo", 2); got != "h…" {
		t.Fatalf("Truncate = %q", got)
	}
	if got := Truncate("hi", 5); got != "hi" {
		t.Fatalf("Truncate = %q", got)
	}
	if got := Fence("a ``` b\n"); got != "````\na ``` b\n````" {
		t.Fatalf("Fence = %q", got)
	}
}

// A result's part for the model: "(no output)" for an empty success, the
// images after the text.
func TestResultPart(t *testing.T) {
	t.Parallel()
	p := Result{}.Part("c1")
	if p.Type != model.PartToolResult || p.ToolCallID != "c1" || p.IsError || len(p.Content) != 1 || p.Content[0].Text != "(no output)" {
		t.Fatalf("empty success %+v", p)
	}
	if p := Errorf("bad %d", 1).Part("c2"); !p.IsError || p.Content[0].Text != "bad 1" {
		t.Fatalf("error %+v", p)
	}
	img := model.Part{Type: model.PartImage, MimeType: "image/png", Data: "AA=="}
	if p := (Result{Text: "see", Images: []model.Part{img}}).Part("c3"); len(p.Content) != 2 || p.Content[1].Type != model.PartImage || p.Content[1].Data != img.Data {
		t.Fatalf("image %+v", p)
	}
}

// The apply_patch models are OpenAI's GPT, o-series and Codex models.
func TestPatchModel(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]bool{
		"gpt-5": true, "openai/gpt-4.1": true, "o3-mini": true, "o1": true, "gpt-5-codex": true, "codex-mini-latest": true,
		"claude-sonnet-4": false, "gemini-2.5-pro": false, "omni": false, "o": false, "": false,
	} {
		if got := PatchModel(id); got != want {
			t.Errorf("PatchModel(%q) = %v, want %v", id, got, want)
		}
	}
}

// Shell names the shell run_command runs.
func TestShell(t *testing.T) {
	t.Parallel()
	if Shell() == "" {
		t.Fatal("no shell")
	}
}
