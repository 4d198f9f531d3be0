package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"acpd/acp"
	"acpd/config"
	"acpd/mcpclient"
	"acpd/model"
	"acpd/permissions"
	"acpd/tools"
)

// mcpStartTimeout bounds connecting to a session's MCP servers.
const mcpStartTimeout = 30 * time.Second

// mcpTools are a session's MCP servers: connected in the background when the
// session opens, so session/new answers at once; a prompt waits (bounded)
// for the connections before its first model request.
type mcpTools struct {
	m      *mcpclient.Manager
	ready  chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
	errs   []error // set before ready closes

	// cmdMu serializes available_commands_update sends (announceCommands);
	// announced is set once the first one went out after the session reply.
	cmdMu     sync.Mutex
	announced bool
}

// mcpServers converts the editor's MCP server list.
func mcpServers(in []acp.McpServer) []mcpclient.Server {
	out := make([]mcpclient.Server, 0, len(in))
	for _, s := range in {
		switch {
		case s.Stdio != nil:
			env := make([]string, 0, len(s.Stdio.Env))
			for _, e := range s.Stdio.Env {
				env = append(env, e.Name+"="+e.Value)
			}
			out = append(out, mcpclient.Server{Name: s.Stdio.Name, Command: s.Stdio.Command, Args: s.Stdio.Args, Env: env, Transport: mcpclient.TransportStdio})
		case s.HTTP != nil:
			out = append(out, mcpclient.Server{Name: s.HTTP.Name, URL: s.HTTP.URL, Headers: headers(s.HTTP.Headers), Transport: mcpclient.TransportHTTP})
		case s.Sse != nil:
			out = append(out, mcpclient.Server{Name: s.Sse.Name, URL: s.Sse.URL, Headers: headers(s.Sse.Headers), Transport: mcpclient.TransportSSE})
		}
	}
	return out
}

// configMCPServers converts the configuration's MCP servers, leaving out
// those whose name the editor already uses.
func configMCPServers(cfg map[string]config.MCPServer, editor []acp.McpServer) []mcpclient.Server {
	taken := map[string]bool{}
	for _, s := range mcpServers(editor) {
		taken[s.Name] = true
	}
	var out []mcpclient.Server
	for _, srv := range mcpclient.FromConfig(cfg) {
		if !taken[srv.Name] {
			out = append(out, srv)
		}
	}
	return out
}

func headers(hs []acp.HTTPHeader) map[string]string {
	m := make(map[string]string, len(hs))
	for _, h := range hs {
		m[h.Name] = h.Value
	}
	return m
}

// startMCP connects the session's MCP servers in the background. The
// session owns the goroutine: closeMCP cancels and waits for it.
func (s *sess) startMCP() {
	servers := append(mcpServers(s.mcp), configMCPServers(s.cfg.MCPServers, s.mcp)...)
	if len(servers) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(s.a.baseContext(), mcpStartTimeout)
	t := &mcpTools{
		m: mcpclient.NewManager(mcpclient.Options{
			ClientName:    s.a.opts.Name,
			ClientVersion: s.a.opts.Version,
			Logger:        s.a.log,
			BaseEnv:       s.childEnv(),
			Dir:           s.cwd,
			// MCP prompts are slash commands: announce the new list.
			OnPromptsChanged: func() { s.announceCommands(s.a.baseContext(), false) },
			// MCP elicitation goes to the editor (or is declined).
			Elicit: s.mcpElicit,
		}),
		ready:  make(chan struct{}),
		cancel: cancel,
	}
	s.mcpTools = t
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer cancel()
		errs := t.m.Start(ctx, servers)
		t.errs = errs
		close(t.ready)
		s.announceCommands(s.a.baseContext(), false) // now with the servers' prompts
		for _, err := range errs {
			s.a.log.Warn("MCP server failed to start", "session", s.id, "err", err)
		}
	}()
}

// awaitMCP waits for the MCP connections (or ctx) and reports failures
// once, as notices.
func (s *sess) awaitMCP(ctx context.Context) {
	t := s.mcpTools
	if t == nil {
		return
	}
	select {
	case <-t.ready:
	case <-ctx.Done():
		return
	}
	s.mu.Lock()
	errs := t.errs
	t.errs = nil
	s.mu.Unlock()
	for _, err := range errs {
		s.notice(s.a.baseContext(), acp.NoticeSeverityWarning, "MCP server unavailable: "+err.Error())
	}
}

// closeMCP stops connecting and closes every MCP connection.
func (s *sess) closeMCP() {
	t := s.mcpTools
	if t == nil {
		return
	}
	t.cancel()
	t.wg.Wait()
	if err := t.m.Close(); err != nil {
		s.a.log.Warn("closing MCP servers", "session", s.id, "err", err)
	}
}

// mcpToolMap returns the session's MCP tools as model tools, once connected.
func (s *sess) mcpToolMap() map[string]*tools.Tool {
	t := s.mcpTools
	if t == nil {
		return nil
	}
	select {
	case <-t.ready:
	default:
		return nil
	}
	out := map[string]*tools.Tool{}
	for _, mt := range t.m.Tools() {
		mt := mt
		kind := acp.ToolKindOther
		if mt.ReadOnly {
			kind = acp.ToolKindRead
		}
		schema := mt.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		title := fmt.Sprintf("%s: %s", mt.Server, mt.Name)
		out[mt.QualifiedName] = &tools.Tool{
			Def:   model.ToolDef{Name: mt.QualifiedName, Description: mt.Description, InputSchema: schema},
			Kind:  kind,
			Title: func(json.RawMessage) string { return title },
			Run: func(ctx context.Context, env tools.Env, tc *tools.Call) tools.Result {
				upd := acp.ToolCallUpdate{Title: &title, Kind: &kind, RawInput: tc.Input}
				if ok, why := env.Authorize(ctx, tc, permissions.Call{Tool: mt.QualifiedName, Mutating: !mt.ReadOnly}, upd); !ok {
					return tools.Errorf("%s", why)
				}
				res, err := t.m.Call(ctx, mt.QualifiedName, tc.Input)
				if err != nil {
					if ctx.Err() != nil {
						return tools.Errorf("cancelled by the user")
					}
					return tools.Errorf("MCP tool %s failed: %v", title, err)
				}
				text := res.Text
				if strings.TrimSpace(text) == "" && len(res.Structured) > 0 {
					text = string(res.Structured)
				}
				return tools.Result{Text: text, IsError: res.IsError}
			},
		}
	}
	for n, rt := range s.resourceTools(t) {
		out[n] = rt
	}
	return out
}
