package mcpclient

import (
	"os"
	"path/filepath"
	"testing"
)

// TestEraStoreReadsOnce: a store reads its file once, for its first
// question, and keeps what it read and what it learns; another store (a
// later Manager) reads the file again.
func TestEraStoreReadsOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), eraFile)
	old, fresh := Server{Name: "old", Command: "old-server"}, Server{Name: "new", Command: "new-server"}
	if err := os.WriteFile(path, []byte(`{"`+eraKey(old)+`":"2025-11-25"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e := &eraStore{path: path}
	if !e.legacy(old) || e.legacy(fresh) {
		t.Fatal("the file's verdicts were not read")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if !e.legacy(old) {
		t.Error("the store read its file again")
	}
	e.rememberLegacy(fresh)
	if !e.legacy(fresh) || !e.legacy(old) {
		t.Error("a verdict the store learned is not kept")
	}
	// The file now holds both verdicts: the one learned, and the one the
	// store read (the file lost it meanwhile).
	if later := (&eraStore{path: path}); !later.legacy(fresh) || !later.legacy(old) || later.legacy(Server{Name: "x", Command: "x"}) {
		t.Error("a later store does not see the file as written")
	}
}
