package oauth

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"golang.org/x/oauth2"
)

func TestTokenStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acpd", "mcp-tokens.json")
	s := OpenTokenStore(path)
	if s.Get("a", "https://a.example/mcp") != nil {
		t.Fatal("token in an empty store")
	}
	if err := s.Save("a", "https://a.example/mcp", &oauth2.Token{AccessToken: "at", RefreshToken: "rt"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Save("b", "https://b.example/mcp", &oauth2.Token{AccessToken: "bt"}); err != nil {
		t.Fatal(err)
	}
	if tok := OpenTokenStore(path).Get("a", "https://a.example/mcp"); tok == nil || tok.AccessToken != "at" || tok.RefreshToken != "rt" {
		t.Errorf("Get = %+v", tok)
	}
	if OpenTokenStore(path).Get("a", "https://moved.example/mcp") != nil {
		t.Error("a token was offered to another URL")
	}
	if runtime.GOOS != "windows" {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("mode = %v, %v; want 0600", fi.Mode(), err)
		}
	}
	if got := s.Servers(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Servers = %v", got)
	}
	if found, err := s.Delete("a"); !found || err != nil {
		t.Errorf("Delete = %v, %v", found, err)
	}
	if found, _ := s.Delete("a"); found {
		t.Error("deleted twice")
	}
	if got := s.Servers(); !slices.Equal(got, []string{"b"}) {
		t.Errorf("Servers after Delete = %v", got)
	}
}
