package uihost

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"acpd/acp"
	"acpd/acp/jsonrpc"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// relayed is one request the host relayed.
type relayed struct {
	method string
	params map[string]any
}

// started returns a started host whose relay records requests.
func started(t *testing.T) (*Host, string, *[]relayed, *sync.Mutex) {
	t.Helper()
	var mu sync.Mutex
	var got []relayed
	h := New(Options{Name: "acpd test", Version: "1", Relay: func(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
		mu.Lock()
		got = append(got, relayed{method, params})
		mu.Unlock()
		if method == MethodReadResource {
			return nil, &jsonrpc.Error{Code: -32602, Message: "no such resource"}
		}
		return json.RawMessage(`{"ok":true}`), nil
	}})
	return h, startHost(t, h), &got, &mu
}

// startHost starts h, closed when the test ends, and returns its page's URL.
func startHost(t *testing.T, h *Host) string {
	t.Helper()
	u, err := h.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.Close(ctx)
	})
	return u
}

// viewUpdate is a tool call update opening a view, as acpd's agent sends it.
func viewUpdate(csp map[string]any) acp.SessionNotification {
	ui := map[string]any{"server": "basic", "tool": "get-time", "resourceUri": "ui://get-time/mcp-app.html", "mimeType": MIMEType,
		"html": "<!DOCTYPE html><html><head><title>t</title></head><body>app</body></html>", "toolInput": map[string]any{"tz": "UTC"}}
	if csp != nil {
		ui["ui"] = map[string]any{"csp": csp, "prefersBorder": false}
	}
	return acp.SessionNotification{SessionID: "s_1", Update: acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: "call_time", Meta: map[string]any{Extension: ui}}}}
}

// stream reads the page's event stream.
type stream struct {
	resp *http.Response
	sc   *bufio.Scanner
}

func openStream(t *testing.T, pageURL string) *stream {
	t.Helper()
	resp, err := http.Get(pageURL + "events")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	t.Cleanup(func() { resp.Body.Close() })
	return &stream{resp, bufio.NewScanner(resp.Body)}
}

// next returns the next event of type typ, skipping others.
func (s *stream) next(t *testing.T, typ string) map[string]any {
	t.Helper()
	for {
		ev, ok := nextData(t, s)
		if !ok {
			t.Fatalf("the stream ended before a %q event: %v", typ, s.sc.Err())
		}
		if ev["type"] == typ {
			return ev
		}
	}
}

func TestLoopbackOnlyAndSecret(t *testing.T) {
	h, page, _, _ := started(t)
	u, _ := url.Parse(page)
	if host, _, _ := net.SplitHostPort(u.Host); host != "127.0.0.1" {
		t.Fatalf("the page is on %s, want 127.0.0.1", u.Host)
	}
	h.mu.Lock()
	sand := h.sandURL
	h.mu.Unlock()
	if !strings.HasPrefix(sand, "http://127.0.0.1:") || sand == "http://"+u.Host {
		t.Fatalf("sandbox origin %s: want another 127.0.0.1 port than %s", sand, u.Host)
	}
	for _, ip := range nonLoopback(t) {
		_, port, _ := net.SplitHostPort(u.Host)
		if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, port), time.Second); err == nil {
			c.Close()
			t.Errorf("the page's port answers on %s", ip)
		}
	}
	secret := strings.Trim(u.Path, "/")
	get := func(target, host string) int {
		req, _ := http.NewRequest("GET", target, nil)
		if host != "" {
			req.Host = host
		}
		return status(t, req)
	}
	if c := get(page, ""); c != 200 {
		t.Fatalf("the page with its secret: %d", c)
	}
	for _, bad := range []string{"http://" + u.Host + "/", "http://" + u.Host + "/host.js", "http://" + u.Host + "/" + secret[:len(secret)-1] + "x/", "http://" + u.Host + "/events", sand + "/" + secret + "/proxy/x"} {
		if c := get(bad, ""); c != 404 {
			t.Errorf("GET %s: %d, want 404", bad, c)
		}
	}
	if c := get(page, "localhost:"+u.Port()); c != 404 {
		t.Errorf("a rebinding Host header got %d, want 404", c)
	}
	resp, err := http.Post(page+"finish", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("a POST without the page's Origin: %d, want 403", resp.StatusCode)
	}
	select {
	case <-h.Finished():
		t.Error("a forged finish was accepted")
	default:
	}
}

// nonLoopback returns the machine's IPv4 addresses that are not loopback.
func nonLoopback(t *testing.T) []string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Logf("no interface addresses: %v", err)
		return nil
	}
	var out []string
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			out = append(out, n.IP.String())
		}
	}
	return out
}

func TestViewEventsCSPAndRelay(t *testing.T) {
	h, page, got, mu := started(t)
	s := openStream(t, page)
	hello := s.next(t, "hello")
	sandbox, _ := hello["sandbox"].(string)
	h.Update(acp.SessionNotification{SessionID: "s_1", Update: acp.SessionUpdate{ToolCall: &acp.ToolCall{ToolCallID: "call_time", Title: "get-time (basic)", Status: acp.ToolCallStatusPending}}})
	h.Update(viewUpdate(map[string]any{"connectDomains": []any{"https://api.example.com", "https://x.test; script-src *", "'unsafe-eval'"}}))
	if tool := s.next(t, "tool")["tool"].(map[string]any); tool["title"] != "get-time (basic)" {
		t.Fatalf("tool event %v", tool)
	}
	v := s.next(t, "view")
	id := v["view"].(string)
	if v["toolCallId"] != "call_time" || v["server"] != "basic" || v["prefersBorder"] != false {
		t.Fatalf("view event %v", v)
	}
	if in, _ := json.Marshal(v["toolInput"]); string(in) != `{"tz":"UTC"}` {
		t.Fatalf("toolInput %s", in)
	}

	// The document, with the policy inside.
	resp, err := http.Get(page + "view/" + id)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		HTML, Sandbox string
	}
	json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if !strings.Contains(doc.HTML, `<head><meta http-equiv="Content-Security-Policy" content="default-src 'none';`) || strings.Contains(doc.Sandbox, "allow-same-origin") {
		t.Fatalf("view document: sandbox %q html %q", doc.Sandbox, doc.HTML)
	}
	// The proxy, under the view's policy: only the valid declared origin.
	resp, err = http.Get(sandbox + id)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	csp := resp.Header.Get("Content-Security-Policy")
	if resp.StatusCode != 200 || !strings.Contains(csp, "connect-src https://api.example.com;") || strings.Contains(csp, "x.test") || strings.Contains(csp, "unsafe-eval") {
		t.Fatalf("proxy %d, CSP %q", resp.StatusCode, csp)
	}
	if !strings.Contains(csp, "frame-ancestors "+strings.TrimSuffix(strings.SplitAfterN(page, "/", 4)[2], "/")) && !strings.Contains(csp, "frame-ancestors http://127.0.0.1:") {
		t.Errorf("proxy CSP without frame-ancestors: %q", csp)
	}

	// A relayed call: the view's own session and tool call, whatever the
	// page says, and only the method's own params.
	call := func(body string) map[string]any {
		u, _ := url.Parse(page)
		req, _ := http.NewRequest("POST", page+"call", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "http://"+u.Host)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		json.NewDecoder(resp.Body).Decode(&out)
		return out
	}
	out := call(`{"view":"` + id + `","method":"tools/call","params":{"name":"get-time","arguments":{},"sessionId":"s_other","toolCallId":"call_other","server":"monitor"}}`)
	if out["result"] == nil {
		t.Fatalf("tools/call: %v", out)
	}
	mu.Lock()
	last := (*got)[len(*got)-1]
	mu.Unlock()
	if last.method != MethodCallTool || last.params["sessionId"] != acp.SessionID("s_1") || last.params["toolCallId"] != acp.ToolCallID("call_time") || last.params["server"] != nil {
		t.Fatalf("relayed %s %v", last.method, last.params)
	}
	if out := call(`{"view":"` + id + `","method":"resources/read","params":{"uri":"ui://x"}}`); out["error"] == nil {
		t.Fatalf("a relay error was not passed on: %v", out)
	}
	for _, bad := range []string{
		`{"view":"nope","method":"tools/call","params":{}}`,
		`{"view":"` + id + `","method":"sampling/createMessage","params":{}}`,
		`{"view":"` + id + `","method":"_acpd/app/tools/call","params":{}}`,
	} {
		if out := call(bad); out["error"] == nil {
			t.Errorf("%s was relayed: %v", bad, out)
		}
	}

	// The final update's result, then the run's end: the page confirms.
	status := acp.ToolCallStatusCompleted
	h.Update(acp.SessionNotification{SessionID: "s_1", Update: acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: "call_time", Status: &status,
		Meta: map[string]any{Extension: map[string]any{"toolResult": map[string]any{"content": []any{}, "structuredContent": map[string]any{"time": "now"}}}}}}})
	if r := s.next(t, "result"); r["view"] != id {
		t.Fatalf("result event %v", r)
	}
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		done <- h.Close(ctx)
	}()
	s.next(t, "end")
	u, _ := url.Parse(page)
	req, _ := http.NewRequest("POST", page+"torndown", strings.NewReader("{}"))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "http://"+u.Host)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestCancelledAndMessages(t *testing.T) {
	h, page, _, _ := started(t)
	h.Update(viewUpdate(nil))
	for _, c := range []string{"Hel", "lo"} {
		h.Update(acp.SessionNotification{SessionID: "s_1", Update: acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: c}}}}})
	}
	failed := acp.ToolCallStatusFailed
	h.Update(acp.SessionNotification{SessionID: "s_1", Update: acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: "call_time", Status: &failed,
		Meta: map[string]any{Extension: map[string]any{"toolCancelled": map[string]any{"reason": "cancelled by the user"}}}}}})
	// A page connecting late replays all of it, the chunks as one message.
	s := openStream(t, page)
	if m := s.next(t, "message"); m["text"] != "Hello" || m["role"] != "agent" {
		t.Fatalf("message %v", m)
	}
	if c := s.next(t, "cancelled"); c["reason"] != "cancelled by the user" {
		t.Fatalf("cancelled %v", c)
	}
	// Without a declared policy: the restrictive default.
	h.mu.Lock()
	var v *view
	for _, x := range h.views {
		v = x
	}
	h.mu.Unlock()
	p := v.csp.policy(h.log)
	for _, want := range []string{"default-src 'none'", "connect-src 'none'", "frame-src 'none'", "object-src 'none'", "base-uri 'self'"} {
		if !strings.Contains(p, want) {
			t.Errorf("default policy %q lacks %q", p, want)
		}
	}
}

// TestCloseCancelsRelays: Close ends a relayed request still waiting for
// the agent (its context ends) and returns once its handler did.
func TestCloseCancelsRelays(t *testing.T) {
	entered := make(chan struct{})
	h := New(Options{Relay: func(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
		close(entered)
		<-ctx.Done()
		return nil, ctx.Err()
	}})
	page, err := h.Start()
	if err != nil {
		t.Fatal(err)
	}
	h.Update(viewUpdate(nil))
	h.mu.Lock()
	var id string
	for k := range h.views {
		id = k
	}
	h.mu.Unlock()
	u, _ := url.Parse(page)
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest("POST", page+"call", strings.NewReader(`{"view":"`+id+`","method":"ui/message","params":{}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Origin", "http://"+u.Host)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
	<-done
	if _, err := h.Start(); err == nil {
		t.Error("a closed host started again")
	}
}

// TestAbandoned: a page that went away and did not come back counts as
// closed; one that reconnects in time does not.
func TestAbandoned(t *testing.T) {
	defer func(g time.Duration) { abandonGrace = g }(abandonGrace)
	abandonGrace = 300 * time.Millisecond
	h, page, _, _ := started(t)
	s := openStream(t, page)
	s.next(t, "hello")
	s.resp.Body.Close()
	s = openStream(t, page) // a reload
	s.next(t, "hello")
	select {
	case <-h.Abandoned():
		t.Fatal("a reloaded page counted as closed")
	case <-time.After(2 * abandonGrace):
	}
	s.resp.Body.Close()
	select {
	case <-h.Abandoned():
	case <-time.After(10 * time.Second):
		t.Fatal("a closed page was not noticed")
	}
}

// TestPartialInputs: a view that came without its input gets each later
// rawInput of its call as input-partial, in order, before the outcome
// (the page sends the last as tool-input before the result); the
// rawInput of the update that opened it is the first.
func TestPartialInputs(t *testing.T) {
	h, page, _, _ := started(t)
	s := openStream(t, page)
	open := viewUpdate(nil)
	delete(open.Update.ToolCallUpdate.Meta[Extension].(map[string]any), "toolInput")
	open.Update.ToolCallUpdate.RawInput = map[string]any{"q": "t"}
	h.Update(open)
	v := s.next(t, "view")
	if _, ok := v["toolInput"]; ok {
		t.Fatalf("view event %v: want no toolInput", v)
	}
	for _, q := range []string{"ti", "tim"} {
		h.Update(acp.SessionNotification{SessionID: "s_1", Update: acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: "call_time", RawInput: map[string]any{"q": q}}}})
	}
	h.Update(acp.SessionNotification{SessionID: "s_1", Update: acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: "call_time",
		Meta: map[string]any{Extension: map[string]any{"toolResult": map[string]any{"content": []any{}}}}}}})
	var got []string
	for {
		line, ok := nextData(t, s)
		if !ok {
			t.Fatal("the stream ended")
		}
		switch line["type"] {
		case "input-partial":
			if line["view"] != v["view"] {
				t.Fatalf("input-partial of view %v, want %v", line["view"], v["view"])
			}
			got = append(got, line["toolInput"].(map[string]any)["q"].(string))
			continue
		case "result":
		default:
			continue
		}
		break
	}
	if strings.Join(got, ",") != "t,ti,tim" {
		t.Fatalf("partial inputs %v, want t,ti,tim before the result", got)
	}
}

// nextData returns the stream's next event.
func nextData(t *testing.T, s *stream) (map[string]any, bool) {
	t.Helper()
	for s.sc.Scan() {
		line, ok := strings.CutPrefix(s.sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		return ev, true
	}
	return nil, false
}

// pagePost POSTs body to the page's path as the page does and returns the
// answer's status.
func pagePost(t *testing.T, page, path, body string) int {
	t.Helper()
	u, _ := url.Parse(page)
	req, _ := http.NewRequest("POST", page+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", "http://"+u.Host)
	return status(t, req)
}

// status sends req and returns its answer's status.
func status(t *testing.T, req *http.Request) int {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestConsent: a view's question is asked on a connected page beside its
// view (and again on a page connecting while it is open), answered once by
// the page; without a page or a view it is not asked; an ended context
// withdraws it.
func TestConsent(t *testing.T) {
	h, page, _, _ := started(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.Update(viewUpdate(nil))
	if _, err := h.Consent(ctx, "call_time", "hi"); err != ErrNotAsked {
		t.Fatalf("without a page: %v, want ErrNotAsked", err)
	}
	s := openStream(t, page)
	view := s.next(t, "view")["view"]
	if _, err := h.Consent(ctx, "call_other", "hi"); err != ErrNotAsked {
		t.Fatalf("a call without a view: %v, want ErrNotAsked", err)
	}
	type answer struct {
		yes bool
		err error
	}
	ask := func(text string) chan answer {
		c := make(chan answer, 1)
		go func() {
			yes, err := h.Consent(ctx, "call_time", text)
			c <- answer{yes, err}
		}()
		return c
	}
	for _, allow := range []bool{true, false} {
		got := ask("Show the time again")
		q := s.next(t, "consent")
		if q["view"] != view || q["text"] != "Show the time again" {
			t.Fatalf("question %v", q)
		}
		// A page that connects now is asked too.
		late := openStream(t, page)
		if lq := late.next(t, "consent"); lq["id"] != q["id"] {
			t.Fatalf("the late page got %v, want %v", lq, q)
		}
		late.resp.Body.Close()
		if c := pagePost(t, page, "answer", fmt.Sprintf(`{"id":%q,"allow":%v}`, q["id"], allow)); c != 204 {
			t.Fatalf("answer: %d", c)
		}
		if a := <-got; a.err != nil || a.yes != allow {
			t.Fatalf("Consent = %v, %v; want %v", a.yes, a.err, allow)
		}
		if d := s.next(t, "consent-done"); d["id"] != q["id"] {
			t.Fatalf("consent-done %v", d)
		}
		if c := pagePost(t, page, "answer", fmt.Sprintf(`{"id":%q,"allow":true}`, q["id"])); c != 404 {
			t.Fatalf("a second answer: %d, want 404", c)
		}
	}
	qctx, qcancel := context.WithCancel(ctx)
	got := make(chan error, 1)
	go func() {
		_, err := h.Consent(qctx, "call_time", "x")
		got <- err
	}()
	q := s.next(t, "consent")
	qcancel()
	if err := <-got; err != context.Canceled {
		t.Fatalf("a withdrawn question: %v", err)
	}
	if d := s.next(t, "consent-done"); d["id"] != q["id"] {
		t.Fatalf("consent-done %v", d)
	}
}
