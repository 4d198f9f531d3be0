package client

import (
	"slices"
	"testing"
)

func TestCommandLine(t *testing.T) {
	for _, c := range []struct {
		cmd      string
		args     []string
		wantCmd  string
		wantArgs []string
	}{
		{"echo ran-$((40+2))", nil, "/bin/sh", []string{"-c", "echo ran-$((40+2))"}},
		{"go test ./...", nil, "/bin/sh", []string{"-c", "go test ./..."}},
		{"ls", nil, "ls", nil},
		{"/usr/bin/env", []string{"a b"}, "/usr/bin/env", []string{"a b"}},
		{"echo", []string{"$HOME"}, "echo", []string{"$HOME"}}, // arguments stay literal
	} {
		cmd, args := commandLine(c.cmd, c.args)
		if cmd != c.wantCmd || !slices.Equal(args, c.wantArgs) {
			t.Errorf("commandLine(%q, %q) = %q, %q; want %q, %q", c.cmd, c.args, cmd, args, c.wantCmd, c.wantArgs)
		}
	}
}
