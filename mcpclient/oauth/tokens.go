package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"acpd/internal/atomicfile"
	"acpd/internal/filelock"
)

// ErrLoginRequired is returned (wrapped) when a server asks for OAuth
// authorization that only a person can give (`acpd mcp login NAME`).
var ErrLoginRequired = errors.New("the MCP server needs authorization")

// TokenStore keeps MCP servers' OAuth tokens in one file, like API keys:
// mode 0600, replaced atomically under a cross-process lock, never logged.
// Tokens are keyed by server name and URL, so a server whose URL changed
// needs a new login.
type TokenStore struct {
	path string
	mu   sync.Mutex
}

// OpenTokenStore returns the store in path (created on the first Save).
func OpenTokenStore(path string) *TokenStore { return &TokenStore{path: path} }

func tokenKey(server, rawURL string) string { return server + " " + rawURL }

// TokenClient is the OAuth client a token was issued to and the token
// endpoint that issued it: what refreshing the token needs.
type TokenClient struct {
	ClientID     string           `json:"client_id"`
	ClientSecret string           `json:"client_secret,omitempty"`
	TokenURL     string           `json:"token_url"`
	AuthStyle    oauth2.AuthStyle `json:"auth_style,omitempty"`
}

// storedToken is one entry of the store's file: the token, with the
// client that can refresh it (absent in files written before).
type storedToken struct {
	*oauth2.Token
	Client *TokenClient `json:"acpd_client,omitempty"`
}

// read loads the store's file outside [TokenStore.update]: on Windows it
// holds the store's lock shared while the file is open
// (atomicfile.ReaderLock), so that no writer's replacement finds it open
// and fails.
func (s *TokenStore) read() (map[string]*storedToken, error) {
	unlock, err := atomicfile.ReaderLock(s.path+".lock", 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer unlock()
	return s.load()
}

// load reads the store's file; a missing file is an empty store.
func (s *TokenStore) load() (map[string]*storedToken, error) {
	out := map[string]*storedToken{}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	return out, nil
}

// Get returns the stored token of the server, or nil.
func (s *TokenStore) Get(server, rawURL string) *oauth2.Token {
	t, _ := s.get(server, rawURL)
	return t
}

// get returns the stored token of the server and the client that can
// refresh it (either may be nil).
func (s *TokenStore) get(server, rawURL string) (*oauth2.Token, *TokenClient) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.read()
	if err != nil || m[tokenKey(server, rawURL)] == nil {
		return nil, nil
	}
	e := m[tokenKey(server, rawURL)]
	return e.Token, e.Client
}

// Save stores the server's token, keeping the client stored with the
// previous one.
func (s *TokenStore) Save(server, rawURL string, t *oauth2.Token) error {
	return s.update(func(m map[string]*storedToken) {
		k := tokenKey(server, rawURL)
		if m[k] == nil {
			m[k] = &storedToken{}
		}
		m[k].Token = t
	})
}

// SaveWithClient stores the server's token and the client it was issued
// to, which later refreshes it.
func (s *TokenStore) SaveWithClient(server, rawURL string, t *oauth2.Token, c *TokenClient) error {
	return s.update(func(m map[string]*storedToken) { m[tokenKey(server, rawURL)] = &storedToken{Token: t, Client: c} })
}

// Delete removes every token of the server (all URLs) and reports whether
// there was one.
func (s *TokenStore) Delete(server string) (bool, error) {
	found := false
	err := s.update(func(m map[string]*storedToken) {
		for k := range m {
			if strings.HasPrefix(k, server+" ") {
				delete(m, k)
				found = true
			}
		}
	})
	return found, err
}

// Servers lists the names of the servers with a stored token.
func (s *TokenStore) Servers() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, _ := s.read()
	seen := map[string]bool{}
	var out []string
	for k := range m {
		name, _, _ := strings.Cut(k, " ")
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func (s *TokenStore) update(change func(map[string]*storedToken)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return err
	}
	unlock, err := filelock.Lock(s.path+".lock", 5*time.Second)
	if err != nil {
		return err
	}
	defer unlock()
	m, err := s.load()
	if err != nil {
		return err
	}
	change(m)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(s.path, append(b, '\n'), 0o600)
}

// Stored returns the setup a session uses for the HTTP server named
// server at rawURL: the stored token (refreshed and saved back), and no
// person to ask: a server that needs a new authorization fails with
// ErrLoginRequired naming `acpd mcp login`.
func Stored(store *TokenStore, server, rawURL string) *Config {
	tok, client := store.get(server, rawURL)
	return &Config{
		RedirectURL: "http://127.0.0.1/callback",
		Token:       tok,
		TokenClient: client,
		SaveToken:   func(t *oauth2.Token) error { return store.Save(server, rawURL, t) },
		SaveTokenClient: func(t *oauth2.Token, c *TokenClient) error {
			return store.SaveWithClient(server, rawURL, t, c)
		},
		Authorize: func(context.Context, string) (url.Values, error) {
			return nil, fmt.Errorf("%w: run `acpd mcp login %s`", ErrLoginRequired, server)
		},
	}
}

// Session is [Stored] for a session whose user can authorize the server:
// when it needs a new authorization, show is called with the server's
// name and the authorization URL while l receives the redirect. show runs
// until it returns or its context ends: an error abandons the
// authorization, and once the redirect arrived its context ends with the
// cause [ErrAuthorizationReceived]. The wait lasts at most
// [AuthorizationTimeout].
func Session(store *TokenStore, server, rawURL string, l *Loopback, show func(ctx context.Context, server, authURL string) error) *Config {
	o := Stored(store, server, rawURL)
	o.RedirectURL = l.RedirectURL
	o.Authorize = func(ctx context.Context, authURL string) (url.Values, error) {
		return l.wait(ctx, authURL, func(ctx context.Context, u string) error { return show(ctx, server, u) })
	}
	return o
}
