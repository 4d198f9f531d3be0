// Package mcpbridge joins a session's MCP servers to its session: it starts
// them (package mcpclient) when the session opens, so the session answers at
// once; before a prompt it waits at most a grace for those still starting and
// tells the user once about each that is unavailable; it offers their tools,
// resource tools and prompt commands (package tools/mcptools) to the turn and
// the editor; it serves the servers' sampling requests with the session's
// model after the user agreed (sample.go); it has the user authorize HTTP
// servers that ask for OAuth (oauth.go); and it carries MCP App views
// (apps.go). Elicitation, which speaks ACP, is the session's own: the bridge
// hands mcpclient the session's hook.
//
// # Contracts
//
// A [Bridge] belongs to one session and is safe for concurrent use. Its
// owner (the session) calls [Bridge.Close] once, when the session closes;
// Close ends every server goroutine, and no method may be called after it.
// The nil *Bridge, a session without MCP servers, is valid: it has no tools,
// commands or reminders. The bridge calls its [Session] from the turn's and
// the servers' goroutines, concurrently.
package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/mcpclient"
	"acpd/mcpclient/oauth"
	"acpd/model"
	"acpd/permissions"
	"acpd/tools"
	"acpd/tools/mcptools"
)

// Session is what the bridge needs from its session. Every method may be
// called concurrently and must not block longer than the client takes to
// read (Notify, Send, Card, Notice) or than ctx allows (Prompt).
type Session interface {
	// Notify shows the client an update and records it in the session's
	// history; Send shows it without recording it.
	Notify(acp.SessionUpdate)
	Send(acp.SessionUpdate)
	// Card shows a problem as a failed tool call, which every editor
	// shows; Notice shows a notice where the client takes notices.
	Card(title, why string)
	Notice(sev acp.NoticeSeverity, title string)
	// Turn returns the context of the running prompt turn, which ends
	// when the turn ends or is cancelled; ok is false when none runs.
	Turn() (ctx context.Context, ok bool)
	// Peer returns the calls to the client, false when it is gone.
	Peer() (acp.ClientConn, bool)
	// Model resolves the session's current model: its provider/model
	// reference, its backend and what is known of it.
	Model() (ref string, b model.Backend, info model.ModelInfo, err error)
	// Mode is the session's permission mode.
	Mode() permissions.Mode
	// Prompt runs a prompt turn answering the user's message prompt (the
	// client was already shown it) and returns when the turn ends.
	Prompt(ctx context.Context, prompt []acp.ContentBlock) error
}

// Config configures a [Bridge].
type Config struct {
	// SessionID names the session in permission requests and logs.
	SessionID acp.SessionID
	// Client configures the servers' manager. The bridge sets its
	// OnPromptsChanged, Sample and Apps; Elicit and ElicitModes are the
	// session's.
	Client mcpclient.Options
	// Tokens, if set, holds the servers' stored OAuth tokens.
	Tokens *oauth.TokenStore
	// Grace bounds how long a prompt waits for servers still starting;
	// zero or less means mcpclient.DefaultGrace.
	Grace time.Duration
	// Commands are the session's own slash commands, announced before
	// the servers' prompts.
	Commands []acp.AvailableCommand
	// Apps says that the client renders MCP App views (see [RendersApps]).
	Apps bool
	// Held holds the servers' spawns until [Bridge.Spawn] (or the first
	// [Bridge.Announce], after the session's reply): they are starting,
	// and a prompt waits for them, from Start on, but they do not compete
	// with the reply for the CPU.
	Held bool
	// Logger receives diagnostics; nil discards.
	Logger *slog.Logger
}

// Bridge is a session's MCP servers as the session sees them.
type Bridge struct {
	s     Session
	id    acp.SessionID
	log   *slog.Logger
	m     *mcpclient.Manager
	grace time.Duration
	cmds  []acp.AvailableCommand
	// apps is the MCP Apps state when the client renders views, else nil.
	apps *mcptools.Apps

	// mu guards errs (servers that could not even be started), unsaved
	// (OAuth tokens that could not be stored, not yet shown) and
	// reported (servers whose unavailability the user was shown).
	mu       sync.Mutex
	errs     []error
	unsaved  []unsavedToken
	reported map[string]bool
	// slow are servers the user was told are still starting (guarded by
	// mu); started is when the bridge started them.
	slow    map[string]bool
	started time.Time
	// stop ends the watcher (see watch), which done counts.
	stop context.CancelFunc
	done sync.WaitGroup
	// sampleAlways are servers the user allowed to sample for the rest of
	// the session; sampleUsed is the output tokens sampling reserved.
	sampleAlways map[string]bool
	sampleUsed   int

	// toolsMu guards tools, the tools made at toolsGen (see Tools).
	toolsMu  sync.Mutex
	tools    map[string]*tools.Tool
	toolsGen uint64
	// toolsMade counts the maps made (see ToolsMade).
	toolsMade uint64

	// cmdMu serializes available_commands_update sends (Announce);
	// announced is set once the first one went out after the session
	// reply, and replied is closed then.
	cmdMu     sync.Mutex
	announced bool
	replied   chan struct{}
	// hold, closed by Spawn (once, spawnOnce), holds the servers' spawns
	// when Config.Held (see mcpclient.Options.Hold).
	hold      chan struct{}
	spawnOnce sync.Once

	// loopback receives OAuth redirects (nil: no HTTP server, or no
	// listener); urlElicit says the editor shows URL elicitations;
	// authorizing counts the authorizations under way per server (guarded
	// by mu).
	loopback    *oauth.Loopback
	urlElicit   bool
	authorizing map[string]int
}

// Start starts connecting servers in the background and returns their
// bridge; nil when there are none. The manager it creates owns the
// connections' goroutines until Close.
func Start(servers []mcpclient.Server, cfg Config, s Session) *Bridge {
	if len(servers) == 0 {
		return nil
	}
	b := &Bridge{s: s, id: cfg.SessionID, log: cfg.Logger, grace: cfg.Grace, cmds: cfg.Commands,
		reported: map[string]bool{}, slow: map[string]bool{}, started: time.Now(),
		sampleAlways: map[string]bool{}, replied: make(chan struct{}), hold: make(chan struct{}), authorizing: map[string]int{},
		urlElicit: cfg.Client.Elicit != nil && slices.Contains(cfg.Client.ElicitModes, "url")}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Tokens != nil {
		servers = b.withOAuth(servers, cfg.Tokens)
	}
	if b.grace <= 0 {
		b.grace = mcpclient.DefaultGrace
	}
	o := cfg.Client
	// MCP prompts are slash commands: announce the new list (also when a
	// server connects).
	o.OnPromptsChanged = func() { b.Announce(false) }
	// Sampling runs the session's model after the user agrees, with the
	// server's tools when it offers them.
	o.Sample = b.sample
	o.SampleTools = true
	// MCP Apps: advertised only to render views the client hosts.
	o.Apps = cfg.Apps
	if cfg.Held {
		o.Hold = b.hold
	}
	b.m = mcpclient.NewManager(o)
	if cfg.Apps {
		b.apps = b.newApps()
	}
	b.mu.Lock()
	b.errs = b.m.Add(servers)
	for _, err := range b.errs {
		b.log.Warn("MCP server failed to start", "session", b.id, "err", err)
	}
	b.mu.Unlock()
	ctx, stop := context.WithCancel(context.Background())
	b.stop = stop
	b.done.Add(1)
	go b.watch(ctx)
	return b
}

// Spawn ends the hold of Config.Held: the servers spawn (or are dialled)
// now. It is idempotent, and a no-op on the nil Bridge.
func (b *Bridge) Spawn() {
	if b == nil {
		return
	}
	b.spawnOnce.Do(func() { close(b.hold) })
}

// watch tells the user about servers that are slow to start without
// waiting for a prompt: once the grace has passed, each server still
// starting gets a card saying so (its tools join when it is ready), and
// one that then goes down (a start timeout, a crash) gets the
// unavailable card, as Await shows it. It sends nothing before the
// session's reply, and returns when no server is starting or at Close.
func (b *Bridge) watch(ctx context.Context) {
	defer b.done.Done()
	select {
	case <-b.replied:
	case <-ctx.Done():
		return
	}
	for wait := time.Until(b.started.Add(b.grace)); ; wait = time.Hour {
		b.m.Wait(ctx, max(wait, 0))
		if ctx.Err() != nil {
			return
		}
		b.report()
		if !b.starting() {
			return
		}
	}
}

// starting reports whether a server is still starting.
func (b *Bridge) starting() bool {
	for _, st := range b.m.Status() {
		if st.State == mcpclient.StateStarting {
			return true
		}
	}
	return false
}

// Close closes every MCP connection and stops the servers.
func (b *Bridge) Close() {
	if b == nil {
		return
	}
	b.stop()
	b.done.Wait()
	if err := b.m.Close(); err != nil {
		b.log.Warn("closing MCP servers", "session", b.id, "err", err)
	}
	if b.loopback != nil {
		_ = b.loopback.Close()
	}
}

// Await waits (at most the grace) for servers still starting, then shows
// the user, once per server and session, each server that is unavailable:
// a failed tool call titled "MCP server NAME unavailable" with the reason,
// which every editor shows, and a notice where the editor takes notices.
func (b *Bridge) Await(ctx context.Context) {
	if b == nil {
		return
	}
	b.m.Wait(ctx, b.grace)
	if ctx.Err() != nil {
		return
	}
	b.report()
}

// report shows the user, once per server and session, each server that
// is unavailable (a failed tool call titled "MCP server NAME unavailable"
// with the reason, which every editor shows, and a notice where the
// editor takes notices) and, once the grace has passed, each that is
// still starting (not waiting for the user's OAuth).
func (b *Bridge) report() {
	type down struct{ name, why string }
	var news []down
	var slow []string
	late := time.Since(b.started) >= b.grace
	b.mu.Lock()
	for _, err := range b.errs {
		news = append(news, down{"", err.Error()})
	}
	b.errs = nil
	unsaved := b.unsaved
	b.unsaved = nil
	for _, st := range b.m.Status() {
		switch {
		case st.State == mcpclient.StateDown && !b.reported[st.Name]:
			b.reported[st.Name] = true
			news = append(news, down{st.Name, st.Err})
		case st.State == mcpclient.StateStarting && late && !b.slow[st.Name] && b.authorizing[st.Name] == 0:
			b.slow[st.Name] = true
			slow = append(slow, st.Name)
		}
	}
	b.mu.Unlock()
	for _, name := range slow {
		title := fmt.Sprintf("MCP server %s is still starting", name)
		b.s.Card(title, fmt.Sprintf("%s has not finished starting after %s. The session goes on; its tools join as soon as it is ready, and if it does not start it is marked unavailable here.", name, b.grace.Round(time.Millisecond)))
		b.s.Notice(acp.NoticeSeverityInfo, title+"; its tools will join when it is ready")
	}
	for _, d := range news {
		title := "MCP server unavailable"
		if d.name != "" {
			title = fmt.Sprintf("MCP server %s unavailable", d.name)
		}
		text := d.why + "\n\nThe session goes on without this server's tools. Check its command, URL or credentials in the editor's or acpd's configuration (`acpd mcp list` shows every server's state), then start a new session."
		b.s.Card(title, text)
		b.s.Notice(acp.NoticeSeverityWarning, title+": "+d.why)
	}
	for _, u := range unsaved {
		title := fmt.Sprintf("MCP server %s: OAuth token not stored", u.server)
		text := u.err.Error() + "\n\nThis session goes on with the new token, but the next one will not have it: make the token store writable, or run `acpd mcp login " + u.server + "` then."
		b.s.Card(title, text)
		b.s.Notice(acp.NoticeSeverityError, title+": "+u.err.Error())
	}
}

// StatusPrompt describes, for the system prompt, the configured MCP
// servers whose tools the model does not have, and why; "" when there are
// none.
func (b *Bridge) StatusPrompt() string {
	if b == nil {
		return ""
	}
	var sb strings.Builder
	for _, st := range b.m.Status() {
		switch st.State {
		case mcpclient.StateDown:
			fmt.Fprintf(&sb, "- %s: unavailable (%s)\n", st.Name, tools.Truncate(st.Err, 300))
		case mcpclient.StateStarting:
			b.mu.Lock()
			waiting := b.authorizing[st.Name] > 0
			b.mu.Unlock()
			if waiting {
				fmt.Fprintf(&sb, "- %s: waiting for the user to authorize acpd with it (OAuth); its tools may appear in a later request\n", st.Name)
			} else {
				fmt.Fprintf(&sb, "- %s: still starting; its tools may appear in a later request\n", st.Name)
			}
		}
	}
	if sb.Len() == 0 {
		return ""
	}
	return "\nThese configured MCP servers are not available, so their tools are missing:\n" + sb.String()
}

// Tools returns the tools of the ready (or restarting) servers, with the
// resource tools, by name. The map is shared until the servers' tools
// change: callers must not modify it.
func (b *Bridge) Tools() map[string]*tools.Tool {
	m, _ := b.ToolsMade()
	return m
}

// ToolsMade is [Bridge.Tools] with the map's serial number: the count of
// maps the bridge made, so the same number means the same map (0: the nil
// map of a nil bridge).
func (b *Bridge) ToolsMade() (map[string]*tools.Tool, uint64) {
	if b == nil {
		return nil, 0
	}
	b.toolsMu.Lock()
	defer b.toolsMu.Unlock()
	// A turn asks for the tools several times per model request and
	// tool call; they are made again only after a server's changed.
	if gen := b.m.ToolsGeneration(); b.tools == nil || gen != b.toolsGen {
		out := map[string]*tools.Tool{}
		for _, mt := range mcptools.Tools(b.m, b.apps) {
			out[mt.Def.Name] = mt
		}
		b.tools, b.toolsGen = out, gen
		b.toolsMade++
	}
	return b.tools, b.toolsMade
}

// Announce sends the available commands: the session's own followed by
// the prompts of the connected servers. The first call (initial, after the
// session's reply) marks the session as announced; later calls from the
// servers' side (a server connected, a prompt list changed) send only after
// that, so no update precedes the reply; the first also ends the hold of
// Config.Held (Spawn). The lock keeps the updates in the
// order their lists were computed.
func (b *Bridge) Announce(initial bool) {
	if initial {
		b.Spawn()
	}
	b.cmdMu.Lock()
	defer b.cmdMu.Unlock()
	if initial && !b.announced {
		b.announced = true
		close(b.replied)
	} else if !b.announced {
		return
	}
	cmds := append(slices.Clone(b.cmds), mcptools.Commands(b.m)...)
	b.s.Send(acp.SessionUpdate{AvailableCommandsUpdate: &acp.AvailableCommandsUpdate{AvailableCommands: cmds}})
}

// SetCommands replaces the session's own slash commands (custom commands
// changed on disk) and announces the new list, once the first went out.
func (b *Bridge) SetCommands(cmds []acp.AvailableCommand) {
	if b == nil {
		return
	}
	b.cmdMu.Lock()
	b.cmds = slices.Clone(cmds)
	b.cmdMu.Unlock()
	b.Announce(false)
}

// PromptTurn expands an MCP prompt command (see package mcptools) into the
// turn's user message. ok reports that the prompt was such a command; then
// either parts is the message, or stop is set and the turn is over (the
// user was told why). A "/a:b" naming no prompt is not a command: it goes
// to the model as text.
func (b *Bridge) PromptTurn(ctx context.Context, prompt []acp.ContentBlock) (parts []model.Part, stop acp.StopReason, ok bool) {
	if b == nil {
		return nil, "", false
	}
	name, rest, ok := mcptools.ParseCommand(prompt)
	if !ok {
		return nil, "", false
	}
	b.Await(ctx)
	if ctx.Err() != nil {
		return nil, acp.StopReasonCancelled, true
	}
	text, err := mcptools.Expand(ctx, b.m, name, rest)
	var argsErr *mcptools.ArgsError
	msg := ""
	switch {
	case errors.Is(err, mcptools.ErrUnknownPrompt):
		return nil, "", false
	case errors.As(err, &argsErr):
		msg = fmt.Sprintf("/%s: %v.", name, err)
	case err != nil && ctx.Err() != nil:
		return nil, acp.StopReasonCancelled, true
	case err != nil:
		msg = fmt.Sprintf("The MCP prompt /%s failed: %v", name, err)
	case text == "":
		msg = fmt.Sprintf("The MCP prompt /%s returned no text.", name)
	default:
		return []model.Part{{Type: model.PartText, Text: text}}, "", true
	}
	b.s.Notify(acp.SessionUpdate{AgentMessageChunk: textChunk(msg)})
	return nil, acp.StopReasonEndTurn, true
}

// Reminder announces, for the model, MCP resources it read whose server
// reported a change since, then the views' model context not yet given to
// it; "" when there is neither.
func (b *Bridge) Reminder() string {
	if b == nil {
		return ""
	}
	var list []string
	for _, r := range b.m.TakeUpdated() {
		list = append(list, r.Server+" "+r.URI)
	}
	out := ""
	if len(list) > 0 {
		out = "[acpd: these MCP resources (server uri) changed since you read them; read them again with mcp_read_resource before relying on them: " + strings.Join(list, ", ") + "]"
	}
	if b.apps != nil {
		if app := b.apps.TakeContext(); app != "" {
			out = strings.TrimPrefix(out+"\n"+app, "\n")
		}
	}
	return out
}

// MCP Apps (docs/mcp-apps.md): a client that renders MCP App views opts in
// with clientCapabilities._meta["io.modelcontextprotocol/ui"].mimeTypes
// naming text/html;profile=mcp-app, and hosts the views; their requests
// come back as the _acpd/app/ extension methods.

// appPrefix prefixes the extension methods of MCP App views.
const appPrefix = "_acpd/app/"

// RendersApps reports whether the client opted in to MCP App views.
func RendersApps(caps acp.ClientCapabilities) bool {
	ui, _ := caps.Meta[mcpclient.AppsExtension].(map[string]any)
	types, _ := ui["mimeTypes"].([]any)
	return slices.ContainsFunc(types, func(t any) bool { s, _ := t.(string); return s == mcpclient.AppMIMEType })
}

// WithApps serves the _acpd/app/ extension methods and passes every other
// method to h. bridge returns the bridge of the open session a request
// names (nil for one without MCP servers), or the error that answers it.
// The handler may be called concurrently, as jsonrpc.Handler's are.
func WithApps(h jsonrpc.Handler, bridge func(acp.SessionID) (*Bridge, error)) jsonrpc.Handler {
	return func(ctx context.Context, method string, params json.RawMessage) (any, error) {
		if !strings.HasPrefix(method, appPrefix) {
			return h(ctx, method, params)
		}
		var p struct {
			SessionID acp.SessionID `json:"sessionId"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, jsonrpc.ErrInvalidParams(err)
		}
		b, err := bridge(p.SessionID)
		if err != nil {
			return nil, err
		}
		if b == nil || b.apps == nil {
			return nil, &jsonrpc.Error{Code: int(acp.ErrorCodeInvalidRequest), Message: "this session has no MCP App views (the client did not opt in to " + mcpclient.AppsExtension + ")"}
		}
		res, err := b.apps.Handle(ctx, method, params)
		if errors.Is(err, mcptools.ErrAppRefused) {
			return nil, &jsonrpc.Error{Code: int(acp.ErrorCodeInvalidRequest), Message: err.Error()}
		}
		return res, err
	}
}
