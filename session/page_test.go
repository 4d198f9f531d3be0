package session

import (
	"errors"
	"testing"
)

// Pages cover the list once, in order; foreign cursors are refused.
func TestPage(t *testing.T) {
	metas := make([]Meta, 7)
	for i := range metas {
		metas[i].ID = string(rune('a' + i))
	}
	var got string
	cursor := ""
	for range 5 {
		page, next, err := Page(metas, cursor, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range page {
			got += m.ID
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if got != "abcdefg" {
		t.Errorf("pages hold %q", got)
	}
	for _, bad := range []string{"x", "bzo5OQ", "bzotMQ"} { // not base64 of "o:N"; "o:99" past the end; "o:-1"
		if _, _, err := Page(metas, bad, 3); !errors.Is(err, ErrBadCursor) {
			t.Errorf("cursor %q: %v", bad, err)
		}
	}
}
