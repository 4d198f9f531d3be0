package main

import (
	"path/filepath"
	"strings"
	"testing"

	"acpd/model"
	"acpd/session"
)

// TestSessionsShowHonoursRewinds: `acpd sessions show` prints the
// conversation a rewind left, not the turns it dropped.
func TestSessionsShowHonoursRewinds(t *testing.T) {
	t.Parallel()
	iso := newIsolation(t)
	store, err := session.Open(t.Context(), filepath.Join(iso.State, "acpd"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := store.Create(session.Meta{Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	msg := func(text string) session.Record {
		r, err := l.Append("message", model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: text}}})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	kept := msg("kept turn")
	msg("dropped turn")
	if _, err := l.Rewind(kept.Seq); err != nil {
		t.Fatal(err)
	}
	msg("after the rewind")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCLI(t, iso.Env(), "sessions", "show", l.ID())
	if code != 0 {
		t.Fatalf("sessions show: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(out, "kept turn") || !strings.Contains(out, "after the rewind") || strings.Contains(out, "dropped turn") {
		t.Errorf("sessions show:\n%s", out)
	}
}
