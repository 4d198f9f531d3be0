//go:build unix

package terminal

import (
	"errors"
	"os/exec"
	"testing"
)

func TestLookPath(t *testing.T) {
	p, err := lookPath("sh", "relative/bin::/nonexistent:/bin:/usr/bin", true)
	if err != nil || (p != "/bin/sh" && p != "/usr/bin/sh") {
		t.Errorf("lookPath(sh) = %q, %v", p, err)
	}
	if p, err := lookPath("./x", "", true); p != "./x" || err != nil {
		t.Errorf("lookPath(./x) = %q, %v", p, err)
	}
	if _, err := lookPath("sh", "", true); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("lookPath with empty PATH: %v, want ErrNotFound", err)
	}
	if p, err := lookPath("sh", "", false); err != nil || p == "" {
		t.Errorf("lookPath without PATH should use DefaultPath: %q, %v", p, err)
	}
}
