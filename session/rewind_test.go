package session

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func liveText(recs []Record) string {
	var out []string
	for _, r := range Live(recs) {
		var d struct{ I int }
		json.Unmarshal(r.Data, &d)
		out = append(out, fmt.Sprint(d.I))
	}
	return strings.Join(out, ",")
}

// TestRewindSurvivesReopen: a rewind drops the records since its point,
// later records stay, and a later rewind to before an earlier one drops
// that one too; all of it holds after the log is reopened.
func TestRewindSurvivesReopen(t *testing.T) {
	s := newStore(t)
	l, err := s.Create(Meta{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	for i := 1; i <= 5; i++ {
		seqs = append(seqs, mustAppend(t, l, "update", map[string]int{"i": i}).Seq)
	}
	if _, err := l.Rewind(seqs[1]); err != nil { // keep 1, 2
		t.Fatal(err)
	}
	mustAppend(t, l, "update", map[string]int{"i": 6})
	mustAppend(t, l, "update", map[string]int{"i": 7})
	mustClose(t, l)
	l, recs, err := s.Open(l.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got := liveText(recs); got != "1,2,6,7" {
		t.Fatalf("live after one rewind: %s", got)
	}
	if _, err := l.Rewind(seqs[0]); err != nil { // keep 1
		t.Fatal(err)
	}
	mustAppend(t, l, "update", map[string]int{"i": 8})
	mustClose(t, l)
	recs, err = s.Records(l.ID())
	if err != nil {
		t.Fatal(err)
	}
	if got := liveText(recs); got != "1,8" {
		t.Fatalf("live after a second rewind: %s", got)
	}
	if got := liveText(recs[:5]); got != "1,2,3,4,5" {
		t.Errorf("records without a rewind: %s", got)
	}
}
