package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func open(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestBeforeKeepsFirstContentDeduplicated(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	if err := s.Before(1, "/a", Content{Exists: true, Data: []byte("one")}); err != nil {
		t.Fatal(err)
	}
	// A second change in the same turn keeps the first content.
	if err := s.Before(1, "/a", Content{Exists: true, Data: []byte("two")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Before(1, "/b", Content{Exists: true, Data: []byte("one")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Before(1, "/new", Content{}); err != nil {
		t.Fatal(err)
	}
	if err := s.After(1, "/a", Content{Exists: true, Data: []byte("three")}); err != nil {
		t.Fatal(err)
	}
	files := s.Files(1)
	if len(files) != 3 || files[0].Path != "/a" || files[1].Path != "/b" || files[2].Path != "/new" {
		t.Fatalf("files: %+v", files)
	}
	if files[0].After == nil || files[0].After.Hash != Hash([]byte("three")) || files[1].After != nil {
		t.Errorf("after states: %+v %+v", files[0].After, files[1].After)
	}
	data, err := s.Blob(files[0].Before)
	if err != nil || string(data) != "one" {
		t.Fatalf("blob: %q %v", data, err)
	}
	if files[2].Before.Exists {
		t.Errorf("new file existed: %+v", files[2].Before)
	}
	blobs, _ := os.ReadDir(filepath.Join(dir, "blobs"))
	if len(blobs) != 1 {
		t.Errorf("blobs: %d, want 1 (deduplicated)", len(blobs))
	}
}

func TestReopenRestoresStateAndCutsTornRecord(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	if err := s.Before(3, "/a", Content{Exists: true, Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkUndone(3); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// A crash in the middle of an append.
	f, err := os.OpenFile(filepath.Join(dir, journalName), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"op":"before","turn":4,"pa`)
	f.Close()
	// And while writing a blob.
	tmp := filepath.Join(dir, "blobs", ".tmp-123")
	os.WriteFile(tmp, []byte("half"), 0o600)
	s2 := open(t, dir)
	if _, err := os.Stat(tmp); err == nil {
		t.Error("Open left a blob's temp file")
	}
	if !s2.Undone(3) || len(s2.Files(3)) != 1 || len(s2.Files(4)) != 0 {
		t.Fatalf("reopened: undone %v files %+v %+v", s2.Undone(3), s2.Files(3), s2.Files(4))
	}
	if err := s2.Before(4, "/b", Content{}); err != nil {
		t.Fatal(err)
	}
	s2.Close()
	data, _ := os.ReadFile(filepath.Join(dir, journalName))
	if bytes.Contains(data, []byte(`"pa{`)) || !bytes.HasSuffix(data, []byte("\n")) {
		t.Fatalf("journal not cut back:\n%s", data)
	}
	s3 := open(t, dir)
	if got := s3.Turns(); len(got) != 2 || got[0] != 3 || got[1] != 4 {
		t.Errorf("turns: %v", got)
	}
}

func TestLimits(t *testing.T) {
	s := open(t, t.TempDir())
	big := bytes.Repeat([]byte("x"), MaxFile+1)
	err := s.Before(1, "/big", Content{Exists: true, Data: big})
	var nk *NotKeptError
	if !errors.As(err, &nk) || !strings.Contains(nk.Error(), "larger than the 8 MiB") {
		t.Fatalf("big file: %v", err)
	}
	f := s.Files(1)
	if len(f) != 1 || f[0].Before.Kept() {
		t.Fatalf("big file recorded as kept: %+v", f)
	}
	if _, err := s.Blob(f[0].Before); err == nil {
		t.Error("a lost content has a blob")
	}
	// An unread file (the caller could not load it) is lost too.
	if err := s.Before(1, "/huge", Content{Exists: true, Unread: true, Size: 100 << 20}); !errors.As(err, &nk) {
		t.Fatalf("unread file: %v", err)
	}
	// The session bound.
	s.used = MaxSession - 10
	if err := s.Before(2, "/c", Content{Exists: true, Data: []byte("0123456789abc")}); !errors.As(err, &nk) || !strings.Contains(nk.Reason, "256 MiB") {
		t.Fatalf("over the session's bound: %v", err)
	}
	// Content already kept costs nothing.
	if err := s.Before(2, "/d", Content{Exists: true, Data: []byte("0123")}); err != nil {
		t.Fatal(err)
	}
	if err := s.Before(3, "/d", Content{Exists: true, Data: []byte("0123")}); err != nil {
		t.Fatal(err)
	}
}

func TestCopyTo(t *testing.T) {
	base := t.TempDir()
	s := open(t, filepath.Join(base, "a"))
	s.Before(5, "/f", Content{Exists: true, Data: []byte("v1")})
	s.After(5, "/f", Content{Exists: true, Data: []byte("v2")})
	s.Before(9, "/g", Content{Exists: true, Data: []byte("g1")})
	ro, err := Load(filepath.Join(base, "a"))
	if err != nil {
		t.Fatal(err)
	}
	if err := ro.MarkUndone(5); err == nil {
		t.Error("a loaded store took a record")
	}
	d, err := ro.CopyTo(filepath.Join(base, "b"), map[int64]int64{5: 2})
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	d = open(t, filepath.Join(base, "b"))
	f := d.Files(2)
	if len(f) != 1 || f[0].After == nil || len(d.Turns()) != 1 {
		t.Fatalf("copy: %+v %v", f, d.Turns())
	}
	if data, err := d.Blob(f[0].Before); err != nil || string(data) != "v1" {
		t.Fatalf("copied blob: %q %v", data, err)
	}
}
