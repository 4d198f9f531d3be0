package oauth

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/oauth2"
)

// sequence hands out its tokens in turn, the last one for ever.
type sequence []*oauth2.Token

func (s *sequence) Token() (*oauth2.Token, error) {
	t := (*s)[0]
	if len(*s) > 1 {
		*s = (*s)[1:]
	}
	return t, nil
}

// TestSavingSourceSurfacesFailedSave: a new token whose save fails goes to
// OnSaveError and is handed out; without OnSaveError the failure is
// Token's error, once, and the (valid) token is handed out from the next
// call on. A token seen before is not saved again.
func TestSavingSourceSurfacesFailedSave(t *testing.T) {
	t.Parallel()
	full := errors.New("no space left on device")
	var saves int
	save := func(*oauth2.Token) error { saves++; return full }

	var heard []error
	o := &Config{SaveToken: save, OnSaveError: func(err error) { heard = append(heard, err) }}
	src := &savingSource{inner: &sequence{{AccessToken: "a"}, {AccessToken: "b"}}, o: o, last: "a"}
	if tok, err := src.Token(); err != nil || tok.AccessToken != "a" || saves != 0 {
		t.Fatalf("the known token: %v, %v, %d saves", tok, err, saves)
	}
	if tok, err := src.Token(); err != nil || tok.AccessToken != "b" {
		t.Fatalf("the refreshed token with OnSaveError: %v, %v", tok, err)
	}
	if len(heard) != 1 || !errors.Is(heard[0], full) || !strings.Contains(heard[0].Error(), "storing the OAuth token") {
		t.Errorf("OnSaveError heard %v", heard)
	}

	o = &Config{SaveToken: save}
	src = &savingSource{inner: &sequence{{AccessToken: "a"}, {AccessToken: "b"}}, o: o, last: "a"}
	src.Token()
	if _, err := src.Token(); !errors.Is(err, full) {
		t.Fatalf("the refreshed token without OnSaveError: err %v, want the save's", err)
	}
	if tok, err := src.Token(); err != nil || tok.AccessToken != "b" {
		t.Errorf("after the reported failure: %v, %v", tok, err)
	}
}

// TestTokenStoreUnwritable: a store under a file (refused to root too)
// fails every save with the file system's error and loses nothing it
// had.
func TestTokenStoreUnwritable(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := OpenTokenStore(filepath.Join(file, "tokens.json"))
	if err := s.Save("a", "https://a.example/mcp", &oauth2.Token{AccessToken: "at"}); err == nil {
		t.Fatal("Save under a file succeeded")
	}
	if err := s.SaveWithClient("a", "https://a.example/mcp", &oauth2.Token{AccessToken: "at"}, &TokenClient{ClientID: "c"}); err == nil {
		t.Fatal("SaveWithClient under a file succeeded")
	}
	if _, err := s.Delete("a"); err == nil {
		t.Fatal("Delete under a file succeeded")
	}
}
