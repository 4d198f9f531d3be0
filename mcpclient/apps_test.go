package mcpclient

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"acpd/internal/testpeers"
)

func TestToolUI(t *testing.T) {
	for _, tc := range []struct {
		name       string
		meta       map[string]any
		uri        string
		model, app bool
	}{
		{"none", nil, "", true, true},
		{"later key", map[string]any{"ui": map[string]any{"resourceUri": "ui://a/x.html"}}, "ui://a/x.html", true, true},
		{"earlier key", map[string]any{"ui/resourceUri": "ui://b/y.html"}, "ui://b/y.html", true, true},
		{"later key wins", map[string]any{"ui/resourceUri": "ui://old", "ui": map[string]any{"resourceUri": "ui://new"}}, "ui://new", true, true},
		{"not ui scheme", map[string]any{"ui": map[string]any{"resourceUri": "https://x/y"}}, "", true, true},
		{"app only", map[string]any{"ui": map[string]any{"visibility": []any{"app"}}}, "", false, true},
		{"model only", map[string]any{"ui": map[string]any{"visibility": []any{"model"}}}, "", true, false},
		{"empty list", map[string]any{"ui": map[string]any{"visibility": []any{}}}, "", false, false},
		{"malformed", map[string]any{"ui": map[string]any{"visibility": "model"}}, "", false, false},
	} {
		uri, vis := toolUI(tc.meta)
		tl := Tool{UIResourceURI: uri, Visibility: vis}
		if uri != tc.uri || tl.ForModel() != tc.model || tl.ForApp() != tc.app {
			t.Errorf("%s: uri %q model %v app %v; want %q %v %v", tc.name, uri, tl.ForModel(), tl.ForApp(), tc.uri, tc.model, tc.app)
		}
	}
}

// TestAppsServers reads the MCP Apps metadata of the real servers.
func TestAppsServers(t *testing.T) {
	node, basic := testpeers.App(t, testpeers.BasicApp)
	_, monitor := testpeers.App(t, testpeers.MonitorApp)
	m := newTestManager(t, Options{BaseEnv: baseEnv(node)})
	startOK(t, m,
		Server{Name: "basic", Command: node, Args: []string{basic, "--stdio"}},
		Server{Name: "monitor", Command: node, Args: []string{monitor, "--stdio"}})
	tools := m.Tools()
	get, ok := findTool(tools, "mcp__basic__get-time")
	if !ok || get.UIResourceURI != "ui://get-time/mcp-app.html" || !get.ForModel() || !get.ForApp() {
		t.Errorf("get-time = %+v, %v", get, ok)
	}
	ctx := context.Background()
	v, err := m.AppView(ctx, "basic", get.UIResourceURI)
	if err != nil || !strings.Contains(v.HTML, "<html") {
		t.Errorf("AppView = %.80q, %v", v.HTML, err)
	}
	if _, err := m.AppView(ctx, "monitor", get.UIResourceURI); err == nil {
		t.Error("AppView read basic's view from the monitor")
	}
	if _, err := m.CallAppTool(ctx, "basic", "poll-system-stats", nil); err == nil {
		t.Error("CallAppTool reached another server's tool")
	}
	if res, err := m.CallAppTool(ctx, "monitor", "poll-system-stats", nil); err != nil || !strings.Contains(string(res.Raw()), "structuredContent") {
		t.Errorf("CallAppTool(poll-system-stats) = %s, %v", res.Raw(), err)
	}
	poll, ok := findTool(tools, "mcp__monitor__poll-system-stats")
	if !ok || poll.ForModel() || !poll.ForApp() || !slices.Equal(poll.Visibility, []string{"app"}) {
		t.Errorf("poll-system-stats = %+v, %v", poll, ok)
	}
}

// TestAppsCapability: the extension is advertised only with Options.Apps.
func TestAppsCapability(t *testing.T) {
	if caps := NewManager(Options{}).capabilities(); caps.Extensions[AppsExtension] != nil {
		t.Errorf("advertised without Apps: %v", caps.Extensions)
	}
	caps := NewManager(Options{Apps: true}).capabilities()
	ext, _ := caps.Extensions[AppsExtension].(map[string]any)
	if types, _ := ext["mimeTypes"].([]string); !slices.Equal(types, []string{AppMIMEType}) {
		t.Errorf("extensions = %v", caps.Extensions)
	}
}

// FuzzToolUI: whatever _meta a server sends, a visibility that does not
// name "model" keeps the tool from the model, and a view is always ui://.
func FuzzToolUI(f *testing.F) {
	for _, s := range []string{`{}`, `{"ui":{"visibility":["app"]}}`, `{"ui/resourceUri":"ui://x"}`, `{"ui":{"resourceUri":"UI://y","visibility":"model"}}`, `{"ui":null}`, `{"ui":{"visibility":[1,"model"]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var meta map[string]any
		if json.Unmarshal([]byte(s), &meta) != nil {
			return
		}
		uri, vis := toolUI(meta)
		if uri != "" && !IsAppResource(uri) {
			t.Fatalf("view %q is not ui://", uri)
		}
		tl := Tool{Visibility: vis}
		if ui, _ := meta["ui"].(map[string]any); ui != nil {
			if v, ok := ui["visibility"]; ok && v != nil {
				list, _ := v.([]any)
				if tl.ForModel() && !slices.Contains(list, any("model")) {
					t.Fatalf("visibility %v offers the tool to the model", v)
				}
			}
		}
	})
}
