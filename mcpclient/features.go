package mcpclient

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"log/slog"
	"net/url"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ResourceTemplate is a parameterised resource a server offers (RFC 6570
// URI template).
type ResourceTemplate struct {
	Server, URITemplate, Name, Description, MimeType string
}

// logHandler sends a server's notifications/message to the logger, with
// the server's name.
func (m *Manager) logHandler(server string) func(context.Context, *mcp.LoggingMessageRequest) {
	return func(_ context.Context, req *mcp.LoggingMessageRequest) {
		p := req.Params
		if p == nil {
			return
		}
		data, err := json.Marshal(p.Data)
		if err != nil {
			return
		}
		msg := string(data)
		if s, ok := p.Data.(string); ok {
			msg = s
		}
		if len(msg) > 2000 {
			msg = msg[:2000] + "…"
		}
		kv := []any{"server", server}
		if p.Logger != "" {
			kv = append(kv, "logger", p.Logger)
		}
		kv = append(kv, "message", msg)
		m.log.Log(context.Background(), logLevel(p.Level), "server log", kv...)
	}
}

// logLevel maps an MCP (syslog) level to slog's.
//
//lint:ignore SA1019 MCP logging is deprecated by SEP-2577 but acpd serves it through the deprecation window
func logLevel(l mcp.LoggingLevel) slog.Level {
	switch l {
	case "debug":
		return slog.LevelDebug
	case "info", "notice":
		return slog.LevelInfo
	case "warning":
		return slog.LevelWarn
	default:
		return slog.LevelError
	}
}

// mcpLevel is the MCP level matching the logger's level.
//
//lint:ignore SA1019 MCP logging is deprecated by SEP-2577 but acpd serves it through the deprecation window
func (m *Manager) mcpLevel() mcp.LoggingLevel {
	ctx := context.Background()
	switch {
	case m.log.Enabled(ctx, slog.LevelDebug):
		return "debug"
	case m.log.Enabled(ctx, slog.LevelInfo):
		return "info"
	case m.log.Enabled(ctx, slog.LevelWarn):
		return "warning"
	default:
		return "error"
	}
}

// rootURIs are the file:// URIs of dirs.
//
//lint:ignore SA1019 MCP roots are deprecated by SEP-2577 but acpd serves them through the deprecation window
func rootURIs(dirs []string) []*mcp.Root {
	//lint:ignore SA1019 MCP roots are deprecated by SEP-2577 but acpd serves them through the deprecation window
	var out []*mcp.Root
	for _, d := range dirs {
		if d != "" {
			//lint:ignore SA1019 MCP roots are deprecated by SEP-2577 but acpd serves them through the deprecation window
			out = append(out, &mcp.Root{URI: (&url.URL{Scheme: "file", Path: filepath.ToSlash(d)}).String(), Name: filepath.Base(d)})
		}
	}
	return out
}

// SetRoots replaces the additional roots offered to servers besides
// Options.Dir (an ACP session's additionalDirectories); connected servers
// get roots/list_changed.
func (m *Manager) SetRoots(dirs []string) {
	m.mu.Lock()
	old := m.roots
	m.roots = append([]string(nil), dirs...)
	var clients []*mcp.Client
	for _, s := range m.servers {
		if s.c != nil {
			clients = append(clients, s.c.client)
		}
	}
	m.mu.Unlock()
	var gone []string
	for _, r := range rootURIs(old) {
		gone = append(gone, r.URI)
	}
	for _, c := range clients {
		//lint:ignore SA1019 MCP roots are deprecated by SEP-2577 but acpd serves them through the deprecation window
		c.RemoveRoots(gone...)
		//lint:ignore SA1019 MCP roots are deprecated by SEP-2577 but acpd serves them through the deprecation window
		c.AddRoots(rootURIs(dirs)...)
	}
}

// ResourceTemplates lists the resource templates of the server named server,
// or of every ready server when server is empty (at most 500 in all).
func (m *Manager) ResourceTemplates(ctx context.Context, server string) ([]ResourceTemplate, error) {
	return listResources(ctx, m, server, "resource templates",
		func(c *conn) iter.Seq2[*mcp.ResourceTemplate, error] { return c.session.ResourceTemplates(ctx, nil) },
		func(c *conn, rt *mcp.ResourceTemplate) (ResourceTemplate, bool) {
			return ResourceTemplate{Server: c.server.Name, URITemplate: rt.URITemplate, Name: rt.Name, Description: rt.Description, MimeType: rt.MIMEType}, rt.URITemplate != ""
		})
}

// Subscribe asks the server named server to report changes of the resource
// uri (resources/subscribe); Options.OnResourceUpdated then hears of them.
// A server that does not offer subscriptions is an error.
func (m *Manager) Subscribe(ctx context.Context, server, uri string) error {
	conns, err := m.connsFor(ctx, server)
	if err != nil {
		return err
	}
	c := conns[0]
	if caps := c.session.InitializeResult().Capabilities; caps == nil || caps.Resources == nil || !caps.Resources.Subscribe {
		return fmt.Errorf("mcp server %q does not offer resource subscriptions", server)
	}
	key := server + " " + uri
	m.mu.Lock()
	done := m.subscribed[key]
	m.mu.Unlock()
	if done {
		return nil
	}
	if err := c.session.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
		return fmt.Errorf("mcp server %q: subscribing: %w", server, scrub(err, c.server.URL))
	}
	m.mu.Lock()
	if m.subscribed == nil {
		m.subscribed = map[string]bool{}
	}
	m.subscribed[key] = true
	m.mu.Unlock()
	return nil
}

// maxUpdated bounds the changed resources kept for TakeUpdated.
const maxUpdated = 100

func (m *Manager) noteUpdated(server, uri string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.updated {
		if r.Server == server && r.URI == uri {
			return
		}
	}
	if len(m.updated) < maxUpdated {
		m.updated = append(m.updated, Resource{Server: server, URI: uri})
	}
}

// TakeUpdated returns (and forgets) the subscribed resources whose server
// reported a change since the last call, so the model can be told to read
// them again.
func (m *Manager) TakeUpdated() []Resource {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.updated
	m.updated = nil
	return out
}

// Complete asks the server of the prompt with the given qualified name for
// completions of its argument arg, whose text so far is value; filled holds
// the arguments already given. A server without completion support yields
// none.
func (m *Manager) Complete(ctx context.Context, prompt, arg, value string, filled map[string]string) ([]string, error) {
	m.mu.Lock()
	m.freshLocked()
	ref, ok := m.promptLookup[prompt]
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownPrompt, prompt)
	}
	c, err := m.live(ctx, ref.s)
	if err != nil {
		return nil, err
	}
	if caps := c.session.InitializeResult().Capabilities; caps == nil || caps.Completions == nil {
		return nil, nil
	}
	params := &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: ref.name}, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}}
	if len(filled) > 0 {
		params.Context = &mcp.CompleteContext{Arguments: filled}
	}
	res, err := c.session.Complete(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: completion: %w", c.server.Name, scrub(err, c.server.URL))
	}
	vals := res.Completion.Values
	if len(vals) > 100 {
		vals = vals[:100]
	}
	return vals, nil
}

// capabilities are the client capabilities servers are told: roots with
// list_changed always; elicitation (in Options.ElicitModes) only with
// Options.Elicit; sampling only with Options.Sample, with tools only with
// Options.SampleTools.
func (m *Manager) capabilities() *mcp.ClientCapabilities {
	//lint:ignore SA1019 MCP roots are deprecated by SEP-2577 but acpd serves them through the deprecation window
	caps := &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}
	if m.opts.Sample != nil {
		//lint:ignore SA1019 MCP sampling is deprecated by SEP-2577 but acpd serves it through the deprecation window
		caps.Sampling = &mcp.SamplingCapabilities{}
		if m.opts.SampleTools {
			//lint:ignore SA1019 MCP sampling is deprecated by SEP-2577 but acpd serves it through the deprecation window
			caps.Sampling.Tools = &mcp.SamplingToolsCapabilities{}
		}
	}
	if m.opts.Elicit != nil {
		modes := m.opts.ElicitModes
		if modes == nil {
			modes = []string{"form"}
		}
		caps.Elicitation = &mcp.ElicitationCapabilities{}
		for _, mode := range modes {
			switch mode {
			case "form":
				caps.Elicitation.Form = &mcp.FormElicitationCapabilities{}
			case "url":
				caps.Elicitation.URL = &mcp.URLElicitationCapabilities{}
			}
		}
	}
	if m.opts.Apps {
		caps.AddExtension(AppsExtension, map[string]any{"mimeTypes": []string{AppMIMEType}})
	}
	return caps
}
