package tools

import (
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"acpd/permissions"
)

// readIn reads name with read_file, as an edit needs first.
func (e *testEnv) readIn(name string) {
	e.t.Helper()
	mustOK(e.t, e.run(e.t.Context(), "read_file", input(e.t, map[string]string{"path": name})))
}

// edit_file replaces one occurrence, says where, shows the region and
// returns the diff; the file on disk changes and is recorded as seen.
func TestEditFile(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModeAutoEdit)
	p := e.write("a.go", "package a\n\nfunc A() int {\n\treturn 1\n}\n")
	e.readIn("a.go")
	res := e.run(t.Context(), "edit_file", `{"path":"a.go","old_string":"return 1","new_string":"return 2"}`)
	want := "Edited a.go: replaced 1 occurrence(s) (line 4).\nThe edited region now reads:\n"
	if got := mustOK(t, res); !strings.HasPrefix(got, want) || !strings.Contains(got, "return 2") {
		t.Fatalf("result %q", got)
	}
	d := diffOf(t, res)
	if d.Path != p || *d.OldText != "package a\n\nfunc A() int {\n\treturn 1\n}\n" || d.NewText != "package a\n\nfunc A() int {\n\treturn 2\n}\n" {
		t.Fatalf("diff %+v", d)
	}
	if got := e.read("a.go"); got != d.NewText {
		t.Fatalf("on disk %q", got)
	}
	// Consecutive edits need no re-read; replace_all changes every one.
	e.write("b.txt", "x y x\nx\n")
	e.readIn("b.txt")
	if got := mustOK(t, e.run(t.Context(), "edit_file", `{"path":"b.txt","old_string":"x","new_string":"z","replace_all":true}`)); !strings.HasPrefix(got, "Edited b.txt: replaced 3 occurrence(s) (line 1)." /* the first replacement */) {
		t.Fatalf("replace_all %q", got)
	}
	if got := e.read("b.txt"); got != "z y z\nz\n" {
		t.Fatalf("on disk %q", got)
	}
	// A match that is not exact says which matcher found it.
	if got := mustOK(t, e.run(t.Context(), "edit_file", `{"path":"b.txt","old_string":"z y z   ","new_string":"w"}`)); !strings.Contains(got, "old_string matched ignoring trailing whitespace, not exactly") {
		t.Fatalf("fuzzy %q", got)
	}
	// old_str/new_str are taken for old_string/new_string.
	mustOK(t, e.run(t.Context(), "edit_file", `{"path":"b.txt","old_str":"w","new_str":"v"}`))
	if got := e.read("b.txt"); got != "v\nz\n" {
		t.Fatalf("on disk %q", got)
	}
}

// edit_file's refusals change nothing: an empty or no-op old_string, no
// match, several matches, a file changed since it was read, a missing file.
func TestEditFileRefusals(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModeAutoEdit)
	e.write("a.txt", "one\ntwo\none\n")
	e.readIn("a.txt")
	for _, tc := range []struct{ in, want string }{
		{`{"path":"a.txt","old_string":"","new_string":"x"}`, "old_string is empty; use write_file"},
		{`{"path":"a.txt","old_string":"two","new_string":"two"}`, "old_string and new_string are the same"},
		{`{"path":"a.txt","old_string":"three","new_string":"x"}`, "a.txt: old_string was not found in the file."},
		{`{"path":"a.txt","old_string":"one","new_string":"x"}`, "a.txt: old_string occurs 2 times (at lines 1, 3)"},
		{`{"path":"missing.txt","old_string":"a","new_string":"b"}`, "editing missing.txt:"},
		{`{"path":"a.txt","old":"a","old_string":"b","new_string":"c"}`, `unknown argument "old"`},
	} {
		mustFail(t, e.run(t.Context(), "edit_file", tc.in), tc.want)
	}
	if got := e.read("a.txt"); got != "one\ntwo\none\n" {
		t.Fatalf("a refused edit changed the file: %q", got)
	}
	// Changed on disk since the read: stale, and the change is kept.
	e.write("a.txt", "one\ntwo\nthree\n")
	mustFail(t, e.run(t.Context(), "edit_file", `{"path":"a.txt","old_string":"two","new_string":"2"}`), "editing a.txt:")
	if got := e.read("a.txt"); got != "one\ntwo\nthree\n" {
		t.Fatalf("a stale edit changed the file: %q", got)
	}
}

// In ask mode the permission request shows the edit's diff; an edit that
// does not apply asks without one and reports the error after approval.
func TestEditFileAsksWithDiff(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModeAsk)
	e.write("a.txt", "alpha\n")
	e.readIn("a.txt")
	e.answer = permissions.RejectOnce
	mustFail(t, e.run(t.Context(), "edit_file", `{"path":"a.txt","old_string":"alpha","new_string":"beta"}`), "rejected")
	asked := e.requests()
	if len(asked) != 1 || len(asked[0].preview) != 1 || asked[0].preview[0].Diff.NewText != "beta\n" || *asked[0].preview[0].Diff.OldText != "alpha\n" {
		t.Fatalf("requests %+v", asked)
	}
	if got := e.read("a.txt"); got != "alpha\n" {
		t.Fatalf("a refused edit changed the file: %q", got)
	}
	e.answer = permissions.AllowOnce
	mustFail(t, e.run(t.Context(), "edit_file", `{"path":"a.txt","old_string":"gamma","new_string":"beta"}`), "not found")
	if asked := e.requests(); len(asked) != 2 || asked[1].preview != nil {
		t.Fatalf("a failing edit's request showed %+v", asked[len(asked)-1].preview)
	}
}

// multi_edit applies its edits in order, all or none.
func TestMultiEdit(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModeAutoEdit)
	e.write("a.txt", "a\nb\nc\n")
	e.readIn("a.txt")
	res := e.run(t.Context(), "multi_edit", `{"path":"a.txt","edits":[{"old_string":"a","new_string":"A"},{"old_string":"A\nb","new_string":"AB"},{"old_string":"c","new_string":"C","replace_all":true}]}`)
	got := mustOK(t, res)
	for _, want := range []string{"Edited a.txt with 3 edits:\n", "edit 1 replaced 1 occurrence(s) (line 1).\n", "edit 3 replaced 1 occurrence(s) (line 2).\n", "The last edited region now reads:\n"} {
		if !strings.Contains(got, want) {
			t.Fatalf("result %q lacks %q", got, want)
		}
	}
	if d := diffOf(t, res); *d.OldText != "a\nb\nc\n" || d.NewText != "AB\nC\n" {
		t.Fatalf("diff %+v", d)
	}
	if got := e.read("a.txt"); got != "AB\nC\n" {
		t.Fatalf("on disk %q", got)
	}

	// The second edit fails: the first is not applied either.
	mustFail(t, e.run(t.Context(), "multi_edit", `{"path":"a.txt","edits":[{"old_string":"AB","new_string":"x"},{"old_string":"nope","new_string":"y"}]}`), "a.txt: edit 2")
	mustFail(t, e.run(t.Context(), "multi_edit", `{"path":"a.txt","edits":[]}`), "edits is empty")
	mustFail(t, e.run(t.Context(), "multi_edit", `{"path":"a.txt","edits":[{"old_string":"AB","new_string":"x"},{"old_string":"","new_string":"y"}]}`), "edit 2: old_string is empty")
	mustFail(t, e.run(t.Context(), "multi_edit", `{"path":"a.txt","edits":[{"old_string":"AB","new_string":"x","all":true}]}`), "invalid multi_edit arguments")
	if got := e.read("a.txt"); got != "AB\nC\n" {
		t.Fatalf("a failed multi_edit changed the file: %q", got)
	}
}

// apply_patch adds, updates and deletes files in one step and lists them
// with their diffs; a patch that does not fit changes nothing.
func TestApplyPatch(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModeAutoEdit)
	e.write("src/app.py", "def greet():\n    print(\"hi\")\n")
	e.write("old.txt", "bye\n")
	e.readIn("src/app.py")
	e.readIn("old.txt")
	patchText := "*** Begin Patch\n*** Add File: docs/new.md\n+# New\n*** Update File: src/app.py\n@@ def greet():\n-    print(\"hi\")\n+    print(\"hello\")\n*** Delete File: old.txt\n*** End Patch\n"
	res := e.run(t.Context(), "apply_patch", input(t, map[string]string{"input": patchText}))
	if got := mustOK(t, res); got != "Applied the patch:\nA docs/new.md\nM src/app.py\nD old.txt\n" {
		t.Fatalf("result %q", got)
	}
	if len(res.Content) != 3 {
		t.Fatalf("content %+v", res.Content)
	}
	if d := res.Content[0].Diff; d.Path != e.path("docs/new.md") || d.OldText != nil || d.NewText != "# New\n" {
		t.Fatalf("add diff %+v", d)
	}
	if d := res.Content[1].Diff; *d.OldText != "def greet():\n    print(\"hi\")\n" || d.NewText != "def greet():\n    print(\"hello\")\n" {
		t.Fatalf("update diff %+v", d)
	}
	if got := e.read("src/app.py"); got != "def greet():\n    print(\"hello\")\n" {
		t.Fatalf("on disk %q", got)
	}
	if got := e.read("docs/new.md"); got != "# New\n" {
		t.Fatalf("added %q", got)
	}
	if _, err := os.Stat(e.path("old.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("deleted file: %v", err)
	}

	// The second file's chunk does not fit: the first is not written.
	bad := "*** Begin Patch\n*** Add File: more.txt\n+x\n*** Update File: src/app.py\n@@\n-nothing like this\n+y\n*** End Patch\n"
	mustFail(t, e.run(t.Context(), "apply_patch", input(t, map[string]string{"input": bad})), "the patch was not applied, nothing changed")
	if _, err := os.Stat(e.path("more.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a failed patch added a file: %v", err)
	}
	mustFail(t, e.run(t.Context(), "apply_patch", `{"input":"not a patch"}`), "")
	mustFail(t, e.run(t.Context(), "apply_patch", `{"input":1}`), "invalid apply_patch arguments")
	// A file changed since it was read is stale: nothing changes.
	e.write("src/app.py", "changed\n")
	upd := "*** Begin Patch\n*** Update File: src/app.py\n@@\n-changed\n+again\n*** End Patch\n"
	mustFail(t, e.run(t.Context(), "apply_patch", input(t, map[string]string{"input": upd})), "the patch was not applied, nothing changed")
	if got := e.read("src/app.py"); got != "changed\n" {
		t.Fatalf("a stale patch changed the file: %q", got)
	}
	// patch is taken for input.
	e.readIn("src/app.py")
	mustOK(t, e.run(t.Context(), "apply_patch", input(t, map[string]string{"patch": upd})))
	if got := e.read("src/app.py"); got != "again\n" {
		t.Fatalf("on disk %q", got)
	}
}

// In ask mode apply_patch asks once for all its paths, showing the diffs;
// refused, nothing changes.
func TestApplyPatchAsks(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t, permissions.ModeAsk)
	e.write("a.txt", "a\n")
	e.readIn("a.txt")
	e.answer = permissions.RejectOnce
	p := "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+b\n*** Add File: c.txt\n+c\n*** End Patch\n"
	mustFail(t, e.run(t.Context(), "apply_patch", input(t, map[string]string{"input": p})), "rejected")
	asked := e.requests()
	if len(asked) != 1 || len(asked[0].req.Paths) != 2 || *asked[0].upd.Title != "Patch 2 file(s)" || len(asked[0].preview) != 2 || asked[0].preview[0].Diff.NewText != "b\n" {
		t.Fatalf("requests %+v", asked)
	}
	if got := e.read("a.txt"); got != "a\n" {
		t.Fatalf("a refused patch changed the file: %q", got)
	}
}
