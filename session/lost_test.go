package session

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
)

// A failed Append is remembered until Sync reports it, once: a caller that
// syncs at turn boundaries learns of every record it lost, whatever the
// cause.
func TestSyncReportsFailedAppends(t *testing.T) {
	s := newStore(t)
	l, err := s.Create(Meta{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, l)
	want := []Record{mustAppend(t, l, "update", 1)}
	if err := l.Sync(); err != nil {
		t.Fatalf("Sync after good appends: %v", err)
	}
	for _, tc := range []struct {
		name string
		data any
		say  string
	}{
		{"marshal error", json.RawMessage(`{"a":`), "update record"},
		{"oversize record", strings.Repeat("x", maxLineBytes), "exceeds the"},
		{"streamed marshal error", badWriter{}, "bad input"},
	} {
		_, aerr := l.Append("update", tc.data)
		if aerr == nil {
			t.Fatalf("%s: Append succeeded", tc.name)
		}
		want = append(want, mustAppend(t, l, "update", 2)) // later appends still work
		err := l.Sync()
		if err == nil || !errors.Is(err, aerr) || !strings.Contains(err.Error(), tc.say) || !strings.Contains(err.Error(), "not written") {
			t.Fatalf("%s: Sync = %v, want the append's error (%v)", tc.name, err, aerr)
		}
		if err := l.Sync(); err != nil {
			t.Fatalf("%s: a second Sync = %v, want nil (reported once)", tc.name, err)
		}
	}
	// Only the first failure since the last Sync is kept.
	_, first := l.Append("bad kind", 1)
	_, _ = l.Append("update", func() {})
	if err := l.Sync(); !errors.Is(err, first) {
		t.Fatalf("Sync = %v, want the first failure %v", err, first)
	}
	mustClose(t, l)
	l2, recs, err := s.Open(l.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, l2)
	checkRecords(t, recs, want)
}

// badWriter is a streamed payload that fails half way.
type badWriter struct{}

func (badWriter) WriteJSON(w io.Writer) error {
	w.Write([]byte(`{"a":`))
	return errors.New("bad input")
}
