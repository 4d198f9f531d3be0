package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
)

var flagSessionsPerProc = flag.Int("multiproc.sessions", 10, "sessions each of the two acpd processes creates concurrently")

// createSessions pipelines n session/new requests (all sent before any reply
// is read, so acpd handles them concurrently) and returns the new ids.
func (p *proc) createSessions(cwd string, n int) (send func(), collect func() []string) {
	var ids []string
	send = func() {
		for range n {
			ids = append(ids, p.request("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}))
		}
	}
	collect = func() []string {
		p.tb.Helper()
		var out []string
		for _, id := range ids {
			m := p.reply(id)
			if m.Error != nil {
				p.tb.Fatalf("session/new: %v", m.Error)
			}
			var r struct {
				SessionID string `json:"sessionId"`
			}
			if err := json.Unmarshal(m.Result, &r); err != nil || r.SessionID == "" {
				p.tb.Fatalf("session/new result %s: %v", m.Result, err)
			}
			out = append(out, r.SessionID)
		}
		return out
	}
	return send, collect
}

// listedIDs runs `acpd sessions list --json` and returns the ids.
func listedIDs(t *testing.T, env []string) []string {
	t.Helper()
	out, errOut, code := runCLI(t, env, "sessions", "list", "--json")
	if code != 0 {
		t.Fatalf("acpd sessions list --json: exit %d: %s", code, errOut)
	}
	var metas []struct {
		ID  string `json:"id"`
		Cwd string `json:"cwd"`
	}
	if err := json.Unmarshal([]byte(out), &metas); err != nil {
		t.Fatalf("acpd sessions list --json printed %q: %v", out, err)
	}
	ids := make([]string, 0, len(metas))
	for _, m := range metas {
		ids = append(ids, m.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestTwoProcessesShareTheStore runs two acpd processes on one session store:
// concurrent creation, the cross-process session lock (naming the holder's
// pid) for load, resume, delete and `acpd sessions rm`, and its release when
// the holder exits or closes the session.
func TestTwoProcessesShareTheStore(t *testing.T) {
	t.Parallel()
	schema := loadSchema(t, true)
	iso := newIsolation(t)
	project := t.TempDir()
	a := startProc(t, iso.Env())
	b := startProc(t, iso.Env())
	a.initialize()
	b.initialize()

	n := *flagSessionsPerProc
	sendA, collectA := a.createSessions(project, n)
	sendB, collectB := b.createSessions(project, n)
	sendA()
	sendB()
	idsA, idsB := collectA(), collectB()
	all := slices.Concat(idsA, idsB)
	slices.Sort(all)
	if len(slices.Compact(slices.Clone(all))) != 2*n {
		t.Fatalf("session ids are not unique: %v", all)
	}
	if got := listedIDs(t, iso.Env()); !slices.Equal(got, all) {
		t.Fatalf("acpd sessions list --json = %v\nwant %v", got, all)
	}

	x := idsA[0]
	holder := fmt.Sprintf("pid %d", a.pid())
	params := map[string]any{"sessionId": x, "cwd": project, "mcpServers": []any{}}
	for _, method := range []string{"session/load", "session/resume", "session/delete"} {
		p := params
		if method == "session/delete" {
			p = map[string]any{"sessionId": x}
		}
		_, rerr := b.call(method, p)
		if rerr == nil {
			t.Fatalf("%s of a session open in another process succeeded", method)
		}
		if !strings.Contains(rerr.Message, holder) {
			t.Errorf("%s error %q does not name the holder (%s)", method, rerr.Message, holder)
		}
		if method != "session/delete" && !strings.Contains(rerr.Message, "open in another window") {
			t.Errorf("%s error %q does not say the session is open in another window", method, rerr.Message)
		}
	}
	_, errOut, code := runCLI(t, iso.Env(), "sessions", "rm", x)
	if code == 0 || !strings.Contains(errOut, holder) {
		t.Errorf("acpd sessions rm of an open session: exit %d, stderr %q; want a refusal naming %s", code, errOut, holder)
	}

	// The lock dies with its holder.
	a.close()
	var loaded struct {
		Modes struct {
			CurrentModeID string `json:"currentModeId"`
		} `json:"modes"`
	}
	b.mustCall("session/load", params, &loaded)
	if loaded.Modes.CurrentModeID == "" {
		t.Errorf("session/load result has no current mode")
	}
	_, errOut, code = runCLI(t, iso.Env(), "sessions", "rm", x)
	if bHolder := fmt.Sprintf("pid %d", b.pid()); code == 0 || !strings.Contains(errOut, bHolder) {
		t.Errorf("acpd sessions rm of a session loaded in B: exit %d, stderr %q; want a refusal naming %s", code, errOut, bHolder)
	}
	b.mustCall("session/close", map[string]any{"sessionId": x}, nil)
	if out, errOut, code := runCLI(t, iso.Env(), "sessions", "rm", x); code != 0 {
		t.Fatalf("acpd sessions rm after close: exit %d: %s%s", code, out, errOut)
	}
	want := slices.DeleteFunc(slices.Clone(all), func(id string) bool { return id == x })
	if got := listedIDs(t, iso.Env()); !slices.Equal(got, want) {
		t.Fatalf("after rm, acpd sessions list --json = %v\nwant %v", got, want)
	}
	b.close()
	a.validate(schema, true)
	b.validate(schema, true)
}
