package mcpclient

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRedirectKeepsHeadersAtOrigin: configured headers follow a redirect
// within the server's origin, never to another host.
func TestRedirectKeepsHeadersAtOrigin(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "go-test", Version: "1"}, nil)
	srv.AddTool(textTool("one", "1"))
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var leaked, carried atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" || r.Header.Get("X-Api-Key") != "" {
			leaked.Add(1)
		}
		handler.ServeHTTP(w, r)
	}))
	defer other.Close()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, other.URL+"/mcp", http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, "/mcp", http.StatusTemporaryRedirect)
		default:
			if r.Header.Get("Authorization") == "Bearer s3cret" {
				carried.Add(1)
			}
			handler.ServeHTTP(w, r)
		}
	}))
	defer origin.Close()

	m := newTestManager(t, Options{})
	hdr := map[string]string{"Authorization": "Bearer s3cret", "X-Api-Key": "k"}
	startOK(t, m,
		Server{Name: "away", URL: origin.URL + "/away", Transport: TransportHTTP, Headers: hdr},
		Server{Name: "moved", URL: origin.URL + "/moved", Transport: TransportHTTP, Headers: hdr})
	if res := call(t, m, "mcp__away__one", `{}`); res.Text != "1" {
		t.Errorf("away = %+v", res)
	}
	if res := call(t, m, "mcp__moved__one", `{}`); res.Text != "1" {
		t.Errorf("moved = %+v", res)
	}
	if n := leaked.Load(); n != 0 {
		t.Errorf("%d requests carried the credentials to another host", n)
	}
	if carried.Load() == 0 {
		t.Error("a same-origin redirect lost the configured headers")
	}
	m.Close() // before the test servers close
}

func TestLineFilter(t *testing.T) {
	in := "banner\n{\"jsonrpc\":\"2.0\",\"id\":1}\n\n  \r\n[1,2]\r\nnot json {\n\"str\"\n{\"partial\":"
	f := newLineFilter(strings.NewReader(in), nil)
	b, err := readAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if want := "{\"jsonrpc\":\"2.0\",\"id\":1}\n[1,2]\n\"str\"\n"; string(b) != want {
		t.Errorf("filtered = %q, want %q", b, want)
	}
	if f.skipped != 3 {
		t.Errorf("skipped = %d", f.skipped)
	}
}

func readAll(f *lineFilter) ([]byte, error) {
	var out []byte
	buf := make([]byte, 7)
	for {
		n, err := f.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
	}
}

func FuzzLineFilter(f *testing.F) {
	f.Add([]byte("x\n{}\n"))
	f.Add([]byte("{\"a\":1}\r\n\n[]"))
	f.Fuzz(func(t *testing.T, in []byte) {
		lf := newLineFilter(strings.NewReader(string(in)), nil)
		out, _ := readAll(lf)
		for _, line := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
			if line != "" && !jsonValid(line) {
				t.Fatalf("passed a non-JSON line %q", line)
			}
		}
	})
}

func jsonValid(s string) bool { return json.Valid([]byte(s)) }

// TestLineFilterLongLine: a line many times the read buffer (a large
// tools/list result) passes whole, and so does the next one.
func TestLineFilterLongLine(t *testing.T) {
	long := `{"s":"` + strings.Repeat("x", 10*lineBuf+7) + `"}`
	f := newLineFilter(strings.NewReader(long+"\n{}\n"), nil)
	b, err := readAll(f)
	if err != nil {
		t.Fatal(err)
	}
	if want := long + "\n{}\n"; string(b) != want {
		t.Errorf("filtered %d bytes, want %d", len(b), len(want))
	}
}
