package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestTightenNeverLoosens(t *testing.T) {
	on, off := true, false
	base := Policy{Mode: WorkspaceWrite, Network: true, Writable: []string{"/a", "/b"}}
	if got := base.Tighten(ReadOnly, &off, []string{"/b", "/c"}); got.Mode != ReadOnly || got.Network || !slices.Equal(got.Writable, []string{"/b"}) {
		t.Fatalf("tightened: %+v", got)
	}
	strict := Policy{Mode: ReadOnly}
	if got := strict.Tighten(Off, &on, []string{"/x"}); got.Mode != ReadOnly || got.Network || len(got.Writable) != 0 {
		t.Fatalf("loosened: %+v", got)
	}
	if got := (Policy{Mode: WorkspaceWrite}).Tighten(Off, nil, nil); got.Mode != WorkspaceWrite {
		t.Fatalf("a project turned the sandbox off: %+v", got)
	}
	if got := (Policy{Mode: Off}).Tighten(WorkspaceWrite, nil, nil); got.Mode != WorkspaceWrite {
		t.Fatalf("a project could not turn the sandbox on: %+v", got)
	}
}

func TestResolve(t *testing.T) {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "root")
	hidden := filepath.Join(base, "hidden")
	for _, d := range []string{filepath.Join(root, ".git", "hooks"), hidden} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(hidden, "f"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	p := Policy{Mode: WorkspaceWrite, Roots: []string{link}, Writable: []string{filepath.Join(base, "missing"), filepath.Join(hidden, "sub")}, Hidden: []string{filepath.Join(hidden, "f"), hidden}}
	pl, err := p.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pl.writable, []string{root}) {
		t.Errorf("writable %q", pl.writable)
	}
	want := []string{filepath.Join(root, ".git", "hooks"), filepath.Join(root, ".git", "config"), filepath.Join(root, ".acpd")}
	if !slices.Equal(pl.readOnly, want) {
		t.Errorf("read-only %q, want %q", pl.readOnly, want)
	}
	if !slices.Equal(pl.hidden, []string{hidden}) {
		t.Errorf("hidden %q", pl.hidden)
	}
	if _, err := (Policy{Mode: WorkspaceWrite, Roots: []string{"rel"}}).resolve(); err == nil {
		t.Error("relative root accepted")
	}
	if _, err := (Policy{Mode: "bogus"}).resolve(); err == nil {
		t.Error("unknown mode accepted")
	}
}
