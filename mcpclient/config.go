package mcpclient

import (
	"sort"

	"acpd/config"
)

// FromConfig converts the configuration's MCP servers, sorted by name. An
// empty transport means stdio with a command and streamable HTTP with a URL.
func FromConfig(cfg map[string]config.MCPServer) []Server {
	names := make([]string, 0, len(cfg))
	for n := range cfg {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Server, 0, len(names))
	for _, n := range names {
		c := cfg[n]
		srv := Server{Name: n, URL: c.URL, Headers: c.Headers, Transport: c.Transport}
		if len(c.Command) > 0 {
			srv.Command, srv.Args = c.Command[0], c.Command[1:]
		}
		for k, v := range c.Env {
			srv.Env = append(srv.Env, k+"="+v)
		}
		sort.Strings(srv.Env)
		switch {
		case srv.Transport != "":
		case srv.URL != "":
			srv.Transport = TransportHTTP
		default:
			srv.Transport = TransportStdio
		}
		out = append(out, srv)
	}
	return out
}
