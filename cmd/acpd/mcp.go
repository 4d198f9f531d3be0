package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/oauth2"

	"acpd/config"
	"acpd/mcpclient"
	"acpd/mcpclient/oauth"
	"acpd/terminal"
)

func newMCPCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Inspect the MCP servers of the configuration",
	}
	var asJSON, serversOnly bool
	list := &cobra.Command{
		Use:   "list",
		Short: "Connect to the configured MCP servers and list their tools as the model sees them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMCPList(cmd.Context(), g, cmd.OutOrStdout(), cmd.ErrOrStderr(), asJSON, serversOnly)
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	list.Flags().BoolVar(&serversOnly, "servers", false, "list the servers' state (protocol, health, tool count, last error) instead of their tools")
	call := &cobra.Command{
		Use:   "call SERVER TOOL [JSON]",
		Short: "Call one tool of a configured MCP server and print its result",
		Args:  cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := "{}"
			if len(args) == 3 {
				in = args[2]
			}
			return runMCPCall(cmd.Context(), g, cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], args[1], in, asJSON)
		},
	}
	call.Flags().BoolVar(&asJSON, "json", false, "print the whole result as JSON")
	login := &cobra.Command{
		Use:   "login NAME",
		Short: "Authorize acpd with an OAuth-protected MCP server of the configuration",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMCPLogin(cmd.Context(), g, cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0])
		},
	}
	logout := &cobra.Command{
		Use:   "logout NAME",
		Short: "Delete the stored OAuth tokens of an MCP server",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			found, err := mcpTokens().Delete(args[0])
			if err != nil {
				return err
			}
			if !found {
				fmt.Fprintf(cmd.ErrOrStderr(), "no stored tokens for MCP server %q\n", args[0])
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "deleted the stored tokens of MCP server %q\n", args[0])
			return nil
		},
	}
	cmd.AddCommand(list, call, login, logout)
	return cmd
}

// mcpTokens is the store of MCP servers' OAuth tokens, next to the stored
// API keys.
func mcpTokens() *oauth.TokenStore {
	return oauth.OpenTokenStore(filepath.Join(config.UserDir(os.Getenv), "mcp-tokens.json"))
}

// runMCPLogin runs the OAuth authorization of one configured HTTP server:
// the authorization URL is printed, a listener on 127.0.0.1 receives the
// code, and the tokens are stored (0600) for sessions to use.
func runMCPLogin(ctx context.Context, g *globalFlags, out, errOut io.Writer, name string) error {
	m, servers, err := mcpManager(g)
	if err != nil {
		return err
	}
	defer m.Close()
	var srv *mcpclient.Server
	for i := range servers {
		if servers[i].Name == name {
			srv = &servers[i]
		}
	}
	if srv == nil {
		return fmt.Errorf("no MCP server %q in the configuration", name)
	}
	if srv.OAuth != nil && srv.OAuth.Grant != "" {
		fmt.Fprintf(out, "MCP server %q authorizes acpd itself with the %s grant of its [mcp_servers.%s.oauth]; it needs no login\n", name, srv.OAuth.Grant, name)
		return nil
	}
	srv.OAuth = nil
	if srv.Transport != mcpclient.TransportHTTP {
		return fmt.Errorf("MCP server %q is not a streamable HTTP server; only those use OAuth", name)
	}
	l, err := oauth.NewLoopback()
	if err != nil {
		return err
	}
	defer l.Close()
	store := mcpTokens()
	// A token that cannot be stored fails the login (no OnSaveError):
	// the error ends Start, and the command, saying why.
	saved := false
	stored := func(err error) error {
		if err == nil {
			saved = true
		}
		return err
	}
	srv.OAuth = &oauth.Config{
		RedirectURL: l.RedirectURL,
		Authorize: l.Authorize(func(u string) {
			fmt.Fprintf(errOut, "Open this URL in a browser to authorize acpd with %s:\n\n  %s\n\nWaiting for the authorization (up to 5 minutes)…\n", name, u)
		}),
		SaveToken: func(t *oauth2.Token) error { return stored(store.Save(srv.Name, srv.URL, t)) },
		// The client too, so that sessions refresh the token.
		SaveTokenClient: func(t *oauth2.Token, c *oauth.TokenClient) error {
			return stored(store.SaveWithClient(srv.Name, srv.URL, t, c))
		},
	}
	sctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if errs := m.Start(sctx, []mcpclient.Server{*srv}); len(errs) > 0 {
		return errs[0]
	}
	if !saved {
		fmt.Fprintf(out, "MCP server %q needs no authorization\n", name)
		return nil
	}
	fmt.Fprintf(out, "authorized with MCP server %q; the tokens are stored for sessions\n", name)
	return nil
}

// mcpManager returns a Manager for the configuration's servers, as a
// session would start them (the state dir remembers protocol verdicts).
func mcpManager(g *globalFlags) (*mcpclient.Manager, []mcpclient.Server, error) {
	loader, err := loadConfig(g)
	if err != nil {
		return nil, nil, err
	}
	cfg := loader.User()
	cwd, _ := os.Getwd()
	m := mcpclient.NewManager(mcpclient.Options{ClientName: "acpd", ClientVersion: acpdVersion(), Logger: slog.New(slog.DiscardHandler),
		BaseEnv: terminal.FilterEnv(os.Environ(), cfg.Env.Allow), Dir: cwd, StateDir: cfg.State.Dir})
	return m, mcpclient.WithStoredOAuth(cfg.MCPClientServers(), mcpTokens(), nil), nil
}

// runMCPCall connects to one configured server, calls one of its tools
// with the JSON object in and prints the result: its text (and structured
// content), or everything as JSON. A failed tool exits with status 1.
func runMCPCall(ctx context.Context, g *globalFlags, out, errOut io.Writer, server, tool, in string, asJSON bool) error {
	m, servers, err := mcpManager(g)
	if err != nil {
		return err
	}
	defer m.Close()
	var srv []mcpclient.Server
	for _, s := range servers {
		if s.Name == server {
			srv = append(srv, s)
		}
	}
	if len(srv) == 0 {
		return fmt.Errorf("no MCP server %q in the configuration", server)
	}
	sctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	errs := m.Start(sctx, srv)
	cancel()
	if len(errs) > 0 {
		return errs[0]
	}
	name := ""
	for _, t := range m.Tools() {
		if t.Server == server && t.Name == tool {
			name = t.QualifiedName
		}
	}
	if name == "" {
		return fmt.Errorf("MCP server %q has no tool %q (see acpd mcp list)", server, tool)
	}
	res, err := m.CallTool(ctx, name, json.RawMessage(in), mcpclient.CallOptions{OnProgress: func(p mcpclient.Progress) {
		fmt.Fprintf(errOut, "progress %v/%v %s\n", p.Progress, p.Total, p.Message)
	}})
	if err != nil {
		return err
	}
	if asJSON {
		if err := printJSON(out, res); err != nil {
			return err
		}
	} else {
		if res.Text != "" {
			fmt.Fprintln(out, res.Text)
		}
		if len(res.Structured) > 0 {
			fmt.Fprintln(out, string(res.Structured))
		}
	}
	if res.IsError {
		return exitError(1)
	}
	return nil
}

// runMCPList connects to every configured server (bounded by doctorTimeout)
// and prints their tools, after the servers' state in the text form; or,
// with serversOnly, the servers' state. Servers that fail are reported on
// stderr and the exit status is 1.
func runMCPList(ctx context.Context, g *globalFlags, out, errOut io.Writer, asJSON, serversOnly bool) error {
	m, servers, err := mcpManager(g)
	if err != nil {
		return err
	}
	defer m.Close()
	if len(servers) == 0 {
		fmt.Fprintln(errOut, "no MCP servers configured (add [mcp_servers.NAME] to the config file; see `acpd config example`)")
		if asJSON {
			fmt.Fprintln(out, "[]") // still JSON for the pipe
		}
		return nil
	}
	sctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	errs := m.Start(sctx, servers)
	cancel()
	for _, err := range errs {
		fmt.Fprintln(errOut, "acpd:", err)
	}
	status := m.Status()
	switch {
	case serversOnly && asJSON:
		if err := printJSON(out, status); err != nil {
			return err
		}
		return exitIf(len(errs) > 0)
	case serversOnly || !asJSON:
		if err := printTable(out, "SERVER\tTRANSPORT\tSTATE\tERA\tPROTOCOL\tTOOLS\tLAST ERROR", status, func(st mcpclient.ServerStatus) string {
			return fmt.Sprintf("%s\t%s\t%s\t%s\t%s\t%d\t%s", st.Name, st.Transport, st.State, orDash(st.Era), orDash(st.ProtocolVersion), st.Tools, orDash(firstLine(st.Err)))
		}); err != nil {
			return err
		}
		if serversOnly {
			return exitIf(len(errs) > 0)
		}
		fmt.Fprintln(out)
	}
	tools := m.Tools()
	if asJSON {
		type jsonTool struct {
			Name        string          `json:"name"`
			Server      string          `json:"server"`
			Tool        string          `json:"tool"`
			ReadOnly    bool            `json:"readOnly"`
			Description string          `json:"description,omitempty"`
			InputSchema json.RawMessage `json:"inputSchema,omitempty"`
		}
		list := make([]jsonTool, 0, len(tools))
		for _, t := range tools {
			list = append(list, jsonTool{t.QualifiedName, t.Server, t.Name, t.ReadOnly, t.Description, t.InputSchema})
		}
		if err := printJSON(out, list); err != nil {
			return err
		}
	} else if err := printTable(out, "TOOL\tSERVER\tREAD-ONLY\tDESCRIPTION", tools, func(t mcpclient.Tool) string {
		return fmt.Sprintf("%s\t%s\t%v\t%s", t.QualifiedName, t.Server, t.ReadOnly, firstLine(t.Description))
	}); err != nil {
		return err
	}
	return exitIf(len(errs) > 0)
}

func exitIf(failed bool) error {
	if failed {
		return exitError(1)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
