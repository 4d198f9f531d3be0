package ssetest

import (
	"bytes"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"acpd/model"
)

// Update is the -update flag of the dialects' tests: golden files are
// rewritten instead of compared.
var Update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Prompt returns a minimal request: one user message saying text to
// modelID.
func Prompt(modelID, text string) *model.Request {
	return &model.Request{Model: modelID, Messages: []model.Message{{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: text}}}}}
}

// Serve starts a test server for h, closed when t ends, and returns o
// reaching it: o's HTTPClient is the server's and an empty BaseURL becomes
// the server's URL followed by basePath.
func Serve(t testing.TB, h http.Handler, o model.HTTPOptions, basePath string) model.HTTPOptions {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	if o.BaseURL == "" {
		o.BaseURL = srv.URL + basePath
	}
	o.HTTPClient = srv.Client()
	return o
}

// Sent is one request a [Capture] server received.
type Sent struct {
	Method string
	// Path is the escaped path, Query the raw query.
	Path, Query string
	Header      http.Header
	Body        []byte
}

// Capture starts a test server, closed when t ends, that answers every
// request with the recorded stream in file (through [Handler]) and hands
// the requests it received over on the returned channel, which holds one.
// The options reach the server at its URL followed by basePath.
func Capture(t testing.TB, file, basePath string) (model.HTTPOptions, <-chan Sent) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan Sent, 1)
	o := Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- Sent{r.Method, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Clone(), body}
		Handler(data, 1).ServeHTTP(w, r)
	}), model.HTTPOptions{}, basePath)
	return o, got
}

// CheckHeader reports each header of want whose value in h differs.
func CheckHeader(t testing.TB, h http.Header, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
}

// Decode is a dialect's stream decoder as the fuzz targets and benchmarks
// drive it: it reads the stream r, passes its events to emit until emit
// returns false, and returns the decoder's error.
type Decode func(r io.Reader, emit func(model.Event) bool) error

// DecodeAll runs decode over r and returns the outcome.
func DecodeAll(decode Decode, r io.Reader) Result {
	var res Result
	err := decode(r, func(ev model.Event) bool {
		res.Events = append(res.Events, ev)
		return true
	})
	res.Error = ErrorOf(err)
	return res
}

// BenchmarkDecode measures decode over stream, which must end without
// error after events events.
func BenchmarkDecode(b *testing.B, decode Decode, stream []byte, events int) {
	b.SetBytes(int64(len(stream)))
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		err := decode(bytes.NewReader(stream), func(model.Event) bool { n++; return true })
		if err != nil || n != events {
			b.Fatalf("events %d, err %v", n, err)
		}
	}
}
