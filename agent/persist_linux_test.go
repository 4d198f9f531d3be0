package agent

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"acpd/acp"
	"acpd/model"
	"acpd/session"
)

// TestFullDiskEndsTheTurn: the session store on a small tmpfs that fills
// up. A prompt whose records cannot be written ends with a clear error and
// a notice, before the model is asked (the session would drift further
// from what a resume restores); the failure is reported once, and with
// space again the next prompt works and is saved.
func TestFullDiskEndsTheTurn(t *testing.T) {
	env := newEnv(t, "")
	dir := filepath.Join(env.base, "small")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=512k,mode=0700"); err != nil {
		t.Skipf("cannot mount a small tmpfs to fill (this test needs root or CAP_SYS_ADMIN): %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	store, err := session.Open(t.Context(), filepath.Join(dir, "acpd"))
	if err != nil {
		t.Fatal(err)
	}
	env.store = store
	rec := record(okBackend)
	env.setModel(mainModel, rec)
	c := env.startWith(sessionCaps(true, acp.ClientSessionCapabilities{Notices: &acp.NoticeCapabilities{}}), nil, nil)
	sid := c.newSession()
	c.mustPrompt(sid, "first", acp.StopReasonEndTurn)

	fill := filepath.Join(dir, "fill")
	f, err := os.Create(fill)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the tmpfs: %v", err)
			}
			break
		}
	}
	f.Close()

	from := len(c.allUpdates(sid))
	// Longer than the free rest of the log's last page (tmpfs allocates
	// whole pages).
	_, err = c.prompt(sid, "second "+strings.Repeat("x", 16<<10))
	if err == nil || !strings.Contains(err.Error(), "could not be saved") || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("prompt on a full disk: %v, want the error that the session could not be saved", err)
	}
	if n := len(rec.requests()); n != 1 {
		t.Fatalf("the model got %d requests, want 1 (none once the log failed)", n)
	}
	noticed := false
	for _, u := range c.allUpdates(sid)[from:] {
		if u.Notice != nil && u.Notice.Severity == acp.NoticeSeverityError && strings.Contains(u.Notice.Title, "could not be saved") {
			noticed = true
		}
	}
	if !noticed {
		t.Error("no error notice told the editor")
	}

	if err := os.Remove(fill); err != nil {
		t.Fatal(err)
	}
	c.mustPrompt(sid, "third", acp.StopReasonEndTurn) // reported once: the session goes on
	var users []string
	for _, m := range loggedMessages(t, env, sid) {
		if m.Role == model.RoleUser {
			users = append(users, m.Text())
		}
	}
	if strings.Join(users, ",") != "first,third" {
		t.Fatalf("user messages saved: %q, want first and third", users)
	}
}
