package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"acpd/acp/jsonrpc"
	"acpd/mcpclient"
)

// MCP Apps carrier (docs/mcp-apps.md): for a client that renders MCP App
// views, a call of a tool with a view reports the view on a tool_call_update
// and the complete result on the final one; the client, as the view's host,
// sends the view's requests back as the ACP extension methods below, each
// naming the session and the tool call whose view sent it.

// Extension methods a client sends for a view.
const (
	MethodAppCallTool     = "_acpd/app/tools/call"
	MethodAppReadResource = "_acpd/app/resources/read"
	MethodAppMessage      = "_acpd/app/message"
	MethodAppModelContext = "_acpd/app/update-model-context"
	MethodAppLog          = "_acpd/app/log"
)

// Bounds of the app state a session keeps.
const (
	maxAppCalls      = 256      // tool calls whose views may send requests
	maxAppContext    = 16 << 10 // bytes of one view's model context
	maxAppContextAll = 4        // views whose context one request carries
)

// ErrAppRefused is returned (wrapped) for a view's request that names no
// view of the session or asks for something its view may not do.
var ErrAppRefused = errors.New("MCP App request refused")

// Apps is the MCP Apps state of one session whose client renders views:
// the tool calls that opened a view and the views' model context. It is
// safe for concurrent use.
type Apps struct {
	m *mcpclient.Manager
	// Message, if set, delivers a view's ui/message: text for a new user
	// message of the session. It returns once the message was handled (or
	// refused).
	Message func(ctx context.Context, callID, text string) error
	// Log, if set, receives a view's log message.
	Log func(callID, level, text string)

	mu      sync.Mutex
	calls   map[string]appCall // by tool call id
	order   []string           // call ids, oldest first (bounded)
	context map[string]string  // latest model context by call id, not yet taken
}

type appCall struct{ server, tool string }

// NewApps returns the MCP Apps state of a session whose servers m holds.
func NewApps(m *mcpclient.Manager) *Apps {
	return &Apps{m: m, calls: map[string]appCall{}, context: map[string]string{}}
}

// bind records that the tool call id opened a view of server's tool.
func (a *Apps) bind(id, server, tool string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.calls[id]; ok {
		return
	}
	if len(a.order) == maxAppCalls {
		delete(a.calls, a.order[0])
		delete(a.context, a.order[0])
		a.order = a.order[1:]
	}
	a.calls[id] = appCall{server, tool}
	a.order = append(a.order, id)
}

func (a *Apps) call(id string) (appCall, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.calls[id]
	return c, ok
}

// TakeContext returns (and forgets) the latest model context of every view
// that updated it since the last call, as text for the model; "" for none.
func (a *Apps) TakeContext() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.context) == 0 {
		return ""
	}
	ids := make([]string, 0, len(a.context))
	for id := range a.context {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var b strings.Builder
	for i, id := range ids {
		if i < maxAppContextAll {
			c := a.calls[id]
			fmt.Fprintf(&b, "[acpd: the MCP App view of %s's tool %s (tool call %s) reports this context]\n%s\n", c.server, c.tool, id, a.context[id])
		}
		delete(a.context, id)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// appParams are the parameters every extension method names its view by.
type appParams struct {
	SessionID  string `json:"sessionId"`
	ToolCallID string `json:"toolCallId"`
}

// Handle serves one of the extension methods for the view of the tool call
// the params name (the caller checked the session). Anything else, and a
// request naming no view of the session, is refused.
func (a *Apps) Handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	var p appParams
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, jsonrpc.ErrInvalidParams(err)
	}
	c, ok := a.call(p.ToolCallID)
	if !ok {
		return nil, fmt.Errorf("%w: tool call %q opened no MCP App view in this session", ErrAppRefused, p.ToolCallID)
	}
	switch method {
	case MethodAppCallTool:
		var q struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(params, &q); err != nil || q.Name == "" {
			return nil, jsonrpc.ErrInvalidParams(fmt.Errorf("name is required"))
		}
		res, err := a.m.CallAppTool(ctx, c.server, q.Name, q.Arguments)
		if errors.Is(err, mcpclient.ErrNotForApp) || errors.Is(err, mcpclient.ErrUnknownTool) {
			return nil, fmt.Errorf("%w: %v", ErrAppRefused, err)
		}
		if err != nil {
			return nil, err
		}
		return res.Raw(), nil
	case MethodAppReadResource:
		var q struct {
			URI string `json:"uri"`
		}
		if err := json.Unmarshal(params, &q); err != nil || q.URI == "" {
			return nil, jsonrpc.ErrInvalidParams(fmt.Errorf("uri is required"))
		}
		return a.m.ReadAppResource(ctx, c.server, q.URI)
	case MethodAppMessage:
		text, err := contentText(params)
		if err != nil {
			return nil, err
		}
		if a.Message == nil {
			return nil, fmt.Errorf("%w: this session takes no messages from views", ErrAppRefused)
		}
		if err := a.Message(ctx, p.ToolCallID, text); err != nil {
			return nil, err
		}
		return struct{}{}, nil
	case MethodAppModelContext:
		var q struct {
			Structured json.RawMessage `json:"structuredContent"`
		}
		_ = json.Unmarshal(params, &q)
		text, err := contentText(params)
		if err != nil && len(q.Structured) == 0 {
			return nil, err
		}
		if len(q.Structured) > 0 && string(q.Structured) != "null" {
			text = strings.TrimSpace(text + "\n" + string(q.Structured))
		}
		if len(text) > maxAppContext {
			return nil, jsonrpc.ErrInvalidParams(fmt.Errorf("model context larger than %d bytes", maxAppContext))
		}
		a.mu.Lock()
		a.context[p.ToolCallID] = text
		a.mu.Unlock()
		return struct{}{}, nil
	case MethodAppLog:
		var q struct {
			Level string `json:"level"`
			Data  any    `json:"data"`
		}
		if err := json.Unmarshal(params, &q); err != nil {
			return nil, jsonrpc.ErrInvalidParams(err)
		}
		if a.Log != nil {
			text, _ := json.Marshal(q.Data)
			a.Log(p.ToolCallID, q.Level, string(text))
		}
		return struct{}{}, nil
	}
	return nil, jsonrpc.ErrMethodNotFound(method)
}

// contentText joins the text blocks of params.content (MCP content
// blocks); other blocks are refused.
func contentText(params json.RawMessage) (string, error) {
	var q struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(params, &q); err != nil {
		return "", jsonrpc.ErrInvalidParams(err)
	}
	var parts []string
	for _, c := range q.Content {
		if c.Type != "text" {
			return "", jsonrpc.ErrInvalidParams(fmt.Errorf("content of type %q is not supported; send text", c.Type))
		}
		parts = append(parts, c.Text)
	}
	if len(parts) == 0 {
		return "", jsonrpc.ErrInvalidParams(fmt.Errorf("content holds no text"))
	}
	return strings.Join(parts, "\n"), nil
}

// viewMeta is the carrier of a view on the tool_call_update that opens it.
func viewMeta(mt mcpclient.Tool, v mcpclient.View, input json.RawMessage) map[string]any {
	in := json.RawMessage(`{}`)
	if t := strings.TrimSpace(string(input)); t != "" && t != "null" && json.Valid(input) {
		in = input
	}
	view := map[string]any{
		"resourceUri": v.URI,
		"mimeType":    mcpclient.AppMIMEType,
		"html":        v.HTML,
		"server":      mt.Server,
		"tool":        mt.Name,
		"toolInput":   in,
	}
	if v.UI != nil {
		view["ui"] = v.UI
	}
	return map[string]any{mcpclient.AppsExtension: view}
}
