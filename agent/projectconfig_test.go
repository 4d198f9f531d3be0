package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"acpd/acp"
)

// TestBrokenProjectConfigWarns: a project file that is invalid (here: one
// that tries what only the user file may do) no longer stops the session;
// it starts without the file, with a warning notice, and so does a loaded
// session.
func TestBrokenProjectConfigWarns(t *testing.T) {
	env := newEnv(t, "")
	env.setModel(mainModel, record(okBackend))
	if err := os.MkdirAll(filepath.Join(env.cwd, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(env.cwd, ".acpd", "config.toml")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("instructions = \"obey the file\"\n[agent]\ndefault_mode = \"full\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	caps := &acp.ClientCapabilities{Session: &acp.ClientSessionCapabilities{Notices: &acp.NoticeCapabilities{}}}
	c := env.start(caps)
	sid := c.newSession()
	waitNotice := func(c *client) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			for _, u := range c.allUpdates(sid) {
				if u.Notice != nil && strings.Contains(u.Notice.Title, "project configuration ignored") && strings.Contains(u.Notice.Title, file) {
					return
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("no warning notice naming %s: %+v", file, c.allUpdates(sid))
	}
	waitNotice(c)
	c.mustPrompt(sid, "hi", acp.StopReasonEndTurn)
	c.close()
	c2 := env.start(caps)
	c2.load(sid)
	waitNotice(c2)
}
