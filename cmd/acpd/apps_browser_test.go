package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"acpd/internal/syncbuf"
	"acpd/internal/testpeers"
)

// appsUIScript is the replay model of the run tests with views: it calls
// get-time (a tool with a view), answers, then answers the view's message.
const appsUIScript = `{"type":"tool_done","toolCallId":"call_time","toolName":"mcp__basic__get-time","input":{}}
{"type":"finish"}
{"type":"text","text":"It is the time the app shows."}
{"type":"finish"}
{"type":"text","text":"Here is the time again."}
{"type":"finish"}
`

// appContext is the model context the test's view sets.
const appContext = "The user picked 42."

// appMessage is what the test types into the view's message box.
const appMessage = "Show the time again, from the app"

// cdpTab is one browser tab and the execution contexts of its frames,
// the frames of other processes included (auto-attached).
type cdpTab struct {
	b       *cdpBrowser
	session string

	mu       sync.Mutex
	contexts map[string]map[int]bool // by CDP session: default contexts
	console  []string                // the frames' console messages
	events   chan cdpEvent
	stop     chan struct{}
	wg       sync.WaitGroup
}

// openTab starts Chromium and attaches to a new tab.
func openTab(t *testing.T, ctx context.Context, bin string) *cdpTab {
	tab := &cdpTab{contexts: map[string]map[int]bool{}, events: make(chan cdpEvent, 4096), stop: make(chan struct{})}
	tab.b = startChromium(t, bin, func(ev cdpEvent) {
		select {
		case tab.events <- ev:
		case <-tab.stop:
		}
	})
	tab.wg.Add(1)
	go func() {
		defer tab.wg.Done()
		for {
			select {
			case ev := <-tab.events:
				tab.handle(ctx, ev)
			case <-tab.stop:
				return
			}
		}
	}()
	t.Cleanup(func() { close(tab.stop); tab.wg.Wait() })
	res, err := tab.b.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	if err != nil {
		t.Fatal(err)
	}
	var target struct{ TargetID string }
	json.Unmarshal(res, &target)
	res, err = tab.b.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true})
	if err != nil {
		t.Fatal(err)
	}
	var att struct{ SessionID string }
	json.Unmarshal(res, &att)
	tab.session = att.SessionID
	if err := tab.attach(ctx, tab.session); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.b.call(ctx, tab.session, "Page.enable", nil); err != nil {
		t.Fatal(err)
	}
	return tab
}

// attach enables what the test needs on a target's session: its frames'
// contexts and the auto-attachment of its out-of-process frames.
func (tab *cdpTab) attach(ctx context.Context, session string) error {
	tab.mu.Lock()
	if tab.contexts[session] == nil {
		tab.contexts[session] = map[int]bool{}
	}
	tab.mu.Unlock()
	if _, err := tab.b.call(ctx, session, "Runtime.enable", nil); err != nil {
		return err
	}
	_, err := tab.b.call(ctx, session, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	return err
}

func (tab *cdpTab) handle(ctx context.Context, ev cdpEvent) {
	switch ev.Method {
	case "Target.attachedToTarget":
		var p struct{ SessionID string }
		json.Unmarshal(ev.Params, &p)
		go tab.attach(ctx, p.SessionID) // answered by the reader, not by this loop
	case "Runtime.executionContextCreated":
		var p struct {
			Context struct {
				ID      int
				AuxData struct{ IsDefault bool }
			}
		}
		json.Unmarshal(ev.Params, &p)
		if p.Context.AuxData.IsDefault {
			tab.mu.Lock()
			if tab.contexts[ev.SessionID] == nil {
				tab.contexts[ev.SessionID] = map[int]bool{}
			}
			tab.contexts[ev.SessionID][p.Context.ID] = true
			tab.mu.Unlock()
		}
	case "Runtime.consoleAPICalled":
		var p struct {
			Args []struct{ Value any }
		}
		json.Unmarshal(ev.Params, &p)
		var parts []string
		for _, a := range p.Args {
			parts = append(parts, fmt.Sprint(a.Value))
		}
		tab.mu.Lock()
		tab.console = append(tab.console, strings.Join(parts, " "))
		tab.mu.Unlock()
	case "Runtime.executionContextDestroyed":
		var p struct{ ExecutionContextID int }
		json.Unmarshal(ev.Params, &p)
		tab.mu.Lock()
		delete(tab.contexts[ev.SessionID], p.ExecutionContextID)
		tab.mu.Unlock()
	case "Runtime.executionContextsCleared":
		tab.mu.Lock()
		tab.contexts[ev.SessionID] = map[int]bool{}
		tab.mu.Unlock()
	}
}

// frameCtx names one frame's main world.
type frameCtx struct {
	session string
	id      int
}

// eval evaluates expr (awaiting a promise) in c and returns its value.
func (tab *cdpTab) eval(ctx context.Context, c frameCtx, expr string) (any, error) {
	res, err := tab.b.call(ctx, c.session, "Runtime.evaluate", map[string]any{"expression": expr, "contextId": c.id, "awaitPromise": true, "returnByValue": true})
	if err != nil {
		return nil, err
	}
	var r struct {
		Result           struct{ Value any }
		ExceptionDetails *struct {
			Text      string
			Exception struct{ Description string }
		}
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, err
	}
	if e := r.ExceptionDetails; e != nil {
		return nil, fmt.Errorf("%s %s", e.Text, e.Exception.Description)
	}
	return r.Result.Value, nil
}

// find waits for the frame in which probe (a boolean expression) is true.
func (tab *cdpTab) find(ctx context.Context, what, probe string) (frameCtx, error) {
	var found frameCtx
	err := poll(ctx, what, func() (bool, error) {
		tab.mu.Lock()
		var all []frameCtx
		for s, ids := range tab.contexts {
			for id := range ids {
				all = append(all, frameCtx{s, id})
			}
		}
		tab.mu.Unlock()
		for _, c := range all {
			if v, err := tab.eval(ctx, c, probe); err == nil && v == true {
				found = c
				return true, nil
			}
		}
		return false, nil
	})
	return found, err
}

// waitFor polls expr in c until it returns true.
func (tab *cdpTab) waitFor(ctx context.Context, c frameCtx, what, expr string) error {
	return poll(ctx, what, func() (bool, error) {
		v, err := tab.eval(ctx, c, expr)
		return v == true, err
	})
}

// screenshot saves the tab as a PNG in the test's artefact directory.
func (tab *cdpTab) screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	res, err := tab.b.call(ctx, tab.session, "Page.captureScreenshot", map[string]any{"format": "png"})
	if err != nil {
		t.Fatal(err)
	}
	var shot struct{ Data string }
	json.Unmarshal(res, &shot)
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil || len(png) < 1000 {
		t.Fatalf("screenshot: %d bytes, %v", len(png), err)
	}
	path := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (go test -artifacts keeps it)", path)
}

var pageURLRe = regexp.MustCompile(`MCP Apps page: (http://127\.0\.0\.1:\d+/[0-9a-f]+/)`)

// TestAppsLevel2Browser: `acpd run --ui` with the MCP Apps servers from
// npm serves its host page; headless Chromium opens it, the get-time view
// renders its result, its own tool call reaches the server, a request to
// an undeclared origin is blocked, it cannot call another server's tool or
// reach the host page, open-link waits for the user, its ui/message
// becomes the session's user message and a turn, and Finish ends the run.
func TestAppsLevel2Browser(t *testing.T) {
	t.Parallel()
	chromium := requireChromium(t)
	iso, project, _, mcpConfig := appsRunSetup(t, "", testpeers.BasicApp, testpeers.MonitorApp)
	// The model: get-time, then an answer (also the answer of the message's
	// turn, which holds the same one tool result).
	model := newFakeProvider(t, "openai", "", nil, fakeStep{callID: "call_time", tool: "mcp__basic__get-time", args: `{}`}, fakeStep{text: "It is the time the app shows."})

	// The undeclared origin the view tries to reach.
	var probeHits atomic.Int32
	probe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		probeHits.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		io.WriteString(w, "reached")
	}))
	defer probe.Close()

	bin := acpdBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*(*flagReplyWait))
	defer cancel()
	// get-time is allowed by a rule; the view's message is left to the
	// user (--approve ask), who is asked on the page (stdin is no terminal).
	policy := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(policy, []byte("[[permissions.rules]]\naction = \"allow\"\ntool = \"Get Time (basic)\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, bin, "run", "--ui", "--policy", policy, "--output", "stream-json", "--cwd", project,
		"--mcp-config", mcpConfig, "--model", "openai/gpt-test", "What time is it?")
	cmd.Env = append(iso.Env(), "BROWSER=none", "ACPD_DISCOVER=0", "OPENAI_API_KEY=sk-apps", "OPENAI_BASE_URL="+model.srv.URL+"/v1")
	var stdout, stderr syncbuf.Buffer
	cmd.Stdout = &stdout
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait(); pw.Close() }()
	urlc := make(chan string, 1)
	var scan sync.WaitGroup
	scan.Add(1)
	go func() {
		defer scan.Done()
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			fmt.Fprintln(&stderr, sc.Text())
			if m := pageURLRe.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case urlc <- m[1]:
				default:
				}
			}
		}
		io.Copy(io.Discard, pr)
	}()
	defer func() {
		cmd.Process.Kill()
		<-exited
		scan.Wait()
		if t.Failed() {
			var out []string
			for _, l := range strings.Split(stdout.String(), "\n") {
				if len(l) > 2000 {
					l = l[:2000] + "…"
				}
				out = append(out, l)
			}
			t.Logf("acpd run stderr:\n%s\nstdout:\n%s", stderr.String(), strings.Join(out, "\n"))
		}
	}()
	var page string
	select {
	case page = <-urlc:
	case err := <-exited:
		exited <- err
		t.Fatalf("acpd run exited (%v) before serving its page", err)
	case <-ctx.Done():
		t.Fatal("no page URL on stderr")
	}
	pu, _ := url.Parse(page)

	// Without the secret the page's server answers nothing, and it listens
	// on loopback only.
	for _, bad := range []string{"http://" + pu.Host + "/", "http://" + pu.Host + "/host.js", "http://" + pu.Host + "/events"} {
		resp, err := http.Get(bad)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 404 || strings.Contains(string(b), "acpd") {
			t.Errorf("GET %s without the secret: %d %q", bad, resp.StatusCode, b)
		}
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() {
				if c, err := net.DialTimeout("tcp", net.JoinHostPort(n.IP.String(), pu.Port()), time.Second); err == nil {
					c.Close()
					t.Errorf("the page's port answers on %s", n.IP)
				}
			}
		}
	}

	tab := openTab(t, ctx, chromium)
	if _, err := tab.b.call(ctx, tab.session, "Page.navigate", map[string]any{"url": page}); err != nil {
		t.Fatal(err)
	}
	top, err := tab.find(ctx, "the host page", `location.href === `+jsString(page))
	if err != nil {
		t.Fatal(err)
	}
	app, err := tab.find(ctx, "the get-time view", `!!document.getElementById("get-time-btn")`)
	if err != nil {
		t.Fatal(err)
	}
	// The view got the tool's result (tool-input, then tool-result).
	isTimeJS := `(() => { const t = document.getElementById("server-time").textContent; return /^\d{4}-\d\d-\d\dT/.test(t) ? t : false })()`
	if err := tab.waitFor(ctx, app, "the view showing the result", `!!`+isTimeJS); err != nil {
		t.Fatal(err)
	}
	first, _ := tab.eval(ctx, app, isTimeJS)
	if v, _ := tab.eval(ctx, app, `location.href`); v != "about:srcdoc" {
		t.Errorf("the view runs at %v, want about:srcdoc inside the proxy", v)
	}
	if v, _ := tab.eval(ctx, app, `origin`); v != "null" {
		t.Errorf("the view's origin is %v, want an opaque one", v)
	}
	if v, _ := tab.eval(ctx, app, `document.referrer`); v != "" {
		t.Errorf("the view sees the referrer %v (the secret paths must not leak)", v)
	}
	tab.screenshot(t, ctx, "apps-level2-get-time.png")

	// Host styles: the page's palette for its theme reaches the view (its
	// SDK applies hostContext.styles.variables), and a theme or size
	// change is sent as host-context-changed.
	bgJS := `getComputedStyle(document.documentElement).getPropertyValue("--color-background-primary").trim()`
	if err := tab.waitFor(ctx, app, "the light host styles", bgJS+` === "#ffffff"`); err != nil {
		v, _ := tab.eval(ctx, app, bgJS)
		t.Fatalf("%v (--color-background-primary %q)", err, v)
	}
	if _, err := tab.eval(ctx, app, `window.__changed = []; addEventListener("message", (e) => { if (e.data && e.data.method === "ui/notifications/host-context-changed") __changed.push(e.data.params) }); true`); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.b.call(ctx, tab.session, "Emulation.setEmulatedMedia", map[string]any{"features": []any{map[string]any{"name": "prefers-color-scheme", "value": "dark"}}}); err != nil {
		t.Fatal(err)
	}
	if err := tab.waitFor(ctx, app, "the dark host styles", bgJS+` === "#1e2229" && __changed.some((p) => p.theme === "dark" && p.styles && p.styles.variables["--font-sans"])`); err != nil {
		t.Fatal(err)
	}
	if _, err := tab.b.call(ctx, tab.session, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 640, "height": 900, "deviceScaleFactor": 1, "mobile": false}); err != nil {
		t.Fatal(err)
	}
	if err := tab.waitFor(ctx, app, "the new container size", `__changed.some((p) => p.containerDimensions && p.containerDimensions.width > 0 && p.containerDimensions.width <= 640)`); err != nil {
		t.Fatal(err)
	}
	tab.screenshot(t, ctx, "apps-level2-dark.png")

	// The view's own tool call reaches the server: a new time.
	if _, err := tab.eval(ctx, app, `document.getElementById("get-time-btn").click()`); err != nil {
		t.Fatal(err)
	}
	if err := tab.waitFor(ctx, app, "a new server time", `(() => { const t = `+isTimeJS+`; return t && t !== `+jsString(fmt.Sprint(first))+` })()`); err != nil {
		t.Fatal(err)
	}
	if err := tab.waitFor(ctx, top, "the page listing the view's call", `document.querySelector(".calls").textContent.includes("tools/call get-time → ok")`); err != nil {
		t.Fatal(err)
	}

	// Undeclared origins are blocked: the probe server, the host page.
	for _, expr := range []string{
		`fetch(` + jsString(probe.URL+"/fetch") + `).then(() => "reached", () => "blocked")`,
		`new Promise((res) => { const i = new Image(); i.onload = () => res("reached"); i.onerror = () => res("blocked"); i.src = ` + jsString(probe.URL+"/img.png") + `; })`,
		`fetch(` + jsString(page) + `).then(() => "reached", () => "blocked")`,
		`(() => { try { return top.document.title, "reached" } catch (e) { return "blocked" } })()`,
	} {
		if v, err := tab.eval(ctx, app, expr); err != nil || v != "blocked" {
			t.Errorf("%s: %v %v", expr, v, err)
		}
	}
	if n := probeHits.Load(); n != 0 {
		t.Errorf("the undeclared origin got %d requests", n)
	}

	// Raw requests of the view: another server's tool is refused; display
	// modes answer what was granted.
	rawCall := func(id, method string, params any) map[string]any {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		v, err := tab.eval(ctx, app, `new Promise((res) => {
			addEventListener("message", (e) => { if (e.data && e.data.id === `+jsString(id)+`) res(JSON.stringify(e.data)) });
			parent.postMessage(`+string(b)+`, "*");
		})`)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		var out map[string]any
		json.Unmarshal([]byte(fmt.Sprint(v)), &out)
		return out
	}
	if r := rawCall("probe-other", "tools/call", map[string]any{"name": "poll-system-stats", "arguments": map[string]any{}}); r["error"] == nil {
		t.Errorf("the basic view called the monitor's tool: %v", r)
	}
	r := rawCall("probe-read", "resources/read", map[string]any{"uri": "ui://get-time/mcp-app.html"})
	if res, _ := r["result"].(map[string]any); res == nil || !strings.Contains(fmt.Sprint(res["contents"]), "text/html;profile=mcp-app") {
		t.Errorf("resources/read of its own server: %.300v", r)
	}
	if r := rawCall("probe-pip", "ui/request-display-mode", map[string]any{"mode": "pip"}); fmt.Sprint(r["result"]) != "map[mode:inline]" {
		t.Errorf("pip: %v, want the inline mode granted", r)
	}
	if r := rawCall("probe-full", "ui/request-display-mode", map[string]any{"mode": "fullscreen"}); fmt.Sprint(r["result"]) != "map[mode:fullscreen]" {
		t.Errorf("fullscreen: %v", r)
	}
	rawCall("probe-inline", "ui/request-display-mode", map[string]any{"mode": "inline"})
	if r := rawCall("probe-context", "ui/update-model-context", map[string]any{"content": []any{map[string]any{"type": "text", "text": appContext}}}); r["error"] != nil {
		t.Errorf("ui/update-model-context: %v", r)
	}

	// ui/open-link waits for the user: refused on the page, nothing opens.
	if _, err := tab.eval(ctx, app, `document.getElementById("open-link-btn").click()`); err != nil {
		t.Fatal(err)
	}
	if err := tab.waitFor(ctx, top, "the link confirmation", `document.getElementById("confirm").open`); err != nil {
		t.Fatal(err)
	}
	tab.screenshot(t, ctx, "apps-level2-open-link.png")
	if _, err := tab.eval(ctx, top, `document.getElementById("confirm-no").click()`); err != nil {
		t.Fatal(err)
	}
	if err := tab.waitFor(ctx, top, "the refused link", `document.querySelector(".calls").textContent.includes("→ refused")`); err != nil {
		t.Fatal(err)
	}

	// ui/download-file: offered by the browser after the user confirms its
	// name, size and type on the page; cancelled, too large or linked
	// files are refused; acpd writes none of them.
	downloads := t.TempDir()
	if _, err := tab.b.call(ctx, "", "Browser.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": downloads}); err != nil {
		t.Fatal(err)
	}
	const csv = "a,b\n1,2\n"
	askDownload := func(id, contentsJS string) {
		t.Helper()
		if _, err := tab.eval(ctx, app, `(() => { window.__replies = window.__replies || {}; __replies[`+jsString(id)+`] = new Promise((res) => {
			addEventListener("message", (e) => { if (e.data && e.data.id === `+jsString(id)+`) res(JSON.stringify(e.data)) });
		}); parent.postMessage({jsonrpc: "2.0", id: `+jsString(id)+`, method: "ui/download-file", params: {contents: `+contentsJS+`}}, "*"); return true })()`); err != nil {
			t.Fatal(err)
		}
	}
	reply := func(id string) string {
		t.Helper()
		v, err := tab.eval(ctx, app, `__replies[`+jsString(id)+`]`)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprint(v)
	}
	csvJS := `[{type: "resource", resource: {uri: "file:///reports/q3%20report.csv", mimeType: "text/csv", text: ` + jsString(csv) + `}}]`
	askDownload("dl-no", csvJS)
	if err := tab.waitFor(ctx, top, "the download confirmation", `document.getElementById("confirm").open && document.getElementById("confirm-url").textContent === "q3 report.csv · 8 B · text/csv"`); err != nil {
		v, _ := tab.eval(ctx, top, `document.getElementById("confirm-url").textContent`)
		t.Fatalf("%v (the dialog shows %q)", err, v)
	}
	tab.eval(ctx, top, `document.getElementById("confirm-no").click()`)
	if r := reply("dl-no"); !strings.Contains(r, `"isError":true`) {
		t.Errorf("a cancelled download answered %s", r)
	}
	askDownload("dl-yes", csvJS)
	if err := tab.waitFor(ctx, top, "the second download confirmation", `document.getElementById("confirm").open`); err != nil {
		t.Fatal(err)
	}
	tab.screenshot(t, ctx, "apps-level2-download.png")
	tab.eval(ctx, top, `document.getElementById("confirm-yes").click()`)
	if r := reply("dl-yes"); strings.Contains(r, "isError") || !strings.Contains(r, `"result":{}`) {
		t.Errorf("a confirmed download answered %s", r)
	}
	got := ""
	for deadline := time.Now().Add(*flagReplyWait); got == "" && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if b, err := os.ReadFile(filepath.Join(downloads, "q3 report.csv")); err == nil && len(b) == len(csv) {
			got = string(b)
		}
	}
	if got != csv {
		entries, _ := os.ReadDir(downloads)
		t.Errorf("the browser's download: %q, want %q (the directory holds %v)", got, csv, entries)
	}
	for _, c := range []struct{ id, contents string }{
		{"dl-big", `[{type: "resource", resource: {uri: "big.bin", blob: "A".repeat(14 * 1024 * 1024)}}]`},
		{"dl-link", `[{type: "resource_link", name: "x", uri: "https://example.com/x"}]`},
	} {
		askDownload(c.id, c.contents)
		if r := reply(c.id); !strings.Contains(r, `"isError":true`) {
			t.Errorf("%s answered %s", c.id, r)
		}
	}
	if open, _ := tab.eval(ctx, top, `document.getElementById("confirm").open`); open != false {
		t.Errorf("a refused download asked the user")
	}
	if _, err := os.Stat(filepath.Join(project, "q3 report.csv")); err == nil {
		t.Errorf("acpd wrote the download into the project")
	}

	// ui/message: asked on the page; refused, nothing reaches the session;
	// sent, a user message of the session, answered by a turn.
	sendMessage := func(text string) {
		t.Helper()
		if _, err := tab.eval(ctx, app, `document.getElementById("message-text").value = `+jsString(text)+`; document.getElementById("send-message-btn").click()`); err != nil {
			t.Fatal(err)
		}
		if err := tab.waitFor(ctx, top, "the message's question", `document.getElementById("confirm").open && document.getElementById("confirm-url").textContent.includes(`+jsString(text)+`) && document.getElementById("confirm-yes").textContent === "Send"`); err != nil {
			t.Fatal(err)
		}
	}
	const refused = "Do not send this one"
	sendMessage(refused)
	tab.eval(ctx, top, `document.getElementById("confirm-no").click()`)
	if err := tab.waitFor(ctx, top, "the refused message", `document.querySelector(".calls").textContent.includes("ui/message → refused here") && /ui\/message → .*not allow/.test(document.querySelector(".calls").textContent)`); err != nil {
		v, _ := tab.eval(ctx, top, `document.querySelector(".calls").textContent`)
		t.Fatalf("%v (the notes: %v)", err, v)
	}
	sendMessage(appMessage)
	tab.screenshot(t, ctx, "apps-level2-message-consent.png")
	tab.eval(ctx, top, `document.getElementById("confirm-yes").click()`)
	if err := tab.waitFor(ctx, top, "the message's turn", `document.querySelector(".calls").textContent.includes("ui/message → answered")`); err != nil {
		t.Fatal(err)
	}
	if err := tab.waitFor(ctx, top, "the answer on the page", `document.querySelectorAll(".msg.agent").length === 2`); err != nil {
		t.Fatal(err)
	}
	tab.screenshot(t, ctx, "apps-level2-after-message.png")

	// Finish: the views are torn down, the run ends.
	if _, err := tab.eval(ctx, top, `document.getElementById("finish").click()`); err != nil {
		t.Fatal(err)
	}
	var runErr error
	select {
	case runErr = <-exited:
		exited <- runErr
	case <-ctx.Done():
		t.Fatal("acpd run did not end after Finish")
	}
	if runErr != nil {
		t.Fatalf("acpd run: %v", runErr)
	}
	if v, _ := tab.eval(ctx, top, `document.querySelector(".view .closed") ? document.querySelector(".view .closed").textContent : ""`); v != "The app was closed." {
		t.Errorf("the view after Finish: %q", v)
	}
	// The view heard of its teardown (its onteardown logs this).
	tab.mu.Lock()
	console := strings.Join(tab.console, "\n")
	tab.mu.Unlock()
	if !strings.Contains(console, "App is being torn down") {
		t.Errorf("the view was not torn down; its console:\n%s", console)
	}

	// The session: the view's message as the user's, its answer.
	var sawView, sawMessage, sawRefused bool
	var said strings.Builder
	for _, line := range strings.Split(stdout.String(), "\n") {
		var ev struct {
			Update map[string]any `json:"update"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil || ev.Update == nil {
			continue
		}
		u := ev.Update
		content, _ := u["content"].(map[string]any)
		text, _ := content["text"].(string)
		switch u["sessionUpdate"] {
		case "tool_call_update":
			meta, _ := u["_meta"].(map[string]any)
			ui, _ := meta["io.modelcontextprotocol/ui"].(map[string]any)
			sawView = sawView || ui["html"] != nil
		case "user_message_chunk":
			sawMessage = sawMessage || text == appMessage
			sawRefused = sawRefused || text == refused
		case "agent_message_chunk":
			said.WriteString(text)
		}
	}
	if sawRefused {
		t.Errorf("the refused message reached the session")
	}
	if answers := strings.Count(said.String(), "It is the time the app shows."); !sawView || !sawMessage || answers != 2 {
		t.Errorf("stream-json: view %v, the app's user message %v, %d answers (want the prompt's and the message's)", sawView, sawMessage, answers)
	}
	// The model got the view's message as the user's, and its context.
	reqs := model.requests()
	if len(reqs) != 3 {
		t.Fatalf("the model got %d requests, want 3 (the message's turn last)", len(reqs))
	}
	last := string(reqs[2].Body)
	for _, want := range []string{appMessage, appContext} {
		if !strings.Contains(last, want) {
			t.Errorf("the message's model request lacks %q", want)
		}
	}
	if strings.Contains(string(reqs[0].Body), "poll-system-stats") {
		t.Errorf("the model was offered the app-only tool")
	}
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
