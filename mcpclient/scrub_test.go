package mcpclient

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestScrubRemovesURLCredentials(t *testing.T) {
	raw := "https://user:pa55@mcp.example.com/mcp?token=s3cret&x=1"
	inner := errors.New(`Post "` + raw + `": dial tcp: lookup mcp.example.com: no such host`)
	err := scrub(inner, raw)
	for _, secret := range []string{"s3cret", "pa55", "token="} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%q survives in %q", secret, err)
		}
	}
	if !strings.Contains(err.Error(), "https://mcp.example.com/mcp") || !errors.Is(err, inner) {
		t.Errorf("scrubbed error lost its meaning: %q", err)
	}
	if got := scrub(inner, "https://plain.example/mcp"); got != inner {
		t.Errorf("an URL without credentials changed the error")
	}
}

// A server URL carrying a token never shows up in Start's errors.
func TestStartErrorHasNoURLToken(t *testing.T) {
	m := NewManager(Options{Logger: testLogger()})
	defer m.Close()
	errs := m.Start(context.Background(), []Server{{Name: "tok", URL: "http://127.0.0.1:1/mcp?token=s3cret", Transport: TransportHTTP}})
	if len(errs) != 1 {
		t.Fatalf("errs = %v, want one", errs)
	}
	if strings.Contains(errs[0].Error(), "s3cret") {
		t.Fatalf("token in error: %v", errs[0])
	}
}
