//go:build windows

package terminal

import (
	"context"
	"strings"
	"testing"
	"time"
)

func winCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// TestConPTYOutputAndExit runs a command on a pseudo console and reads its
// output and exit code.
func TestConPTYOutputAndExit(t *testing.T) {
	m := NewManager(ManagerOptions{})
	defer m.Close()
	ctx := winCtx(t)
	term, err := m.Start(ctx, Spec{Command: "cmd.exe", Args: []string{"/d", "/c", "echo hello-conpty& exit /b 3"}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := term.WaitForExit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.ExitCode == nil || *st.ExitCode != 3 {
		t.Errorf("exit status %s, want exit 3", st)
	}
	out, err := term.Output(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.Output, "hello-conpty") {
		t.Errorf("output %q lacks the echo", out.Output)
	}
	if err := term.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestConPTYKill kills a long-running command tree through its job object.
func TestConPTYKill(t *testing.T) {
	m := NewManager(ManagerOptions{KillGrace: 100 * time.Millisecond})
	defer m.Close()
	ctx := winCtx(t)
	term, err := m.Start(ctx, Spec{Command: "cmd.exe", Args: []string{"/d", "/c", "ping -n 600 127.0.0.1 >NUL"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := term.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := term.WaitForExit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := term.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
