package oauth

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestLoopback: the redirect listener on 127.0.0.1 hands the redirect's
// query to Authorize, which has shown the authorization URL.
func TestLoopback(t *testing.T) {
	l, err := NewLoopback()
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if !strings.HasPrefix(l.RedirectURL, "http://127.0.0.1:") || !strings.HasSuffix(l.RedirectURL, "/callback") {
		t.Fatalf("RedirectURL = %q", l.RedirectURL)
	}
	shown := make(chan string, 1)
	authorize := l.Authorize(func(u string) { shown <- u })
	go func() {
		<-shown
		resp, err := http.Get(l.RedirectURL + "?code=c0de&state=st")
		if err == nil {
			resp.Body.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	q, err := authorize(ctx, "https://auth.example/authorize?x=1")
	if err != nil || q.Get("code") != "c0de" || q.Get("state") != "st" {
		t.Fatalf("authorize = %v, %v", q, err)
	}
	// A request the user never completes ends with ctx.
	ctx2, cancel2 := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel2()
	if _, err := l.Authorize(func(string) {})(ctx2, "https://auth.example/"); err == nil {
		t.Error("Authorize without a redirect returned no error")
	}
	if _, err := oauthHandler(&Config{}, http.DefaultClient); err == nil {
		t.Error("OAuth without a redirect URL was accepted")
	}
}
