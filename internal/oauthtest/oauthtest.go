// Package oauthtest is a small OAuth 2.1 authorization server guarding an
// MCP endpoint, for tests of acpd's MCP client: protected-resource metadata
// (RFC 9728, also named in WWW-Authenticate), authorization server
// metadata (RFC 8414), dynamic client registration (RFC 7591), the
// authorization-code grant with PKCE (S256 only), refresh tokens, and
// bearer tokens that tests can revoke. The authorization endpoint grants at once: it
// redirects to the client's registered redirect URI with a code, so a
// test plays the user by fetching the authorization URL.
package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Server is a running authorization server and protected MCP endpoint.
type Server struct {
	// URL is the MCP endpoint's URL (path /mcp).
	URL string

	hs *httptest.Server

	mu        sync.Mutex
	clients   map[string][]string  // client id -> redirect URIs
	codes     map[string]grant     // unused codes
	tokens    map[string]time.Time // valid access tokens -> expiry
	refreshes map[string]string    // valid refresh tokens -> client id
	lifetime  time.Duration
	granted   int
	refreshed int
}

type grant struct{ client, redirect, challenge string }

// New starts a server whose /mcp serves mcp once a request carries a valid
// bearer token; it stops when the test ends.
func New(t testing.TB, mcp http.Handler) *Server {
	s := &Server{clients: map[string][]string{}, codes: map[string]grant{}, tokens: map[string]time.Time{}, refreshes: map[string]string{}, lifetime: time.Hour}
	mux := http.NewServeMux()
	s.hs = httptest.NewServer(mux)
	t.Cleanup(s.hs.Close)
	base := s.hs.URL
	s.URL = base + "/mcp"
	prm := base + "/.well-known/oauth-protected-resource/mcp"
	mux.Handle("/mcp", auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{ResourceMetadataURL: prm})(mcp))
	mux.Handle("/.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource: s.URL, AuthorizationServers: []string{base},
	}))
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer": base, "authorization_endpoint": base + "/authorize", "token_endpoint": base + "/token",
			"registration_endpoint": base + "/register", "response_types_supported": []string{"code"},
			"grant_types_supported": []string{"authorization_code", "refresh_token"}, "code_challenge_methods_supported": []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /token", s.token)
	return s
}

// Revoke invalidates every access and refresh token issued so far.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.tokens)
	clear(s.refreshes)
}

// SetTokenLifetime makes the access tokens issued from now on expire after
// d (an hour by default).
func (s *Server) SetTokenLifetime(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lifetime = d
}

// Refreshed is how many tokens the server issued for a refresh token.
func (s *Server) Refreshed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshed
}

// Granted is how many authorizations the server granted.
func (s *Server) Granted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.granted
}

func (s *Server) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.tokens[token]
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Expiration: exp}, nil
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var meta struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(r.Body).Decode(&meta); err != nil || len(meta.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	id := rand.Text()
	s.mu.Lock()
	s.clients[id] = meta.RedirectURIs
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"client_id": id, "redirect_uris": meta.RedirectURIs, "token_endpoint_auth_method": "none"})
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	uris := s.clients[q.Get("client_id")]
	s.mu.Unlock()
	redirect := q.Get("redirect_uri")
	if !slices.Contains(uris, redirect) || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" ||
		q.Get("code_challenge") == "" || q.Get("resource") != s.URL {
		http.Error(w, "invalid authorization request", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	s.mu.Lock()
	s.codes[code] = grant{client: q.Get("client_id"), redirect: redirect, challenge: q.Get("code_challenge")}
	s.granted++
	s.mu.Unlock()
	u, _ := url.Parse(redirect)
	back := u.Query()
	back.Set("code", code)
	back.Set("state", q.Get("state"))
	u.RawQuery = back.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	f := r.PostForm
	client := f.Get("client_id")
	if id, _, ok := r.BasicAuth(); ok {
		client = id
	}
	if f.Get("grant_type") == "refresh_token" {
		s.mu.Lock()
		owner, ok := s.refreshes[f.Get("refresh_token")]
		delete(s.refreshes, f.Get("refresh_token"))
		if ok && owner == client {
			s.refreshed++
		}
		s.mu.Unlock()
		if !ok || owner != client {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
			return
		}
		s.issue(w, client)
		return
	}
	s.mu.Lock()
	g, ok := s.codes[f.Get("code")]
	delete(s.codes, f.Get("code"))
	s.mu.Unlock()
	sum := sha256.Sum256([]byte(f.Get("code_verifier")))
	if !ok || f.Get("grant_type") != "authorization_code" || client != g.client || f.Get("redirect_uri") != g.redirect ||
		base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	}
	s.issue(w, g.client)
}

// issue answers with a new access token and refresh token for client.
func (s *Server) issue(w http.ResponseWriter, client string) {
	tok, refresh := rand.Text(), rand.Text()
	s.mu.Lock()
	life := s.lifetime
	s.tokens[tok] = time.Now().Add(life)
	s.refreshes[refresh] = client
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(life.Seconds()), "refresh_token": refresh})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
