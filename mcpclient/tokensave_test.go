package mcpclient

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"acpd/mcpclient/oauth"
)

// visit is a user who completes every authorization at once.
func visit(ctx context.Context, _, authURL string) error {
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

// saveFailures collects what WithSessionOAuth's saveFailed hears.
type saveFailures struct {
	mu   sync.Mutex
	errs map[string][]error
}

func (f *saveFailures) add(server string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.errs == nil {
		f.errs = map[string][]error{}
	}
	f.errs[server] = append(f.errs[server], err)
}

func (f *saveFailures) of(server string) []error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.errs[server]
}

// TestTokenNotStoredOnAuthorization: a token store that cannot be written
// (its directory is a file: refused to root too) fails the authorization
// that got the token when nobody takes the failure, as `acpd mcp login`
// wants; with saveFailed the session goes on with the token and the
// failure is reported, naming the store's error.
func TestTokenNotStoredOnAuthorization(t *testing.T) {
	as, l, _ := guarded(t)
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	store := oauth.OpenTokenStore(filepath.Join(file, "tokens.json"))
	servers := []Server{{Name: "guarded", URL: as.URL, Transport: TransportHTTP}}

	m := newTestManager(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	errs := m.Start(ctx, WithSessionOAuth(servers, store, l, visit, nil))
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "storing the OAuth token") || !strings.Contains(errs[0].Error(), file) {
		t.Fatalf("Start with an unwritable store = %v, want the store's error", errs)
	}

	var failed saveFailures
	m2 := newTestManager(t, Options{})
	startOK(t, m2, WithSessionOAuth(servers, store, l, visit, failed.add)...)
	if res := call(t, m2, "mcp__guarded__hello", `{}`); res.IsError || res.Text != "hi" {
		t.Errorf("call with the unstored token = %+v", res)
	}
	if got := failed.of("guarded"); len(got) == 0 || !strings.Contains(got[0].Error(), file) {
		t.Errorf("saveFailed heard %v, want the store's error", got)
	}
}

// TestRefreshedTokenNotStored: a refreshed token the store cannot keep
// (its lock is a directory, so reads work and writes fail) is reported to
// saveFailed and used all the same; without saveFailed the refresh's
// request fails with the store's error.
func TestRefreshedTokenNotStored(t *testing.T) {
	nobody := func(context.Context, string, string) error { return errors.New("asked again") }
	for _, reported := range []bool{true, false} {
		as, l, _ := guarded(t)
		path := filepath.Join(t.TempDir(), "tokens.json")
		store := oauth.OpenTokenStore(path)
		servers := []Server{{Name: "guarded", URL: as.URL, Transport: TransportHTTP}}
		as.SetTokenLifetime(5 * time.Second) // within the refresh margin: refreshed at once
		first := newTestManager(t, Options{})
		startOK(t, first, WithSessionOAuth(servers, store, l, visit, nil)...)
		first.Close()
		stored := store.Get("guarded", as.URL)
		if stored == nil {
			t.Fatal("no token stored")
		}
		if err := os.Remove(path + ".lock"); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if err := os.Mkdir(path+".lock", 0o700); err != nil {
			t.Fatal(err)
		}
		refreshed := as.Refreshed()

		second := newTestManager(t, Options{})
		if !reported {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			errs := second.Start(ctx, WithSessionOAuth(servers, store, l, nobody, nil))
			cancel()
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), "storing the OAuth token") {
				t.Errorf("Start whose refresh cannot be stored = %v, want the store's error", errs)
			}
			continue
		}
		var failed saveFailures
		startOK(t, second, WithSessionOAuth(servers, store, l, nobody, failed.add)...)
		if res := call(t, second, "mcp__guarded__hello", `{}`); res.IsError || res.Text != "hi" {
			t.Errorf("call = %+v", res)
		}
		if as.Refreshed() == refreshed {
			t.Fatal("the token was not refreshed")
		}
		if got := failed.of("guarded"); len(got) == 0 || !strings.Contains(got[0].Error(), "storing the OAuth token") {
			t.Errorf("saveFailed heard %v, want the failed save of the refreshed token", got)
		}
		if tok := store.Get("guarded", as.URL); tok == nil || tok.AccessToken != stored.AccessToken {
			t.Errorf("the store changed: %+v", tok)
		}
		second.Close()
	}
}
