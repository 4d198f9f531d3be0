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

// openElsewhere calls session/list (every page) in p and returns the ids
// whose entries say they are open elsewhere, with the holder each names.
func openElsewhere(t *testing.T, p *proc, cwd string) map[string]string {
	t.Helper()
	out := map[string]string{}
	params := map[string]any{"cwd": cwd}
	for {
		var resp struct {
			Sessions []struct {
				SessionID string `json:"sessionId"`
				Meta      struct {
					Acpd struct {
						OpenElsewhere bool   `json:"openElsewhere"`
						Holder        string `json:"holder"`
					} `json:"acpd"`
				} `json:"_meta"`
			} `json:"sessions"`
			NextCursor string `json:"nextCursor"`
		}
		p.mustCall("session/list", params, &resp)
		for _, s := range resp.Sessions {
			if s.Meta.Acpd.OpenElsewhere {
				out[s.SessionID] = s.Meta.Acpd.Holder
			}
		}
		if resp.NextCursor == "" {
			return out
		}
		params["cursor"] = resp.NextCursor
	}
}

// TestTwoProcessesShareTheStore runs two acpd processes on one session store:
// concurrent creation, the cross-process session lock (naming the holder's
// pid) for load, resume, delete and `acpd sessions rm`, session/list's
// openElsewhere marker, and their release when the holder exits or closes
// the session.
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
	// Each process's list marks the other's sessions (all open there), and
	// names the holder, never its own.
	for _, c := range []struct {
		p      *proc
		others []string
		holder string
	}{{b, idsA, holder}, {a, idsB, fmt.Sprintf("pid %d", b.pid())}} {
		marked := openElsewhere(t, c.p, project)
		if len(marked) != len(c.others) {
			t.Errorf("session/list in pid %d marks %d sessions open elsewhere, want the other process's %d: %v", c.p.pid(), len(marked), len(c.others), marked)
		}
		for _, id := range c.others {
			if h, ok := marked[id]; !ok || !strings.Contains(h, c.holder) {
				t.Errorf("session/list in pid %d: %s marked %v with holder %q; want one naming %s", c.p.pid(), id, ok, h, c.holder)
			}
		}
	}
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
	if marked := openElsewhere(t, b, project); len(marked) != 0 {
		t.Errorf("session/list after A exited still marks sessions open elsewhere: %v", marked)
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
