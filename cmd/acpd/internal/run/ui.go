package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"acpd/acp"
	"acpd/client"
	"acpd/cmd/acpd/internal/uihost"
	"acpd/internal/childenv"
)

// How acpd run hosts MCP App views (docs/mcp-apps.md, level 2).
const (
	uiOff = iota // no views: the client does not opt in
	uiOn         // --ui: the host page opens with the run
	uiAsk        // an interactive terminal: asked when the first view arrives
)

// uiTeardownWait bounds how long the end of the run waits for the page to
// tear its views down.
const uiTeardownWait = 5 * time.Second

// runUI is acpd run's MCP Apps host (package uihost) wired to the session:
// the client opts in to views, every session/update reaches the host, and
// the views' requests go to the agent as _acpd/app/ requests. Its one
// goroutine (asking, in uiAsk mode) is started by start and stopped by close.
type runUI struct {
	r    *runner
	mode int
	host *uihost.Host

	mu      sync.Mutex
	conn    *client.Conn
	url     string // once the host serves
	asked   bool   // the question was asked (uiAsk)
	askView acp.ToolCallID

	askc     chan struct{} // a first view arrived (uiAsk); buffered
	answered chan struct{} // closed once the question was answered (uiAsk)
	stop     chan struct{}
	wg       sync.WaitGroup
	opener   chan struct{} // closed once the browser opener was reaped; nil when none ran
}

// newRunUI returns the runner's MCP Apps host for mode.
func newRunUI(r *runner, mode int) *runUI {
	u := &runUI{r: r, mode: mode, askc: make(chan struct{}, 1), answered: make(chan struct{}), stop: make(chan struct{})}
	if mode == uiOff {
		return u
	}
	u.host = uihost.New(uihost.Options{
		Name: "acpd run", Version: r.opts.Version, Logger: slog.New(r.log),
		Relay: func(ctx context.Context, method string, params map[string]any) (json.RawMessage, error) {
			u.mu.Lock()
			conn := u.conn
			u.mu.Unlock()
			if conn == nil {
				return nil, errors.New("the agent is not connected")
			}
			return conn.ExtMethod(ctx, method, params)
		},
	})
	return u
}

// off reports whether views are off (a nil runUI is).
func (u *runUI) off() bool { return u == nil || u.mode == uiOff }

// capabilities is the client's clientCapabilities._meta: the MCP Apps
// opt-in unless views are off.
func (u *runUI) capabilities() map[string]any {
	if u.off() {
		return nil
	}
	return map[string]any{uihost.Extension: map[string]any{"mimeTypes": []string{uihost.MIMEType}}}
}

// start begins hosting once the agent is connected: with --ui the page is
// served and opened now; when asking, the question waits for a view.
func (u *runUI) start(conn *client.Conn) {
	if u.off() {
		return
	}
	u.mu.Lock()
	u.conn = conn
	u.mu.Unlock()
	if u.mode == uiOn {
		u.serve()
		return
	}
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		select {
		case <-u.askc:
		case <-u.stop:
			return
		}
		u.ask()
		close(u.answered)
	}()
}

// serve starts the host page and opens it in the browser; the URL is
// printed in any case.
func (u *runUI) serve() {
	url, err := u.host.Start()
	if err != nil {
		u.r.notice("acpd run: cannot serve the MCP Apps page: " + err.Error())
		return
	}
	u.mu.Lock()
	u.url = url
	u.mu.Unlock()
	u.say("acpd run: MCP Apps page: " + url)
	cmd, err := openBrowser(url)
	if err != nil {
		u.r.log.Info("opening the browser", "err", err)
		u.say("acpd run: open the page above in a browser (" + err.Error() + ")")
		return
	}
	// The opener is reaped as soon as it exits (xdg-open, open and start
	// return at once), so it never lingers as a zombie; close waits for it
	// within the teardown bound and leaves a browser that is the opener
	// itself running.
	done := make(chan struct{})
	u.mu.Lock()
	u.opener = done
	u.mu.Unlock()
	go func() {
		defer close(done)
		if err := cmd.Wait(); err != nil {
			u.r.log.Debug("browser opener", "err", err)
		}
	}()
}

// say prints a line of the UI's even with --quiet: the URL is needed to
// use the views.
func (u *runUI) say(s string) {
	if u.r.flags.quiet {
		fmt.Fprintln(u.r.stderr, s)
		return
	}
	u.r.notice(s)
}

// ask asks on the terminal whether to open the page for the first view.
func (u *runUI) ask() {
	u.mu.Lock()
	id := u.askView
	u.mu.Unlock()
	u.r.mu.Lock()
	t := toolInfo{id: id, title: "a tool call"}
	if known := u.r.tools[id]; known != nil {
		t = *known
	}
	u.r.mu.Unlock()
	t.title = fmt.Sprintf("%s has an MCP App view: open it in the browser?", t.title)
	t.kind = acp.ToolKindOther
	options := []acp.PermissionOption{
		{OptionID: "open", Name: "Open the MCP Apps page", Kind: acp.PermissionOptionKindAllowOnce},
		{OptionID: "no", Name: "Not now", Kind: acp.PermissionOptionKindRejectOnce},
	}
	// The question ends with the run (close) or an interrupt (r.ask).
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-u.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	defer func() { cancel(); <-done }()
	res, err := u.r.ask(ctx, &t, options)
	if err == nil && res.Outcome.Selected != nil && res.Outcome.Selected.OptionID == "open" {
		u.serve()
	}
}

// update feeds one session/update to the host (never blocking); in ask
// mode the first view raises the question.
func (u *runUI) update(n acp.SessionNotification) {
	if u.off() {
		return
	}
	u.host.Update(n)
	if u.mode != uiAsk {
		return
	}
	var id acp.ToolCallID
	var meta map[string]any
	switch {
	case n.Update.ToolCall != nil:
		id, meta = n.Update.ToolCall.ToolCallID, n.Update.ToolCall.Meta
	case n.Update.ToolCallUpdate != nil:
		id, meta = n.Update.ToolCallUpdate.ToolCallID, n.Update.ToolCallUpdate.Meta
	default:
		return
	}
	ui, _ := meta[uihost.Extension].(map[string]any)
	if html, _ := ui["html"].(string); html == "" {
		return
	}
	u.mu.Lock()
	first := !u.asked
	u.asked = true
	if first {
		u.askView = id
	}
	u.mu.Unlock()
	if first {
		u.askc <- struct{}{}
	}
}

// The options of a view's ui/message consent request (docs/mcp-apps.md).
const (
	messageAllow  = "allow"
	messageReject = "reject"
)

// consent asks on the page whether a view may send its ui/message, when
// req is that consent request (its documented allow/reject options, on a
// tool call whose view a connected page shows): asked reports whether it
// was asked there; if not, the caller asks on the terminal. Only Send on
// the page allows; anything else (the page goes, the run ends) rejects,
// and an ended request (ctx) is cancelled.
func (u *runUI) consent(ctx context.Context, req acp.RequestPermissionRequest) (res acp.RequestPermissionResponse, asked bool) {
	if u.off() || !isMessageConsent(req.Options) {
		return res, false
	}
	text := "a message"
	if req.ToolCall.Title != nil {
		text = *req.ToolCall.Title
	}
	text = strings.TrimPrefix(text, "An MCP App asks to send a message: ")
	yes, err := u.host.Consent(ctx, req.ToolCall.ToolCallID, text)
	switch {
	case errors.Is(err, uihost.ErrNotAsked):
		return res, false
	case err == nil && yes:
		return client.Select(req.Options, acp.PermissionOptionKindAllowOnce), true
	case ctx.Err() != nil:
		return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}, true
	}
	if err != nil {
		u.r.log.Info("asking on the MCP Apps page", "err", err)
	}
	return client.Select(req.Options, acp.PermissionOptionKindRejectOnce), true
}

// isMessageConsent reports whether options are exactly those of a view's
// ui/message consent request.
func isMessageConsent(options []acp.PermissionOption) bool {
	return len(options) == 2 && options[0].OptionID == messageAllow && options[0].Kind == acp.PermissionOptionKindAllowOnce &&
		options[1].OptionID == messageReject && options[1].Kind == acp.PermissionOptionKindRejectOnce
}

// prompted shows the run's prompt on the page as the user's message (it
// is no session/update).
func (u *runUI) prompted(sid acp.SessionID, prompt string) {
	if u.off() {
		return
	}
	u.host.Update(acp.SessionNotification{SessionID: sid, Update: acp.SessionUpdate{UserMessageChunk: &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: prompt}}}}})
}

// hold keeps the run going after its turn while the page shows views, so
// the user can use them (their messages start further turns): until the
// user presses Finish on the page or closes it, the turn is interrupted
// (cancel closes), the agent goes or ctx ends. A question about opening the page that is
// still open is waited for first.
func (u *runUI) hold(ctx context.Context, cancel <-chan struct{}) {
	if u.off() {
		return
	}
	u.mu.Lock()
	asked, conn := u.asked, u.conn
	u.mu.Unlock()
	if conn == nil {
		return
	}
	if u.mode == uiAsk && asked {
		select { // a question still open is answered first
		case <-u.answered:
		case <-cancel:
			return
		case <-conn.Done():
			return
		case <-ctx.Done():
			return
		}
	}
	u.mu.Lock()
	url := u.url
	u.mu.Unlock()
	if url == "" || u.host.Views() == 0 {
		return
	}
	u.say("acpd run: the MCP Apps page stays open (" + url + "): press Finish there, or Ctrl-C, to end the run")
	select {
	case <-u.host.Finished():
	case <-u.host.Abandoned():
		u.say("acpd run: the MCP Apps page was closed")
	case <-cancel:
	case <-conn.Done():
	case <-ctx.Done():
	}
}

// close tears the page's views down (bounded), stops the host and the
// question.
func (u *runUI) close() {
	if u.off() {
		return
	}
	close(u.stop)
	u.wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), uiTeardownWait)
	defer cancel()
	if err := u.host.Close(ctx); err != nil {
		u.r.log.Debug("closing the MCP Apps page", "err", err)
	}
	u.mu.Lock()
	opener := u.opener
	u.mu.Unlock()
	if opener != nil {
		select {
		case <-opener:
		case <-ctx.Done():
			u.r.log.Debug("the browser opener is still running; leaving it")
		}
	}
}

// openBrowser starts the command that opens url in the user's browser and
// returns it started, for the caller to Wait: the command in $BROWSER
// ("none" opens nothing), else xdg-open, open (macOS) or start (Windows).
// It runs with acpd's environment minus secrets (internal/childenv).
func openBrowser(url string) (*exec.Cmd, error) {
	var argv []string
	if b := strings.TrimSpace(os.Getenv("BROWSER")); b != "" {
		if b == "none" {
			return nil, errors.New("BROWSER=none")
		}
		words, err := splitWords(b)
		if err != nil || len(words) == 0 {
			return nil, fmt.Errorf("$BROWSER: %v", err)
		}
		argv = append(words, url)
	} else {
		switch runtime.GOOS {
		case "darwin":
			argv = []string{"open", url}
		case "windows":
			argv = []string{"cmd", "/c", "start", "", url}
		default:
			argv = []string{"xdg-open", url}
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = childenv.Filter(os.Environ(), nil)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return cmd, nil
}
