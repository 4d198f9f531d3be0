package run

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"acpd/acp"
	"acpd/config"
)

// maxMCPConfigBytes bounds a --mcp-config file.
const maxMCPConfigBytes = 1 << 20

// mcpConfigEntry is one server of the {"mcpServers": {...}} file other
// agents read: a stdio command, or a URL (type "http" — also spelled
// "streamable-http" or "streamableHttp" — or "sse"; http when absent).
type mcpConfigEntry struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// loadMCPConfig reads a --mcp-config file into ACP server descriptions,
// sorted by name.
func loadMCPConfig(file string) ([]acp.McpServer, error) {
	b, err := readSmallFile(file, maxMCPConfigBytes)
	if err != nil {
		return nil, err
	}
	var f struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if f.MCPServers == nil {
		return nil, fmt.Errorf(`%s: no "mcpServers" object`, file)
	}
	var out []acp.McpServer
	for _, name := range sortedNames(f.MCPServers) {
		var e mcpConfigEntry
		dec := json.NewDecoder(bytes.NewReader(f.MCPServers[name]))
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("%s: server %q: %w", file, name, err)
		}
		s, err := mcpServer(name, e)
		if err != nil {
			return nil, fmt.Errorf("%s: server %q: %w", file, name, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func mcpServer(name string, e mcpConfigEntry) (acp.McpServer, error) {
	if name == "" {
		return acp.McpServer{}, fmt.Errorf("empty server name")
	}
	headers := func() []acp.HTTPHeader {
		hs := []acp.HTTPHeader{}
		for _, k := range sortedNames(e.Headers) {
			hs = append(hs, acp.HTTPHeader{Name: k, Value: e.Headers[k]})
		}
		return hs
	}
	switch {
	case e.Command != "" && e.URL != "":
		return acp.McpServer{}, fmt.Errorf("both command and url")
	case e.Command != "":
		if e.Type != "" && e.Type != "stdio" {
			return acp.McpServer{}, fmt.Errorf("type %q with a command", e.Type)
		}
		env := []acp.EnvVariable{}
		for _, k := range sortedNames(e.Env) {
			env = append(env, acp.EnvVariable{Name: k, Value: e.Env[k]})
		}
		args := e.Args
		if args == nil {
			args = []string{}
		}
		return acp.McpServer{Stdio: &acp.McpServerStdio{Name: name, Command: e.Command, Args: args, Env: env}}, nil
	case e.URL != "":
		switch e.Type {
		case "", "http", "streamable-http", "streamableHttp":
			return acp.McpServer{HTTP: &acp.McpServerHTTP{Name: name, URL: e.URL, Headers: headers()}}, nil
		case "sse":
			return acp.McpServer{Sse: &acp.McpServerSse{Name: name, URL: e.URL, Headers: headers()}}, nil
		}
		return acp.McpServer{}, fmt.Errorf("unknown type %q (want http or sse)", e.Type)
	}
	return acp.McpServer{}, fmt.Errorf("neither command nor url")
}

// configMCPServers converts the config file's [mcp_servers] for a hosted
// agent (acpd's own agent starts them itself).
func configMCPServers(m map[string]config.MCPServer) []acp.McpServer {
	var out []acp.McpServer
	for _, name := range sortedNames(m) {
		c := m[name]
		e := mcpConfigEntry{Type: c.Transport, Env: c.Env, URL: c.URL, Headers: c.Headers}
		if len(c.Command) > 0 {
			e.Command, e.Args = c.Command[0], c.Command[1:]
		}
		if s, err := mcpServer(name, e); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// mcpName is a server's name.
func mcpName(s acp.McpServer) string {
	switch {
	case s.Stdio != nil:
		return s.Stdio.Name
	case s.HTTP != nil:
		return s.HTTP.Name
	case s.Sse != nil:
		return s.Sse.Name
	}
	return ""
}

// mergeMCPServers returns base with over's servers added; over wins on a
// name clash.
func mergeMCPServers(base, over []acp.McpServer) []acp.McpServer {
	var out []acp.McpServer
	for _, s := range base {
		if !slices.ContainsFunc(over, func(o acp.McpServer) bool { return mcpName(o) == mcpName(s) }) {
			out = append(out, s)
		}
	}
	return append(out, over...)
}
