package permissions

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"acpd/internal/filelock"
)

var storeWriters = flag.Int("permissions.writers", 20, "entries each of the two concurrent stores writes in TestStoresShareFile")

func TestStorePersistsAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "permissions.json")
	s, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if list, err := s.List(); err != nil || len(list) != 0 {
		t.Fatalf("new store: %v %v", list, err)
	}
	rules := []Rule{
		{Action: Allow, Tool: "run_command", Match: "go test ./..."},
		{Action: Deny, Tool: "write_file", Match: "go.sum"},
	}
	if err := s.add("/p1", rules); err != nil {
		t.Fatal(err)
	}
	if err := s.add("/p2", rules[:1]); err != nil {
		t.Fatal(err)
	}
	before, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	reopened, err := OpenStore(path)
	if err != nil {
		t.Fatal(err)
	}
	after, err := reopened.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 3 || fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("before %v\nafter %v", before, after)
	}
	for _, e := range after {
		if e.ID == "" || e.CreatedAt.IsZero() || e.Project == "" {
			t.Errorf("incomplete entry %+v", e)
		}
	}
	// Same rule in two projects: two ids. Same project and rule: one id.
	if after[0].ID == after[2].ID {
		t.Errorf("ids collide across projects: %v", after)
	}
	if err := reopened.add("/p1", []Rule{{Action: Allow, Tool: "write_file", Match: "go.sum"}}); err != nil {
		t.Fatal(err)
	}
	list, _ := reopened.List()
	if len(list) != 3 {
		t.Fatalf("re-adding replaced nothing: %v", list)
	}
	for _, e := range list {
		if e.Rule.Match == "go.sum" && e.Rule.Action != Allow {
			t.Errorf("answer not replaced: %+v", e)
		}
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
		}
		di, err := os.Stat(filepath.Dir(path))
		if err != nil {
			t.Fatal(err)
		}
		if di.Mode().Perm() != 0o700 {
			t.Errorf("dir mode %v, want 0700", di.Mode().Perm())
		}
	}
}

func TestStoreRemove(t *testing.T) {
	s := openTestStore(t, t.TempDir())
	if err := s.add("/p", []Rule{
		{Action: Allow, Tool: "run_command", Match: "a"},
		{Action: Allow, Tool: "run_command", Match: "b"},
	}); err != nil {
		t.Fatal(err)
	}
	list, _ := s.List()
	if len(list) != 2 {
		t.Fatalf("%v", list)
	}
	if err := s.Remove(list[0].ID); err != nil {
		t.Fatal(err)
	}
	after, _ := s.List()
	if len(after) != 1 || after[0].ID != list[1].ID {
		t.Fatalf("after remove: %v", after)
	}
	if err := s.Remove(list[0].ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("removing twice: %v", err)
	}
	if err := s.Remove(""); !errors.Is(err, ErrNotFound) {
		t.Errorf("removing empty id: %v", err)
	}
	// The id is stable: a reopened store finds the same entry by it.
	s2 := openTestStore(t, filepath.Dir(s.path))
	if err := s2.Remove(list[1].ID); err != nil {
		t.Fatal(err)
	}
	if after, _ := s.List(); len(after) != 0 {
		t.Fatalf("after second remove: %v", after)
	}
}

// TestStoresShareFile simulates two processes: two Stores on one file (each
// with its own lock descriptor) writing concurrently must not lose entries.
func TestStoresShareFile(t *testing.T) {
	dir := t.TempDir()
	a := openTestStore(t, dir)
	b := openTestStore(t, dir)
	n := *storeWriters
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i, s := range []*Store{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range n {
				r := Rule{Action: Allow, Tool: "run_command", Match: fmt.Sprintf("cmd-%d-%d", i, j)}
				if err := s.add("/p", []Rule{r}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, s := range []*Store{a, b} {
		list, err := s.List()
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2*n {
			t.Fatalf("%d entries, want %d", len(list), 2*n)
		}
	}
	// A policy on another Store sees what the first one remembered at once.
	p, err := NewPolicy(PolicyOptions{Tools: testTools, Store: b, Project: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Decide(ModeAsk, runCmd("cmd-0-0")); d.Action != Allow {
		t.Errorf("remembered by the other store: %s", d.Action)
	}
	leftovers, _ := filepath.Glob(filepath.Join(dir, ".permissions.json.*.tmp"))
	if len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestStoreLockTimeout(t *testing.T) {
	s := openTestStore(t, t.TempDir())
	unlock, err := filelock.Lock(s.path+".lock", lockTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if _, err := filelock.Lock(s.path+".lock", 0); err == nil {
		t.Fatal("second lock acquired while the first is held")
	}
}

func TestOpenStoreErrors(t *testing.T) {
	if _, err := OpenStore(""); err == nil {
		t.Error("empty path accepted")
	}
	dir := t.TempDir()
	for name, content := range map[string]string{
		"garbage.json":   "not json",
		"version.json":   `{"version": 2, "entries": []}`,
		"noversion.json": `{"entries": []}`,
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenStore(path); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(empty); err != nil {
		t.Errorf("empty file rejected: %v", err)
	}
}

func TestDecodeStoreRecomputesIDs(t *testing.T) {
	data := []byte(`{"version":1,"entries":[{"project":"/p","rule":{"action":"allow","tool":"t"},"id":"forged"}]}`)
	entries, err := decodeStore(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].ID != entryID("/p", Rule{Tool: "t"}) {
		t.Errorf("%+v", entries)
	}
}

// FuzzDecodeStore checks that arbitrary store files never panic the decoder
// and that what it accepts survives a write and a re-read.
func FuzzDecodeStore(f *testing.F) {
	f.Add([]byte(`{"version":1,"entries":[{"project":"/p","rule":{"action":"allow","tool":"run_command","match":"go test ./..."},"created_at":"2025-01-02T03:04:05Z","id":"x"}]}`))
	f.Add([]byte(`{"version":1,"entries":null}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := decodeStore(data)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.ID != entryID(e.Project, e.Rule) {
				t.Fatalf("id %q not recomputed", e.ID)
			}
		}
	})
}
