package mcpclient

import "strings"

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
