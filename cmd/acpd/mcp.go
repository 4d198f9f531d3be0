package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"acpd/mcpclient"
	"acpd/terminal"
)

func newMCPCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Inspect the MCP servers of the configuration",
	}
	var asJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "Connect to the configured MCP servers and list their tools as the model sees them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMCPList(cmd.Context(), g, cmd.OutOrStdout(), cmd.ErrOrStderr(), asJSON)
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.AddCommand(list)
	return cmd
}

// runMCPList connects to every configured server (bounded by doctorTimeout)
// and prints their tools; servers that fail are reported on stderr and the
// exit status is 1.
func runMCPList(ctx context.Context, g *globalFlags, out, errOut io.Writer, asJSON bool) error {
	loader, err := loadConfig(g)
	if err != nil {
		return err
	}
	cfg := loader.User()
	servers := mcpclient.FromConfig(cfg.MCPServers)
	if len(servers) == 0 {
		fmt.Fprintln(errOut, "no MCP servers configured (add [mcp_servers.NAME] to the config file; see config/example.toml)")
		return nil
	}
	cwd, _ := os.Getwd()
	m := mcpclient.NewManager(mcpclient.Options{ClientName: "acpd", ClientVersion: acpdVersion(), Logger: slog.New(slog.DiscardHandler), BaseEnv: terminal.FilterEnv(os.Environ(), cfg.Env.Allow), Dir: cwd})
	defer m.Close()
	sctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	errs := m.Start(sctx, servers)
	cancel()
	for _, err := range errs {
		fmt.Fprintln(errOut, "acpd:", err)
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
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(list); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TOOL\tSERVER\tREAD-ONLY\tDESCRIPTION")
		for _, t := range tools {
			fmt.Fprintf(tw, "%s\t%s\t%v\t%s\n", t.QualifiedName, t.Server, t.ReadOnly, firstLine(t.Description))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(errs) > 0 {
		return exitError(1)
	}
	return nil
}
