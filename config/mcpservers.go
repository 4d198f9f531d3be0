package config

import (
	"sort"
	"time"

	"acpd/mcpclient"
	"acpd/mcpclient/oauth"
)

// MCPClientServers returns the configured MCP servers as mcpclient takes
// them, sorted by name. An empty transport means stdio with a command and
// streamable HTTP with a URL; an [mcp_servers.NAME.oauth] table becomes
// its grant ([oauth.GrantConfig.Config]: secrets from acpd's environment,
// the key and the assertion from their files).
func (c *Config) MCPClientServers() []mcpclient.Server {
	return mcpClientServers(c.MCPServers)
}

func mcpClientServers(cfg map[string]MCPServer) []mcpclient.Server {
	names := make([]string, 0, len(cfg))
	for n := range cfg {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]mcpclient.Server, 0, len(names))
	for _, n := range names {
		c := cfg[n]
		srv := mcpclient.Server{Name: n, URL: c.URL, Headers: c.Headers, Transport: c.Transport,
			ProtocolVersion: c.ProtocolVersion, TrustAnnotations: c.TrustAnnotations,
			StartupTimeout: time.Duration(c.StartupTimeoutSec) * time.Second,
			ToolTimeout:    time.Duration(c.ToolTimeoutSec) * time.Second}
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
			srv.Transport = mcpclient.TransportHTTP
		default:
			srv.Transport = mcpclient.TransportStdio
		}
		if c.OAuth != nil {
			// The same fields: the conversion fails to compile when they
			// part.
			srv.OAuth = oauth.GrantConfig(*c.OAuth).Config()
		}
		out = append(out, srv)
	}
	return out
}
