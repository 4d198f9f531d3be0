package patch

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// TestParseGolden parses every testdata/parse/*.patch and compares the
// result (the hunks as JSON, or the error) with its .golden file.
func TestParseGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/parse/*.patch")
	if err != nil || len(files) == 0 {
		t.Fatalf("no patches: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".patch")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			p, err := Parse(string(src))
			if err != nil {
				got = []byte("error: " + err.Error() + "\n")
				if !strings.HasPrefix(name, "err_") {
					t.Errorf("unexpected error: %v", err)
				}
			} else {
				if strings.HasPrefix(name, "err_") {
					t.Errorf("parsed, want an error")
				}
				got, _ = json.MarshalIndent(p, "", "  ")
				got = append(got, '\n')
				// The canonical form parses back to the same patch.
				q, err := Parse(p.String())
				if err != nil || !reflect.DeepEqual(p, q) {
					t.Errorf("round trip: %v\n%s", err, p.String())
				}
			}
			golden := strings.TrimSuffix(f, ".patch") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if string(got) != string(want) {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// memFiles is an in-memory [Files].
type memFiles struct {
	files  map[string]string
	failOn string
	log    []string
}

func (m *memFiles) Read(_ context.Context, p string) (string, error) {
	c, ok := m.files[filepath.Clean(p)]
	if !ok {
		return "", &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	return c, nil
}

func (m *memFiles) Write(_ context.Context, p, c string) error {
	if p == m.failOn {
		return errors.New("disk full")
	}
	m.log = append(m.log, "write "+p)
	m.files[filepath.Clean(p)] = c
	return nil
}

func (m *memFiles) Remove(_ context.Context, p string) error {
	m.log = append(m.log, "remove "+p)
	delete(m.files, filepath.Clean(p))
	return nil
}

func TestApply(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   map[string]string
		patch   string
		want    map[string]string
		wantErr string
	}{
		{
			name:  "add delete update",
			files: map[string]string{"delete.txt": "x\n", "modify.txt": "line1\nline2\n"},
			patch: "*** Begin Patch\n*** Add File: nested/new.txt\n+created\n*** Delete File: delete.txt\n*** Update File: modify.txt\n@@\n-line2\n+changed\n*** End Patch",
			want:  map[string]string{"nested/new.txt": "created\n", "modify.txt": "line1\nchanged\n"},
		},
		{
			name:  "move overwrites the destination",
			files: map[string]string{"old/name.txt": "old content\n", "renamed/dir/name.txt": "existing\n", "old/other.txt": "o\n"},
			patch: "*** Begin Patch\n*** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n@@\n-old content\n+new content\n*** End Patch",
			want:  map[string]string{"renamed/dir/name.txt": "new content\n", "old/other.txt": "o\n"},
		},
		{
			name:  "chunks in order, with context",
			files: map[string]string{"m.go": "func a() {\n\treturn 1\n}\nfunc b() {\n\treturn 1\n}\n"},
			patch: "*** Begin Patch\n*** Update File: m.go\n@@ func b() {\n-\treturn 1\n+\treturn 2\n*** End Patch",
			want:  map[string]string{"m.go": "func a() {\n\treturn 1\n}\nfunc b() {\n\treturn 2\n}\n"},
		},
		{
			name:  "appends a trailing newline",
			files: map[string]string{"n.txt": "no newline"},
			patch: "*** Begin Patch\n*** Update File: n.txt\n@@\n-no newline\n+first line\n+second line\n*** End Patch",
			want:  map[string]string{"n.txt": "first line\nsecond line\n"},
		},
		{
			name:  "pure addition after a context line",
			files: map[string]string{"i.txt": "a\nb\nc\n"},
			patch: "*** Begin Patch\n*** Update File: i.txt\n@@ a\n+a2\n*** End Patch",
			want:  map[string]string{"i.txt": "a\na2\nb\nc\n"},
		},
		{
			name:  "pure addition without context appends",
			files: map[string]string{"i.txt": "a\nb\n"},
			patch: "*** Begin Patch\n*** Update File: i.txt\n@@\n+c\n*** End Patch",
			want:  map[string]string{"i.txt": "a\nb\nc\n"},
		},
		{
			name:  "end of file matches the last occurrence",
			files: map[string]string{"t.txt": "x\ny\nx\n"},
			patch: "*** Begin Patch\n*** Update File: t.txt\n@@\n-x\n+z\n*** End of File\n*** End Patch",
			want:  map[string]string{"t.txt": "x\ny\nz\n"},
		},
		{
			name:  "crlf file keeps crlf, bom kept",
			files: map[string]string{"w.txt": "\ufeffone\r\ntwo\r\nthree\r\n"},
			patch: "*** Begin Patch\n*** Update File: w.txt\n@@\n one\n-two\n+2\n+2b\n*** End Patch",
			want:  map[string]string{"w.txt": "\ufeffone\r\n2\r\n2b\r\nthree\r\n"},
		},
		{
			name:  "lenient: trailing whitespace, indentation, unicode punctuation",
			files: map[string]string{"u.txt": "a   \n    b\nsay “hello” — now\n"},
			patch: "*** Begin Patch\n*** Update File: u.txt\n@@\n-a\n-b\n-say \"hello\" - now\n+A\n*** End Patch",
			want:  map[string]string{"u.txt": "A\n"},
		},
		{
			name:  "trailing empty old line stands for the final newline",
			files: map[string]string{"e.txt": "a\nb\n"},
			patch: "*** Begin Patch\n*** Update File: e.txt\n@@\n b\n-\n+c\n*** End Patch",
			want:  map[string]string{"e.txt": "a\nb\nc\n"},
		},
		{
			name:  "add then update the same file",
			files: map[string]string{},
			patch: "*** Begin Patch\n*** Add File: a.txt\n+one\n+two\n*** Update File: ./a.txt\n@@\n one\n-two\n+2\n*** End Patch",
			want:  map[string]string{"a.txt": "one\n2\n"},
		},
		{
			name:    "missing context: nothing written",
			files:   map[string]string{"m.txt": "alpha\nbeta\ngamma\n", "other.txt": "o\n"},
			patch:   "*** Begin Patch\n*** Delete File: other.txt\n*** Update File: m.txt\n@@\n alpha\n-delta\n+x\n*** End Patch",
			want:    map[string]string{"m.txt": "alpha\nbeta\ngamma\n", "other.txt": "o\n"},
			wantErr: "m.txt: chunk 1: could not find the lines to change:\nalpha\ndelta\nThe closest lines in the file (1 of 2 lines similar):\n     1\talpha\n     2\tbeta\n     3\tgamma",
		},
		{
			name:    "missing @@ context line",
			files:   map[string]string{"m.txt": "a\n"},
			patch:   "*** Begin Patch\n*** Update File: m.txt\n@@ func nope()\n-a\n+b\n*** End Patch",
			want:    map[string]string{"m.txt": "a\n"},
			wantErr: `could not find the context line "func nope()"`,
		},
		{
			name:    "update of a missing file",
			files:   map[string]string{},
			patch:   "*** Begin Patch\n*** Update File: nope.txt\n@@\n-a\n+b\n*** End Patch",
			want:    map[string]string{},
			wantErr: "cannot update nope.txt: the file does not exist",
		},
		{
			name:    "delete of a missing file",
			files:   map[string]string{"keep.txt": "k\n"},
			patch:   "*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch",
			want:    map[string]string{"keep.txt": "k\n"},
			wantErr: "cannot delete nope.txt: the file does not exist",
		},
		{
			name:    "chunks out of order",
			files:   map[string]string{"o.txt": "a\nb\nc\n"},
			patch:   "*** Begin Patch\n*** Update File: o.txt\n@@\n-c\n+C\n@@\n-a\n+A\n*** End Patch",
			want:    map[string]string{"o.txt": "a\nb\nc\n"},
			wantErr: "chunks must be in file order",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.patch)
			if err != nil {
				t.Fatal(err)
			}
			m := &memFiles{files: tc.files}
			_, err = Apply(context.Background(), p, m)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Apply: %v", err)
			case tc.wantErr != "":
				var ae *ApplyError
				if !errors.As(err, &ae) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want an ApplyError containing %q", err, tc.wantErr)
				}
				if len(m.log) != 0 {
					t.Errorf("wrote %v despite the error", m.log)
				}
			}
			if !reflect.DeepEqual(m.files, tc.want) {
				t.Errorf("files\n%q\nwant\n%q", m.files, tc.want)
			}
		})
	}
}

func TestApplyWritesBeforeRemoving(t *testing.T) {
	m := &memFiles{files: map[string]string{"a": "x\n"}}
	p, err := Parse("*** Begin Patch\n*** Update File: a\n*** Move to: b\n@@\n-x\n+y\n*** End Patch")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := Apply(context.Background(), p, m)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"write b", "remove a"}; !reflect.DeepEqual(m.log, want) {
		t.Errorf("log %v, want %v", m.log, want)
	}
	want := []Change{{Op: Add, Path: "b", New: "y\n"}, {Op: Delete, Path: "a", Old: "x\n"}}
	if !reflect.DeepEqual(ch, want) {
		t.Errorf("changes %+v, want %+v", ch, want)
	}
	// A failing write leaves the source in place.
	m = &memFiles{files: map[string]string{"a": "x\n"}, failOn: "b"}
	if _, err := Apply(context.Background(), p, m); err == nil || !strings.Contains(err.Error(), "writing b") {
		t.Fatalf("err %v", err)
	}
	if m.files["a"] != "x\n" {
		t.Errorf("source lost: %q", m.files)
	}
}

func TestSeek(t *testing.T) {
	lines := []string{"foo   ", "  bar\t", "baz", "‘q’ – r"}
	for _, tc := range []struct {
		pat   []string
		start int
		eof   bool
		want  int
	}{
		{[]string{"baz"}, 0, false, 2},
		{[]string{"foo", "  bar"}, 0, false, 0},
		{[]string{"foo", "bar"}, 0, false, 0},
		{[]string{"'q' - r"}, 0, false, 3},
		{[]string{"baz"}, 3, false, -1},
		{[]string{"baz"}, 0, true, -1},
		{[]string{}, 2, false, 2},
		{[]string{"a", "b", "c", "d", "e"}, 0, false, -1},
	} {
		if got := Seek(lines, tc.pat, tc.start, tc.eof); got != tc.want {
			t.Errorf("Seek(%q, %d, %v) = %d, want %d", tc.pat, tc.start, tc.eof, got, tc.want)
		}
	}
}
