package session

import (
	"os"
	"slices"
	"testing"
)

func listIDs(t *testing.T, s *Store) []string {
	t.Helper()
	ms, err := s.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	return ids
}

// A Store's cached index follows what other Stores (other processes) do:
// journal appends, compactions, deletions and a line torn by a crash.
func TestListCacheSeesOtherStores(t *testing.T) {
	a := newStore(t)
	b, err := Open(t.Context(), a.Dir())
	if err != nil {
		t.Fatal(err)
	}
	create := func(id string) {
		t.Helper()
		l, err := b.Create(Meta{ID: id, Cwd: "/w"})
		if err != nil {
			t.Fatal(err)
		}
		mustClose(t, l)
	}
	want := func(ids ...string) {
		t.Helper()
		if got := listIDs(t, a); !slices.Equal(got, ids) {
			t.Fatalf("listed %q, want %q", got, ids)
		}
	}
	want()
	create("s1")
	want("s1")
	create("s2")
	want("s1", "s2")
	if err := b.Delete("s1"); err != nil {
		t.Fatal(err)
	}
	want("s2")
	// A torn journal line, then another process's next operation.
	f, err := os.OpenFile(a.journalPath(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"op":"put","m":{"id":"torn"`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want("s2")
	create("s3")
	want("s2", "s3")
	// Enough operations for b to compact the journal into a new snapshot.
	for range 3000 {
		if err := b.appendJournal(false, journalOp{Op: "sync", M: &Meta{ID: "s2", Records: 7}}); err != nil {
			t.Fatal(err)
		}
	}
	if fi, err := os.Stat(a.journalPath()); err != nil || fi.Size() > 4*compactMin {
		t.Fatalf("journal not compacted: %v, %v", fi.Size(), err)
	}
	create("s4")
	want("s2", "s3", "s4")
	if m, err := a.Get("s2"); err != nil || m.Records != 7 {
		t.Fatalf("Get after compaction: %+v, %v", m, err)
	}
}
