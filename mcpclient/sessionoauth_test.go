package mcpclient

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"acpd/internal/oauthtest"
	"acpd/mcpclient/oauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// guarded starts an OAuth-protected server with the tool "hello", and
// returns it with a loopback listener and an empty token store.
func guarded(t *testing.T) (*oauthtest.Server, *oauth.Loopback, *oauth.TokenStore) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "guarded", Version: "1"}, nil)
	srv.AddTool(textTool("hello", "hi"))
	as := oauthtest.New(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	l, err := oauth.NewLoopback()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return as, l, oauth.OpenTokenStore(filepath.Join(t.TempDir(), "tokens.json"))
}

// TestSessionOAuth: an HTTP server that needs authorization while a
// session connects it has the user shown the authorization URL; the user
// (here: fetching the URL, which the authorization server answers with a
// redirect) may take longer than the connect timeout, the loopback
// listener receives the code, the token is stored and the server's
// tools join. A token revoked mid-session has the user asked again by the
// next call, which then succeeds.
func TestSessionOAuth(t *testing.T) {
	as, l, store := guarded(t)

	const connectTimeout = 2 * time.Second
	var mu sync.Mutex
	var shown []string
	var causes []error
	show := func(ctx context.Context, server, authURL string) error {
		mu.Lock()
		shown = append(shown, server)
		first := len(shown) == 1
		mu.Unlock()
		if first { // a user slower than the connect timeout
			select {
			case <-time.After(connectTimeout + 500*time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, authURL, nil) // the browser outlives the wait
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		<-ctx.Done()
		mu.Lock()
		causes = append(causes, context.Cause(ctx))
		mu.Unlock()
		return nil
	}
	changed := make(chan struct{}, 8)
	m := newTestManager(t, Options{ConnectTimeout: connectTimeout, OnToolsChanged: func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}})
	servers := WithSessionOAuth([]Server{{Name: "guarded", URL: as.URL, Transport: TransportHTTP}}, store, l, show, nil)
	if errs := m.Add(servers); len(errs) > 0 {
		t.Fatal(errs)
	}
	waitChange(t, changed)
	if st := m.Status(); st[0].State != StateReady {
		t.Fatalf("status = %+v", st)
	}
	if got := toolNames(m); len(got) != 1 || got[0] != "mcp__guarded__hello" {
		t.Fatalf("tools = %v", got)
	}
	if tok := store.Get("guarded", as.URL); tok == nil || tok.AccessToken == "" {
		t.Fatal("no token stored")
	}

	as.Revoke()
	if res := call(t, m, "mcp__guarded__hello", `{}`); res.IsError || res.Text != "hi" {
		t.Errorf("call after revocation = %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(shown) != 2 || as.Granted() != 2 {
		t.Errorf("shown %v, granted %d; want two authorizations", shown, as.Granted())
	}
	if len(causes) != 2 {
		t.Errorf("show saw %d redirects, want 2", len(causes))
	}
	for _, c := range causes {
		if !errors.Is(c, oauth.ErrAuthorizationReceived) {
			t.Errorf("show's context ended with %v", c)
		}
	}
}

// TestSessionOAuthDeclined: a user who declines (show fails) leaves the
// server down with the reason, at once.
func TestSessionOAuthDeclined(t *testing.T) {
	as, l, store := guarded(t)
	m := newTestManager(t, Options{})
	servers := WithSessionOAuth([]Server{{Name: "guarded", URL: as.URL, Transport: TransportHTTP}}, store, l,
		func(context.Context, string, string) error { return errors.New("the user declined") }, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errs := m.Start(ctx, servers)
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "the user declined") {
		t.Fatalf("Start = %v", errs)
	}
	if as.Granted() != 0 || store.Get("guarded", as.URL) != nil {
		t.Error("declined, yet authorized")
	}
}

// TestStoredOAuthRefresh: the next session refreshes an expiring stored
// token with the client it was issued to, and asks nobody; once the
// tokens are revoked, the session after asks the user again.
func TestStoredOAuthRefresh(t *testing.T) {
	as, l, store := guarded(t)
	as.SetTokenLifetime(5 * time.Second) // within the refresh margin: refreshed at once
	visitor := func(ctx context.Context, _, authURL string) error {
		req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, authURL, nil) // the browser outlives the wait
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	first := newTestManager(t, Options{})
	startOK(t, first, WithSessionOAuth([]Server{{Name: "guarded", URL: as.URL, Transport: TransportHTTP}}, store, l, visitor, nil)...)
	first.Close()

	asked := make(chan string, 1)
	second := newTestManager(t, Options{})
	startOK(t, second, WithSessionOAuth([]Server{{Name: "guarded", URL: as.URL, Transport: TransportHTTP}}, store, l,
		func(_ context.Context, server, _ string) error {
			asked <- server
			return errors.New("asked again")
		}, nil)...)
	if res := call(t, second, "mcp__guarded__hello", `{}`); res.IsError || res.Text != "hi" {
		t.Errorf("call = %+v", res)
	}
	if len(asked) > 0 || as.Granted() != 1 || as.Refreshed() == 0 {
		t.Errorf("asked again: %v; %d authorizations, %d refreshes; want 1 and some", len(asked) > 0, as.Granted(), as.Refreshed())
	}
	if tok := store.Get("guarded", as.URL); tok == nil || tok.RefreshToken == "" {
		t.Errorf("stored token = %+v", tok)
	}
	second.Close()

	as.Revoke()
	third := newTestManager(t, Options{})
	startOK(t, third, WithSessionOAuth([]Server{{Name: "guarded", URL: as.URL, Transport: TransportHTTP}}, store, l, visitor, nil)...)
	if res := call(t, third, "mcp__guarded__hello", `{}`); res.IsError || res.Text != "hi" || as.Granted() != 2 {
		t.Errorf("after revocation: call = %+v, %d authorizations (want 2)", res, as.Granted())
	}
}
