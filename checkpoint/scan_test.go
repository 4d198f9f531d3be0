package checkpoint

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestScanDiffRecord(t *testing.T) {
	root := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a", "a1")
	write("sub/b", "b1")
	write("gone", "g")
	write(".git/HEAD", "ref")
	write("skip/x", "x")
	s := open(t, t.TempDir())
	ctx := context.Background()
	o := ScanOptions{Roots: []string{root}, SkipNames: []string{".git"}, Skip: []string{filepath.Join(root, "skip")}}
	before, err := s.Scan(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if before.Len() != 3 || before.Capped {
		t.Fatalf("scanned %d files (capped %v), want 3", before.Len(), before.Capped)
	}
	write("a", "a2")
	os.Remove(filepath.Join(root, "gone"))
	write("sub/new", "n")
	write(".git/HEAD", "other")
	o.Prev = before
	after, err := s.Scan(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	ch := Diff(before, after)
	got := ""
	for _, c := range ch {
		got += fmt.Sprintf("%s %v>%v|", filepath.Base(c.Path), c.Before.Exists, c.After.Exists)
	}
	if got != "a true>true|gone true>false|new false>true|" {
		t.Fatalf("diff: %s", got)
	}
	if err := s.Record(4, ch); err != nil {
		t.Fatal(err)
	}
	files := s.Files(4)
	if len(files) != 3 {
		t.Fatalf("recorded: %+v", files)
	}
	if data, err := s.Blob(files[0].Before); err != nil || string(data) != "a1" {
		t.Errorf("a's previous content: %q %v", data, err)
	}
}

func TestScanCap(t *testing.T) {
	root := t.TempDir()
	for i := range 5 {
		os.WriteFile(filepath.Join(root, fmt.Sprint(i)), []byte{byte(i)}, 0o644)
	}
	s := open(t, t.TempDir())
	o := ScanOptions{Roots: []string{root}, Limit: 3}
	before, err := s.Scan(context.Background(), o)
	if err != nil || !before.Capped || before.Len() != 3 {
		t.Fatalf("capped scan: %v %v %d", err, before.Capped, before.Len())
	}
	os.WriteFile(filepath.Join(root, "00"), []byte("new"), 0o644)
	after, _ := s.Scan(context.Background(), o)
	for _, c := range Diff(before, after) {
		if !c.Before.Exists {
			t.Errorf("a capped scan reports a created file: %+v", c)
		}
	}
}

// TestCloseRemovesUnreferencedBlobs: what a snapshot kept of files no turn
// changed is removed at Close; what a turn needs stays.
func TestCloseRemovesUnreferencedBlobs(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(root, "a"), []byte("a1"), 0o644)
	os.WriteFile(filepath.Join(root, "b"), []byte("b1"), 0o644)
	s := open(t, dir)
	o := ScanOptions{Roots: []string{root}}
	before, err := s.Scan(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "a"), []byte("a2"), 0o644)
	o.Prev = before
	after, _ := s.Scan(context.Background(), o)
	if err := s.Record(1, Diff(before, after)); err != nil {
		t.Fatal(err)
	}
	if n, _ := os.ReadDir(filepath.Join(dir, "blobs")); len(n) != 3 {
		t.Fatalf("blobs before Close: %d, want 3", len(n))
	}
	s.Close()
	s = open(t, dir)
	if n, _ := os.ReadDir(filepath.Join(dir, "blobs")); len(n) != 1 {
		t.Fatalf("blobs after Close: %d, want 1", len(n))
	}
	if data, err := s.Blob(s.Files(1)[0].Before); err != nil || string(data) != "a1" {
		t.Errorf("the turn's blob: %q %v", data, err)
	}
	// Over the snapshots' budget, a file is in the snapshot but not kept.
	s.used = MaxScanBytes
	snap, _ := s.Scan(context.Background(), ScanOptions{Roots: []string{root}})
	if st := snap.files[filepath.Join(root, "b")].st; st.Kept() || st.Lost == "" {
		t.Errorf("a file over the snapshots' budget: %+v", st)
	}
}
