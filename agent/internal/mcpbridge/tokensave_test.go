package mcpbridge

import (
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"acpd/acp"
	"acpd/mcpclient"
)

// shown records the cards and notices a bridge shows.
type shown struct {
	Session // nothing else is called
	mu      sync.Mutex
	cards   []string
	notices []string
}

func (s *shown) Card(title, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cards = append(s.cards, title+"\n"+why)
}

func (s *shown) Notice(sev acp.NoticeSeverity, title string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notices = append(s.notices, string(sev)+" "+title)
}

// TestTokenNotSavedShown: a server's OAuth token the store could not keep
// is remembered until the next prompt's Await shows it, once: a card and
// an error notice naming the server, the store's error and the way out.
func TestTokenNotSavedShown(t *testing.T) {
	s := &shown{}
	m := mcpclient.NewManager(mcpclient.Options{})
	defer m.Close()
	b := &Bridge{s: s, m: m, log: slog.New(slog.DiscardHandler), reported: map[string]bool{}}
	b.tokenNotSaved("guarded", errors.New("storing the OAuth token: no space left on device"))
	b.Await(t.Context())
	b.Await(t.Context())
	if len(s.cards) != 1 || len(s.notices) != 1 {
		t.Fatalf("cards %q, notices %q; want one each", s.cards, s.notices)
	}
	for _, want := range []string{"MCP server guarded: OAuth token not stored", "no space left on device", "acpd mcp login guarded"} {
		if !strings.Contains(s.cards[0], want) {
			t.Errorf("card %q lacks %q", s.cards[0], want)
		}
	}
	if !strings.HasPrefix(s.notices[0], string(acp.NoticeSeverityError)) || !strings.Contains(s.notices[0], "no space left on device") {
		t.Errorf("notice %q", s.notices[0])
	}
}
