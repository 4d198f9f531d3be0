//go:build unix

package run

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenBrowserEnvAndReap: the opener named by $BROWSER gets the page's
// URL as its last argument and acpd's environment without secrets, and is
// returned started for the caller to reap.
func TestOpenBrowserEnvAndReap(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "env")
	script := filepath.Join(dir, "opener")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n{ echo \"url=$1\"; env; } > \""+out+"\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BROWSER", script)
	t.Setenv("OPENAI_API_KEY", "sk-must-not-leak")
	t.Setenv("ACPD_OPENER_PROBE", "kept")
	cmd, err := openBrowser("http://127.0.0.1:1/secret/")
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("opener: %v", err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s := string(got)
	if !strings.Contains(s, "url=http://127.0.0.1:1/secret/\n") || !strings.Contains(s, "ACPD_OPENER_PROBE=kept") {
		t.Errorf("opener saw:\n%s", s)
	}
	if strings.Contains(s, "sk-must-not-leak") {
		t.Errorf("the opener received a secret:\n%s", s)
	}
	t.Setenv("BROWSER", "none")
	if cmd, err := openBrowser("http://127.0.0.1:1/"); err == nil || cmd != nil {
		t.Errorf("BROWSER=none started %v, err %v", cmd, err)
	}
}
