package tools

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSavedOutputsPrivate: a session's saved outputs go to a 0700
// directory of its own under the outputs directory, which Close removes;
// directories older than outputsMaxAge left by earlier sessions are swept,
// newer ones (other live sessions') kept.
func TestSavedOutputsPrivate(t *testing.T) {
	outputs := filepath.Join(t.TempDir(), "outputs")
	if err := os.MkdirAll(outputs, 0o700); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(outputs, "acpd-session-stale")
	live := filepath.Join(outputs, "acpd-session-live")
	for _, d := range []string{stale, live} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-outputsMaxAge - time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	j := NewJobs(nil, outputs)
	f, err := j.outputFile()
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	dir := filepath.Dir(f.Name())
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 || filepath.Dir(dir) != outputs {
		t.Fatalf("output in %s: %v %v", dir, fi, err)
	}
	if _, err := os.Stat(stale); err == nil {
		t.Error("a stale session directory was not swept")
	}
	if _, err := os.Stat(live); err != nil {
		t.Error("a recent session directory was swept")
	}
	j.Close(context.Background())
	if _, err := os.Stat(dir); err == nil {
		t.Error("Close left the session's output directory")
	}
	if _, err := j.outputFile(); err == nil {
		t.Error("an output saved after Close")
	}
}
