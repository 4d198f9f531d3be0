package provider

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

var credLoops = flag.Int("credentials.loops", 50, "updates made while a reader checks the credentials file in TestCredentialsAtomicRewrite")

func TestCredentialsRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "acpd")
	path := filepath.Join(dir, "credentials.json")
	c := OpenCredentials(path)
	if _, ok := c.Get("anthropic"); ok {
		t.Fatal("Get on a missing file found a key")
	}
	if got := c.Providers(); len(got) != 0 {
		t.Fatalf("Providers = %q", got)
	}
	if err := c.Set("openai", "  sk-o\n"); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("anthropic", "sk-a"); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("anthropic", "sk-a2"); err != nil {
		t.Fatal(err)
	}
	if k, ok := c.Get("openai"); !ok || k != "sk-o" {
		t.Errorf("Get(openai) = %q, %v (white space must be trimmed)", k, ok)
	}
	if k, ok := OpenCredentials(path).Get("anthropic"); !ok || k != "sk-a2" {
		t.Errorf("Get(anthropic) from a new Credentials = %q, %v", k, ok)
	}
	if got := c.Providers(); !slices.Equal(got, []string{"anthropic", "openai"}) {
		t.Errorf("Providers = %q", got)
	}
	if runtime.GOOS != "windows" {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("file mode = %v, want 0600", fi.Mode().Perm())
		}
		di, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if di.Mode().Perm() != 0o700 {
			t.Errorf("directory mode = %v, want 0700", di.Mode().Perm())
		}
	}

	if err := c.Delete("openai"); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get("openai"); ok {
		t.Error("Delete(openai) kept the key")
	}
	if err := c.Delete("never-stored"); err != nil {
		t.Errorf("Delete of an absent key: %v", err)
	}
	if k, ok := c.Get("anthropic"); !ok || k != "sk-a2" {
		t.Error("Delete(openai) removed another key")
	}
	if err := c.Set("gemini", "g"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(""); err != nil {
		t.Fatal(err)
	}
	if got := c.Providers(); len(got) != 0 {
		t.Errorf("after Delete(\"\"): %q", got)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the empty credentials file was not removed: %v", err)
	}
}

func TestCredentialsInvalidInput(t *testing.T) {
	c := OpenCredentials(filepath.Join(t.TempDir(), "credentials.json"))
	for _, tc := range []struct{ provider, key string }{
		{"", "k"}, {"a/b", "k"}, {"a b", "k"}, {"ok", ""}, {"ok", "   "}, {"ok", "a\nb"}, {"ok", "a\x00b"},
		{"ok", strings.Repeat("k", maxKeyBytes+1)},
	} {
		err := c.Set(tc.provider, tc.key)
		if err == nil {
			t.Errorf("Set(%q, %q) succeeded", tc.provider, tc.key)
		} else if tc.key != "" && strings.TrimSpace(tc.key) != "" && strings.Contains(err.Error(), tc.key) {
			t.Errorf("Set error quotes the key: %v", err)
		}
	}
	if got := c.Providers(); len(got) != 0 {
		t.Errorf("invalid Sets stored %q", got)
	}
	if err := (&Credentials{}).Set("a", "k"); err == nil {
		t.Error("Set without a location succeeded")
	}
}

func TestCredentialsDefaultPath(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	c := OpenCredentials("")
	if err := c.Set("openai", "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "acpd", "credentials.json")); err != nil {
		t.Errorf("not stored under XDG_CONFIG_HOME: %v", err)
	}
}

func TestCredentialsNotPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("unix modes")
	}
	path := filepath.Join(t.TempDir(), "credentials.json")
	c := OpenCredentials(path)
	if err := c.Set("openai", "sk-secret-value"); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get("openai"); ok {
		t.Error("a world-readable credentials file was used")
	}
	err := c.check()
	if err == nil || !strings.Contains(err.Error(), "chmod 600") || strings.Contains(err.Error(), "secret") {
		t.Errorf("check = %v", err)
	}
	// Set rewrites the file privately, keeping the other keys.
	if err := c.Set("anthropic", "a"); err != nil {
		t.Fatal(err)
	}
	if k, ok := c.Get("openai"); !ok || k != "sk-secret-value" {
		t.Errorf("after Set: Get(openai) = %q, %v", k, ok)
	}
}

func TestCredentialsMalformed(t *testing.T) {
	const secret = "sk-very-secret"
	for _, content := range []string{
		`{"version":1,"providers":{"openai":{"apiKey":` + secret + `}}}`,
		`{"version":2,"providers":{"openai":{"apiKey":"` + secret + `"}}}`,
		`{"version":1,"providers":{"openai":{"key":"` + secret + `"}}}`,
		`{"version":1,"providers":{"` + secret + ` x":{"apiKey":"k"}}}`,
		`{"version":1,"providers":{"openai":{"apiKey":"` + secret + `\n"}}}`,
		`{"version":1,"providers":{}} {"` + secret + `":1}`,
		`[` + secret + `]`,
	} {
		path := filepath.Join(t.TempDir(), "credentials.json")
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		c := OpenCredentials(path)
		if _, ok := c.Get("openai"); ok {
			t.Errorf("%s: Get found a key", content)
		}
		err := c.check()
		if err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: check = %v", content, err)
		}
		// Set must not clobber a file it cannot read.
		if err := c.Set("anthropic", "k"); err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: Set = %v", content, err)
		}
		if data, _ := os.ReadFile(path); string(data) != content {
			t.Errorf("%s: the file was rewritten", content)
		}
		// Delete("") removes it.
		if err := c.Delete(""); err != nil {
			t.Errorf("Delete(\"\") of a malformed file: %v", err)
		}
	}
}

// TestCredentialsAtomicRewrite updates the file while another goroutine
// reads it: every read sees a complete file, and updates from concurrent
// writers are all kept.
func TestCredentialsAtomicRewrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "credentials.json")
	c := OpenCredentials(path)
	if err := c.Set("base", "k"); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Set("base", "k2"); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(before, after) {
		t.Error("Set rewrote the file in place instead of replacing it")
	}

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		reader := OpenCredentials(path)
		for ctx.Err() == nil {
			if err := reader.check(); err != nil {
				t.Errorf("a reader saw a broken file: %v", err)
				return
			}
			if _, ok := reader.Get("base"); !ok {
				t.Error("a reader missed a key")
				return
			}
		}
	})
	var writers sync.WaitGroup
	for w := range 2 {
		writers.Go(func() {
			// A separate Credentials per writer: the file lock, not the
			// mutex, serialises them, as between processes.
			wc := OpenCredentials(path)
			for i := range *credLoops {
				if err := wc.Set(fmt.Sprintf("w%d-%d", w, i), "key"); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	writers.Wait()
	cancel()
	wg.Wait()
	if got := len(c.Providers()); got != 1+2**credLoops {
		t.Errorf("%d keys stored, want %d: concurrent updates were lost", got, 1+2**credLoops)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}

func FuzzDecodeCredentials(f *testing.F) {
	f.Add([]byte(`{"version":1,"providers":{"openai":{"apiKey":"k"}}}`))
	f.Add([]byte(`{"version":1,"providers":{}}`))
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":1,"providers":{"a":{"apiKey":""}}}`))
	f.Add([]byte(`not json`))
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, err := decodeCredentials("c.json", data)
		if err != nil {
			if keys != nil {
				t.Error("keys with an error")
			}
			return
		}
		for name, k := range keys {
			if !providerNameRE.Get().MatchString(name) || k == "" || checkKey(k) != nil {
				t.Errorf("accepted invalid entry %q", name)
			}
		}
	})
}

func FuzzParseModelList(f *testing.F) {
	f.Add([]byte(`{"object":"list","data":[{"id":"a","object":"model"}]}`))
	f.Add([]byte(`{"data":[{"id":"org/m:tag"}]}`))
	f.Add([]byte(`<html></html>`))
	f.Add([]byte(`{"data":[{"id":1}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ids, err := parseModelList(data)
		if err != nil {
			return
		}
		if len(ids) == 0 {
			t.Error("accepted an empty list")
		}
		for _, id := range ids {
			if !validID(id) {
				t.Errorf("accepted invalid id %q", id)
			}
		}
	})
}
