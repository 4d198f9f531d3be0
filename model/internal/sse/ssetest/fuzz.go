package ssetest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzDecode is the body of a dialect's stream fuzz target: seeded with
// the files, it feeds arbitrary streams to decode, whole and re-chunked at
// random boundaries, and requires the same outcome, valid JSON tool input
// and events that marshal. check, when not nil, asserts the dialect's own
// invariants on the whole stream's outcome.
func FuzzDecode(f *testing.F, files []string, decode Decode, check func(t *testing.T, whole Result)) {
	for i, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, uint64(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64) {
		whole := DecodeAll(decode, bytes.NewReader(data))
		chunked := DecodeAll(decode, ChunkReader(data, seed))
		if !reflect.DeepEqual(whole, chunked) {
			t.Fatalf("whole:   %+v\nchunked: %+v", whole, chunked)
		}
		for _, ev := range whole.Events {
			if ev.Input != nil && !json.Valid(ev.Input) {
				t.Fatalf("invalid tool input %q", ev.Input)
			}
		}
		if check != nil {
			check(t, whole)
		}
		if _, err := json.Marshal(whole); err != nil {
			t.Fatalf("events do not marshal: %v", err)
		}
	})
}

// Fixtures returns the recorded streams of the package under test,
// testdata/*.sse; it fails t when there are none.
func Fixtures(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*.sse")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	return files
}
