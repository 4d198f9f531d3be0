package uihost

import (
	"log/slog"
	"regexp"
	"slices"
	"strings"

	"acpd/internal/lazy"
)

// resourceCSP is a view's declared _meta.ui.csp (MCP Apps McpUiResourceCsp).
type resourceCSP struct {
	ConnectDomains  []string `json:"connectDomains,omitempty"`
	ResourceDomains []string `json:"resourceDomains,omitempty"`
	FrameDomains    []string `json:"frameDomains,omitempty"`
	BaseURIDomains  []string `json:"baseUriDomains,omitempty"`
}

// sourceRe is what a declared domain may be: a scheme, a host (a leading
// "*." wildcard allowed) and an optional port. Anything else (keywords,
// quotes, separators, paths) is dropped, so a view cannot widen its policy
// beyond origins.
var sourceRe = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`^(https?|wss?)://(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:(\d{1,5}|\*))?/?$`)
}}

// sources returns the valid declared origins, logging the others.
func sources(list []string, what string, lg *slog.Logger) []string {
	var out []string
	for _, d := range list {
		if sourceRe.Get().MatchString(d) {
			out = append(out, strings.TrimSuffix(d, "/"))
		} else {
			lg.Warn("uihost: ignoring a view's invalid CSP source", "directive", what, "source", d)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// policy is the Content-Security-Policy a view runs under: the MCP Apps
// default (inline scripts and styles of the document itself, data: images
// and media, no network, no frames, no plugins) widened only by the origins
// the view declared, each to its own directives.
func (c resourceCSP) policy(lg *slog.Logger) string {
	res := sources(c.ResourceDomains, "resourceDomains", lg)
	conn := sources(c.ConnectDomains, "connectDomains", lg)
	frames := sources(c.FrameDomains, "frameDomains", lg)
	base := sources(c.BaseURIDomains, "baseUriDomains", lg)
	dir := func(name string, fixed []string, extra []string, empty string) string {
		all := append(slices.Clone(fixed), extra...)
		if len(all) == 0 {
			all = []string{empty}
		}
		return name + " " + strings.Join(all, " ")
	}
	return strings.Join([]string{
		"default-src 'none'",
		dir("script-src", []string{"'self'", "'unsafe-inline'"}, res, ""),
		dir("style-src", []string{"'self'", "'unsafe-inline'"}, res, ""),
		dir("img-src", []string{"'self'", "data:", "blob:"}, res, ""),
		dir("font-src", []string{"'self'", "data:"}, res, ""),
		dir("media-src", []string{"'self'", "data:", "blob:"}, res, ""),
		dir("connect-src", nil, conn, "'none'"),
		dir("frame-src", nil, frames, "'none'"),
		dir("base-uri", nil, base, "'self'"),
		"object-src 'none'",
		"form-action 'none'",
	}, "; ")
}

// withCSPMeta puts policy into html as a meta element at the start of its
// head (or of the document), so the view's document enforces it itself too.
func withCSPMeta(html, policy string) string {
	meta := `<meta http-equiv="Content-Security-Policy" content="` + strings.ReplaceAll(policy, `"`, "&quot;") + `">`
	lower := strings.ToLower(html)
	if i := strings.Index(lower, "<head"); i >= 0 {
		if j := strings.IndexByte(html[i:], '>'); j >= 0 {
			at := i + j + 1
			return html[:at] + meta + html[at:]
		}
	}
	return meta + html
}

// features maps MCP Apps resource permissions to Permissions Policy
// features.
var features = []struct{ perm, feature string }{
	{"camera", "camera"},
	{"microphone", "microphone"},
	{"geolocation", "geolocation"},
	{"clipboardWrite", "clipboard-write"},
}

// allowAttr is the iframe allow attribute granting the declared
// permissions (empty: none).
func allowAttr(perms map[string]any) string {
	var out []string
	for _, f := range features {
		if _, ok := perms[f.perm]; ok {
			out = append(out, f.feature)
		}
	}
	return strings.Join(out, "; ")
}

// permissionsPolicy is the proxy document's Permissions-Policy header:
// the declared features for itself and its frames, every other one off.
func permissionsPolicy(perms map[string]any) string {
	var out []string
	for _, f := range features {
		if _, ok := perms[f.perm]; ok {
			out = append(out, f.feature+"=(self)")
		} else {
			out = append(out, f.feature+"=()")
		}
	}
	return strings.Join(out, ", ")
}
