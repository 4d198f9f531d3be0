package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP Apps (extension io.modelcontextprotocol/ui): a tool may name an
// interactive HTML view, a ui:// resource, and say who may call it.

// Names of the MCP Apps extension.
const (
	// AppsExtension is the extension's identifier, the key of its client
	// capability and of acpd's ACP carrier.
	AppsExtension = "io.modelcontextprotocol/ui"
	// AppMIMEType is the MIME type of an MCP App's HTML resource.
	AppMIMEType = "text/html;profile=mcp-app"
	// AppScheme prefixes the URI of every MCP App resource.
	AppScheme = "ui://"
)

// Visibility scopes of a tool (its _meta.ui.visibility).
const (
	VisibleToModel = "model"
	VisibleToApp   = "app"
)

// ForModel reports whether the model may see and call the tool: its
// visibility includes "model" (the default when it names none).
func (t Tool) ForModel() bool { return t.Visibility == nil || hasString(t.Visibility, VisibleToModel) }

// ForApp reports whether an app of the tool's server may call it: its
// visibility includes "app" (the default when it names none).
func (t Tool) ForApp() bool { return t.Visibility == nil || hasString(t.Visibility, VisibleToApp) }

// IsAppResource reports whether uri names an MCP App resource (ui://),
// which is meant for a host to render, never for the model to read.
func IsAppResource(uri string) bool {
	return len(uri) >= len(AppScheme) && strings.EqualFold(uri[:len(AppScheme)], AppScheme)
}

// toolUI reads a tool's MCP Apps metadata: _meta.ui.resourceUri (or the
// earlier _meta["ui/resourceUri"]) and _meta.ui.visibility. A visibility
// that is present but not a list of strings names no scope, so the tool
// is offered to nobody (fail closed); absent means the default (both).
func toolUI(meta map[string]any) (resourceURI string, visibility []string) {
	if meta == nil {
		return "", nil
	}
	if s, ok := meta["ui/resourceUri"].(string); ok && IsAppResource(s) {
		resourceURI = s
	}
	ui, _ := meta["ui"].(map[string]any)
	if ui == nil {
		return resourceURI, nil
	}
	if s, ok := ui["resourceUri"].(string); ok && IsAppResource(s) {
		resourceURI = s
	}
	v, present := ui["visibility"]
	if !present || v == nil {
		return resourceURI, nil
	}
	visibility = []string{}
	list, _ := v.([]any)
	for _, e := range list {
		if s, ok := e.(string); ok {
			visibility = append(visibility, s)
		}
	}
	return resourceURI, visibility
}

func hasString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// maxViewBytes bounds the HTML of one MCP App view; maxViews bounds the
// views a Manager keeps.
const (
	maxViewBytes = 4 << 20
	maxViews     = 64
)

// View is an MCP App's HTML view, read from its server.
type View struct {
	// URI is the view's ui:// URI; HTML its document.
	URI, HTML string
	// UI is the resource's _meta.ui as the server sent it (csp,
	// permissions, domain, prefersBorder); nil when absent.
	UI map[string]any
}

// viewCache holds the views a Manager read, by "server uri".
type viewCache struct {
	mu    sync.Mutex
	views map[string]View
}

// AppView reads the view uri (a ui:// resource) of the server named server,
// once per Manager: later calls return the cached view. The resource must
// have the MIME type [AppMIMEType] and at most 4 MiB of HTML.
func (m *Manager) AppView(ctx context.Context, server, uri string) (View, error) {
	if !IsAppResource(uri) {
		return View{}, fmt.Errorf("mcpclient: %q is not a ui:// resource", uri)
	}
	key := server + " " + uri
	m.views.mu.Lock()
	v, ok := m.views.views[key]
	m.views.mu.Unlock()
	if ok {
		return v, nil
	}
	res, err := m.readRaw(ctx, server, uri)
	if err != nil {
		return View{}, err
	}
	var rc *mcp.ResourceContents
	for _, c := range res.Contents {
		if c != nil && c.URI == uri {
			rc = c
			break
		}
	}
	if rc == nil {
		return View{}, fmt.Errorf("mcp server %q: resource %s has no contents of that URI", server, uri)
	}
	if mt := strings.ReplaceAll(strings.ToLower(rc.MIMEType), " ", ""); mt != AppMIMEType {
		return View{}, fmt.Errorf("mcp server %q: view %s has MIME type %q, not %s", server, uri, rc.MIMEType, AppMIMEType)
	}
	html := rc.Text
	if rc.Blob != nil {
		html = string(rc.Blob)
	}
	if len(html) > maxViewBytes || !utf8.ValidString(html) {
		return View{}, fmt.Errorf("mcp server %q: view %s is larger than %d bytes or not UTF-8", server, uri, maxViewBytes)
	}
	v = View{URI: uri, HTML: html}
	if ui, ok := rc.Meta["ui"].(map[string]any); ok {
		v.UI = ui
	}
	m.views.mu.Lock()
	if m.views.views == nil {
		m.views.views = map[string]View{}
	}
	if len(m.views.views) < maxViews {
		m.views.views[key] = v
	}
	m.views.mu.Unlock()
	return v, nil
}

// ReadAppResource reads the resource uri of the server named server for
// one of its apps and returns the complete ReadResourceResult as the
// server sent it (ui:// resources included).
func (m *Manager) ReadAppResource(ctx context.Context, server, uri string) (json.RawMessage, error) {
	res, err := m.readRaw(ctx, server, uri)
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

func (m *Manager) readRaw(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error) {
	if server == "" {
		return nil, fmt.Errorf("%w: empty server name", ErrUnknownServer)
	}
	conns, err := m.connsFor(ctx, server)
	if err != nil {
		return nil, err
	}
	c := conns[0]
	res, err := c.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: reading resource: %w", c.server.Name, scrub(err, c.server.URL))
	}
	return res, nil
}

// ErrNotForApp is returned (wrapped) by [Manager.CallAppTool] for a tool
// the server does not offer to its apps.
var ErrNotForApp = errors.New("mcpclient: the tool is not callable by apps")

// CallAppTool calls, for an app of the server named server, that server's
// tool named tool (the server's own name), which must be visible to apps.
func (m *Manager) CallAppTool(ctx context.Context, server, tool string, args json.RawMessage) (Result, error) {
	for _, t := range m.Tools() {
		if t.Server == server && t.Name == tool {
			if !t.ForApp() {
				return Result{}, fmt.Errorf("%w: %q of %q", ErrNotForApp, tool, server)
			}
			return m.CallTool(ctx, t.QualifiedName, args, CallOptions{})
		}
	}
	return Result{}, fmt.Errorf("%w: %q of %q", ErrUnknownTool, tool, server)
}
