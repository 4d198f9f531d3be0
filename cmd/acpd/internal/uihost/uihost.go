// Package uihost is acpd's own MCP Apps host (extension
// io.modelcontextprotocol/ui): a page in the user's browser that shows a
// session's conversation and renders the MCP App views its tool calls carry
// (docs/mcp-apps.md). It knows no agent: the caller feeds it the session's
// updates (Update) and relays the views' requests to the agent (Options.Relay).
//
// # Origins and the secret
//
// Start listens on two loopback ports, never on another address: the host
// origin serves the page, its script, its event stream and its calls; the
// sandbox origin serves the sandbox proxy the page frames, one document per
// view, with the view's Content-Security-Policy as an HTTP header, so the
// view (loaded by the proxy into an inner frame without allow-same-origin)
// inherits it. Each origin has its own random secret as the first path
// segment; a request without it, or whose Host header is not the listener's
// own 127.0.0.1:port (DNS rebinding), is answered 404 with nothing else.
// Host-origin POSTs also need their own Origin and a JSON body.
//
// # Views
//
// A view opens when a tool_call(_update)'s _meta["io.modelcontextprotocol/ui"]
// carries its html; its toolResult or toolCancelled arrives on the call's
// final update. The page answers ui/initialize (hostInfo, hostCapabilities,
// hostContext), delivers the tool input, result or cancellation, and sends
// tools/call, resources/read, ui/message, ui/update-model-context and log
// notifications here, which Relay turns into the _acpd/app/ requests of the
// view's own session and tool call: a page cannot name another. The page
// itself handles ui/open-link and ui/download-file (browser downloads; the
// host writes no file) after the user confirms in its dialog, and sends
// hostContext.styles for its theme. Consent asks the user in the same
// dialog, beside a view, whether to allow what it asks (its ui/message).
//
// # Lifetime
//
// New starts nothing. Start starts the two HTTP servers; Close tells the
// pages to tear their views down (ui/resource-teardown), waits (bounded by
// its context) until a connected page confirmed, then stops the servers and
// every goroutine the Host started.
package uihost

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"acpd/acp"
)

// The carrier of docs/mcp-apps.md.
const (
	// Extension is the MCP Apps extension's name, also the _meta key.
	Extension = "io.modelcontextprotocol/ui"
	// MIMEType is the MIME type of an MCP App view.
	MIMEType = "text/html;profile=mcp-app"
)

// The _acpd/app/ methods Relay is called with.
const (
	MethodCallTool     = "_acpd/app/tools/call"
	MethodReadResource = "_acpd/app/resources/read"
	MethodMessage      = "_acpd/app/message"
	MethodModelContext = "_acpd/app/update-model-context"
	MethodLog          = "_acpd/app/log"
)

// Bounds of what the host keeps and accepts.
const (
	maxEvents     = 4096    // retained events a (re)connecting page replays
	maxViews      = 64      // views whose html is kept
	maxBodyBytes  = 1 << 20 // one POST from the page
	subQueue      = 256     // events queued for one page before it is dropped
	maxTextChunks = 1 << 20 // bytes of one retained message event
)

// Relay sends one request of a view to the agent: method is one of the
// Method constants, params its complete params (sessionId and toolCallId of
// the view included). It returns the request's result; an error's text is
// shown to the view. It must return once ctx ends.
type Relay func(ctx context.Context, method string, params map[string]any) (json.RawMessage, error)

// Options configures a Host.
type Options struct {
	// Relay carries the views' requests to the agent. Nil refuses them.
	Relay Relay
	// Name and Version are the hostInfo of ui/initialize.
	Name, Version string
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
}

// Host is one run's MCP Apps host. Its methods are safe for concurrent use.
type Host struct {
	o   Options
	log *slog.Logger

	hostSecret, sandboxSecret string

	mu        sync.Mutex
	events    []map[string]any // retained, oldest first
	seq       int64
	tools     map[acp.ToolCallID]*toolState
	views     map[string]*view // by view id
	viewIDs   []string         // oldest first, for eviction
	byCall    map[acp.ToolCallID]string
	questions map[string]*question // open consent questions, by id
	subs      map[*sub]struct{}
	hostURL   string // http://127.0.0.1:port, once started
	sandURL   string
	closed    bool
	torndown  chan struct{} // closed when a page confirmed the teardown
	finished  chan struct{} // closed when the user pressed Finish
	finOnce   sync.Once
	tdOnce    sync.Once
	pages     int           // connected event streams
	left      chan struct{} // signalled when a page's stream ended
	idle      *time.Timer   // while no page is connected, after one was
	abandoned chan struct{} // closed abandonGrace after the last page left
	abOnce    sync.Once

	base     context.Context
	stop     context.CancelFunc
	servers  []*http.Server
	wg       sync.WaitGroup // the servers' Serve loops
	active   sync.WaitGroup // handlers running; added to under mu while !closed
	shownURL string
}

// toolState is what the page is told of one tool call.
type toolState struct {
	ID        acp.ToolCallID `json:"id"`
	SessionID acp.SessionID  `json:"sessionId"`
	Title     string         `json:"title"`
	Kind      string         `json:"kind,omitempty"`
	Status    string         `json:"status,omitempty"`
	Input     any            `json:"input,omitempty"`
	Output    string         `json:"output,omitempty"` // the text of its content, cut
	View      string         `json:"view,omitempty"`
}

// view is one MCP App view.
type view struct {
	id            string
	sessionID     acp.SessionID
	callID        acp.ToolCallID
	server        string
	tool          string
	uri           string
	html          string
	csp           resourceCSP
	perms         map[string]any
	prefersBorder *bool
}

// sub is one connected page's event stream.
type sub struct {
	ch   chan json.RawMessage
	gone chan struct{} // closed when the host dropped it
}

// New returns a Host; it serves nothing until Start.
func New(o Options) *Host {
	lg := o.Logger
	if lg == nil {
		lg = slog.Default()
	}
	if o.Name == "" {
		o.Name = "acpd"
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	base, stop := context.WithCancel(context.Background())
	return &Host{
		o: o, log: lg,
		hostSecret: randomHex(), sandboxSecret: randomHex(),
		tools: map[acp.ToolCallID]*toolState{}, views: map[string]*view{},
		byCall: map[acp.ToolCallID]string{}, questions: map[string]*question{}, subs: map[*sub]struct{}{},
		torndown: make(chan struct{}), finished: make(chan struct{}), left: make(chan struct{}, 1), abandoned: make(chan struct{}),
		base: base, stop: stop,
	}
}

func randomHex() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return hex.EncodeToString(b)
}

// Start listens on two random loopback ports (the host and the sandbox
// origin) and serves them until Close. It returns the page's URL, secret
// included. Starting twice returns the first URL.
func (h *Host) Start() (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return "", errors.New("uihost: closed")
	}
	if h.shownURL != "" {
		return h.shownURL, nil
	}
	hl, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("uihost: %w", err)
	}
	sl, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		hl.Close()
		return "", fmt.Errorf("uihost: %w", err)
	}
	h.hostURL = "http://" + hl.Addr().String()
	h.sandURL = "http://" + sl.Addr().String()
	for _, s := range []struct {
		l net.Listener
		h http.Handler
	}{{hl, h.hostHandler(hl.Addr().String())}, {sl, h.sandboxHandler(sl.Addr().String())}} {
		srv := &http.Server{
			Handler:           h.owned(s.h),
			ReadHeaderTimeout: 10 * time.Second,
			BaseContext:       func(net.Listener) context.Context { return h.base },
			ErrorLog:          slog.NewLogLogger(h.log.Handler(), slog.LevelDebug),
		}
		h.servers = append(h.servers, srv)
		h.wg.Add(1)
		go func(l net.Listener) {
			defer h.wg.Done()
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				h.log.Warn("uihost: serving", "err", err)
			}
		}(s.l)
	}
	h.shownURL = h.hostURL + "/" + h.hostSecret + "/"
	return h.shownURL, nil
}

// abandonGrace is how long no page may be connected, after one was,
// before the host counts the page as closed (a reload reconnects sooner).
var abandonGrace = 20 * time.Second

// Finished is closed when the user pressed the page's Finish button.
func (h *Host) Finished() <-chan struct{} { return h.finished }

// Abandoned is closed when, after a page had connected, none has been
// connected for a while: the user closed it without Finish.
func (h *Host) Abandoned() <-chan struct{} { return h.abandoned }

// Views reports how many views have opened.
func (h *Host) Views() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.viewIDs)
}

// Close ends the host: connected pages are told to tear their views down
// and the call waits, until ctx ends, for one of them to confirm; then the
// servers stop (open streams and relayed requests are cancelled) and every
// goroutine of the Host has returned. It is idempotent.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	pages := h.pages
	h.mu.Unlock()
	if pages > 0 {
		h.publish(map[string]any{"type": "end"}, false)
	wait:
		for {
			select {
			case <-h.torndown:
				break wait
			case <-h.left:
				h.mu.Lock()
				pages = h.pages
				h.mu.Unlock()
				if pages == 0 {
					break wait
				}
			case <-ctx.Done():
				h.log.Info("uihost: no page confirmed the views' teardown", "err", ctx.Err())
				break wait
			}
		}
	}
	h.mu.Lock()
	h.closed = true
	if h.idle != nil {
		h.idle.Stop()
		h.idle = nil
	}
	for s := range h.subs {
		delete(h.subs, s)
		close(s.gone)
	}
	servers := h.servers
	h.mu.Unlock()
	h.stop()
	var err error
	for _, s := range servers {
		err = errors.Join(err, s.Close())
	}
	h.wg.Wait()
	h.active.Wait()
	return err
}

// owned counts next's requests in h.active, so Close waits for every
// handler (http.Server.Close does not); after Close they are refused.
func (h *Host) owned(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		if h.closed {
			h.mu.Unlock()
			http.Error(w, "closed", http.StatusServiceUnavailable)
			return
		}
		h.active.Add(1)
		h.mu.Unlock()
		defer h.active.Done()
		next.ServeHTTP(w, r)
	})
}

// Update feeds one session/update of the conversation to the host. It
// never blocks on a page.
func (h *Host) Update(n acp.SessionNotification) {
	u := n.Update
	switch {
	case u.UserMessageChunk != nil:
		if t := u.UserMessageChunk.Content.Text; t != nil {
			h.message("user", t.Text)
		}
	case u.AgentMessageChunk != nil:
		if t := u.AgentMessageChunk.Content.Text; t != nil {
			h.message("agent", t.Text)
		}
	case u.ToolCall != nil:
		tc := u.ToolCall
		kind, status := string(tc.Kind), string(tc.Status)
		h.tool(n.SessionID, acp.ToolCallUpdate{ToolCallID: tc.ToolCallID, Title: &tc.Title, Kind: (*acp.ToolKind)(&kind), Status: (*acp.ToolCallStatus)(&status), RawInput: tc.RawInput, Meta: tc.Meta})
	case u.ToolCallUpdate != nil:
		h.tool(n.SessionID, *u.ToolCallUpdate)
	}
}

// message records a chunk of a message; consecutive chunks of one role
// are one retained event.
func (h *Host) message(role, text string) {
	if text == "" {
		return
	}
	h.publish(map[string]any{"type": "message", "role": role, "text": text}, true)
}

// carrier is the _meta["io.modelcontextprotocol/ui"] of a tool call update.
type carrier struct {
	Server        string          `json:"server"`
	Tool          string          `json:"tool"`
	ResourceURI   string          `json:"resourceUri"`
	MIMEType      string          `json:"mimeType"`
	HTML          string          `json:"html"`
	UI            *resourceMeta   `json:"ui"`
	ToolInput     json.RawMessage `json:"toolInput"`
	ToolResult    json.RawMessage `json:"toolResult"`
	ToolCancelled *struct {
		Reason string `json:"reason"`
	} `json:"toolCancelled"`
}

// resourceMeta is a view resource's _meta.ui.
type resourceMeta struct {
	CSP           resourceCSP    `json:"csp"`
	Permissions   map[string]any `json:"permissions"`
	PrefersBorder *bool          `json:"prefersBorder"`
}

func (h *Host) tool(sid acp.SessionID, u acp.ToolCallUpdate) {
	var c carrier
	if m, ok := u.Meta[Extension]; ok {
		b, err := json.Marshal(m)
		if err == nil {
			err = json.Unmarshal(b, &c)
		}
		if err != nil {
			h.log.Warn("uihost: an MCP App carrier that does not decode", "toolCall", u.ToolCallID, "err", err)
			c = carrier{}
		}
	}
	h.mu.Lock()
	t := h.tools[u.ToolCallID]
	if t == nil {
		t = &toolState{ID: u.ToolCallID, SessionID: sid, Title: "tool call"}
		h.tools[u.ToolCallID] = t
	}
	if u.Title != nil && *u.Title != "" {
		t.Title = *u.Title
	}
	if u.Kind != nil {
		t.Kind = string(*u.Kind)
	}
	if u.Status != nil && *u.Status != "" {
		t.Status = string(*u.Status)
	}
	if u.RawInput != nil {
		t.Input = u.RawInput
	}
	if text := contentText(u.Content); text != "" {
		t.Output = text
	}
	var opened *view
	if c.HTML != "" && (c.MIMEType == "" || c.MIMEType == MIMEType) {
		if old, ok := h.byCall[u.ToolCallID]; ok {
			h.dropViewLocked(old)
		}
		v := &view{id: randomHex()[:16], sessionID: sid, callID: u.ToolCallID, server: c.Server, tool: c.Tool, uri: c.ResourceURI, html: c.HTML}
		if c.UI != nil {
			v.csp, v.perms, v.prefersBorder = c.UI.CSP, c.UI.Permissions, c.UI.PrefersBorder
		}
		h.views[v.id] = v
		h.viewIDs = append(h.viewIDs, v.id)
		h.byCall[u.ToolCallID] = v.id
		for len(h.viewIDs) > maxViews {
			h.dropViewLocked(h.viewIDs[0])
		}
		t.View = v.id
		opened = v
	}
	viewID := h.byCall[u.ToolCallID]
	snap := *t
	h.mu.Unlock()

	h.publish(map[string]any{"type": "tool", "tool": snap}, false)
	if opened != nil {
		ev := map[string]any{"type": "view", "view": opened.id, "toolCallId": opened.callID, "server": opened.server, "tool": opened.tool}
		if len(c.ToolInput) > 0 {
			ev["toolInput"] = c.ToolInput
		}
		if opened.prefersBorder != nil {
			ev["prefersBorder"] = *opened.prefersBorder
		}
		h.publish(ev, false)
	}
	if viewID != "" && u.RawInput != nil && len(c.ToolInput) == 0 {
		h.publish(map[string]any{"type": "input-partial", "view": viewID, "toolInput": u.RawInput}, false)
	}
	switch {
	case viewID == "":
	case len(c.ToolResult) > 0:
		h.publish(map[string]any{"type": "result", "view": viewID, "toolResult": c.ToolResult}, false)
	case c.ToolCancelled != nil:
		h.publish(map[string]any{"type": "cancelled", "view": viewID, "reason": c.ToolCancelled.Reason}, false)
	}
}

// maxOutput bounds the text of a tool call's content the page shows.
const maxOutput = 2000

// contentText is the text blocks of a tool call's content, cut to
// maxOutput bytes (at a rune boundary).
func contentText(content []acp.ToolCallContent) string {
	var b strings.Builder
	for _, c := range content {
		if c.Content != nil && c.Content.Content.Text != nil {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(c.Content.Content.Text.Text)
		}
		if b.Len() > maxOutput {
			break
		}
	}
	s := b.String()
	if len(s) > maxOutput {
		s = strings.ToValidUTF8(s[:maxOutput], "") + "…"
	}
	return s
}

// dropViewLocked forgets a view's html (its events stay; the page then
// shows it as gone). h.mu is held.
func (h *Host) dropViewLocked(id string) {
	v := h.views[id]
	if v == nil {
		return
	}
	delete(h.views, id)
	if h.byCall[v.callID] == id {
		delete(h.byCall, v.callID)
	}
	for i, x := range h.viewIDs {
		if x == id {
			h.viewIDs = append(h.viewIDs[:i], h.viewIDs[i+1:]...)
			break
		}
	}
}

// publish retains an event (numbered: "seq") and queues it for every
// connected page; a page whose queue is full is dropped (its EventSource
// reconnects and replays). merge appends a message chunk to the last
// retained event when it is a message of the same role, and sends that
// whole event again: the page replaces an event of a seq it has.
func (h *Host) publish(ev map[string]any, merge bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	out, merged := ev, false
	if n := len(h.events); merge && n > 0 {
		last := h.events[n-1]
		text, _ := last["text"].(string)
		if last["type"] == "message" && last["role"] == ev["role"] && len(text) < maxTextChunks {
			last["text"] = text + ev["text"].(string)
			out, merged = last, true
		}
	}
	if !merged {
		h.seq++
		ev["seq"] = h.seq
		h.events = append(h.events, ev)
		if len(h.events) > maxEvents {
			h.events = append(h.events[:0:0], h.events[len(h.events)-maxEvents:]...)
		}
	}
	h.sendLocked(out)
}

// sendLocked queues an event for every connected page, dropping a page
// whose queue is full. h.mu is held.
func (h *Host) sendLocked(ev map[string]any) {
	b, err := json.Marshal(ev)
	if err != nil {
		h.log.Warn("uihost: encoding an event", "err", err)
		return
	}
	for s := range h.subs {
		select {
		case s.ch <- b:
		default:
			delete(h.subs, s)
			close(s.gone)
		}
	}
}

// subscribe registers a page's stream and returns the events to replay.
func (h *Host) subscribe() (*sub, []json.RawMessage, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, nil, false
	}
	s := &sub{ch: make(chan json.RawMessage, subQueue), gone: make(chan struct{})}
	h.subs[s] = struct{}{}
	h.pages++
	if h.idle != nil {
		h.idle.Stop()
		h.idle = nil
	}
	replay := make([]json.RawMessage, 0, len(h.events)+len(h.questions))
	for _, ev := range h.events {
		if b, err := json.Marshal(ev); err == nil {
			replay = append(replay, b)
		}
	}
	for _, q := range h.questions { // still open: asked again on this page
		if b, err := json.Marshal(q.ev); err == nil {
			replay = append(replay, b)
		}
	}
	return s, replay, true
}

func (h *Host) unsubscribe(s *sub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.pages--
	select {
	case h.left <- struct{}{}:
	default:
	}
	if h.pages == 0 && !h.closed && h.idle == nil {
		h.idle = time.AfterFunc(abandonGrace, func() {
			h.mu.Lock()
			gone := h.pages == 0 && !h.closed
			h.mu.Unlock()
			if gone {
				h.abOnce.Do(func() { close(h.abandoned) })
			}
		})
	}
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		close(s.gone)
	}
}

// secretOK reports whether got is want, in constant time.
func secretOK(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// splitSecret splits "/<secret>/rest" into the secret and "rest".
func splitSecret(path string) (secret, rest string, ok bool) {
	p, ok := strings.CutPrefix(path, "/")
	if !ok {
		return "", "", false
	}
	secret, rest, ok = strings.Cut(p, "/")
	return secret, rest, ok
}

// ErrNotAsked is Consent's error when no page could be asked: none is
// connected, or the tool call has no view on it.
var ErrNotAsked = errors.New("uihost: no page shows the view to ask on")

// question is one open consent question of the page.
type question struct {
	ev     map[string]any // the "consent" event; not retained
	answer chan bool      // buffered: the first answer
}

// maxQuestion bounds the text a consent question shows.
const maxQuestion = 4000

// Consent asks the user on the page, beside the tool call's view, whether
// to allow what the view asks (text says what), and reports the answer.
// It returns ErrNotAsked at once when no page is connected or the call
// has no view; otherwise it waits until a page answers, ctx ends, the page
// is abandoned or the host closes, which are errors (the caller refuses).
// A page that connects while the question is open is asked too.
func (h *Host) Consent(ctx context.Context, call acp.ToolCallID, text string) (bool, error) {
	if len(text) > maxQuestion {
		text = strings.ToValidUTF8(text[:maxQuestion], "") + "…"
	}
	h.mu.Lock()
	viewID, ok := h.byCall[call]
	if !ok || h.pages == 0 || h.closed {
		h.mu.Unlock()
		return false, ErrNotAsked
	}
	id := randomHex()[:16]
	q := &question{ev: map[string]any{"type": "consent", "id": id, "view": viewID, "text": text}, answer: make(chan bool, 1)}
	h.questions[id] = q
	h.sendLocked(q.ev)
	h.mu.Unlock()
	done := func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		delete(h.questions, id)
		if !h.closed {
			h.sendLocked(map[string]any{"type": "consent-done", "id": id})
		}
	}
	select {
	case yes := <-q.answer:
		done()
		return yes, nil
	case <-ctx.Done():
		done()
		return false, ctx.Err()
	case <-h.abandoned:
		done()
		return false, errors.New("uihost: the page was closed")
	case <-h.base.Done():
		done()
		return false, errors.New("uihost: closed")
	}
}

// answer records a page's answer to an open question; false when there
// is none of that id (answered already, or never asked).
func (h *Host) answer(id string, yes bool) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	q, ok := h.questions[id]
	if !ok {
		return false
	}
	delete(h.questions, id)
	q.answer <- yes
	return true
}
