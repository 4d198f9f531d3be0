package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/charmbracelet/log"
	"github.com/spf13/cobra"

	"acpd/cmd/acpd/internal/run"
	"acpd/config"
	"acpd/sandbox"
)

// newRunCmd is `acpd run`; package run implements it and defines its flags.
func newRunCmd(g *globalFlags) *cobra.Command {
	f := &run.Flags{}
	cmd := &cobra.Command{
		Use:   "run [flags] PROMPT...",
		Short: "Run one prompt headless (CI, shell), against acpd's agent or another ACP agent",
		Long: `acpd run sends one prompt to an ACP agent and acts as its client: it serves the
agent's file requests (confined to --cwd), runs its terminal commands and
answers its permission requests. Without --agent it runs acpd's own agent in
this process. PROMPT "-" reads the prompt from standard input.

The answer streams to stdout; thoughts, tool calls and plans are shown on
stderr (a live view on a terminal). Permission requests follow --policy and
--approve; what they leave open is asked on the terminal when stdin is one,
and refused otherwise.

Exit status: 0 end of turn, 1 error, 2 usage error, 3 refusal, 4 token or
turn-request limit, 5 the hosted agent crashed, 124 --timeout, 130 cancelled
(Ctrl-C cancels the turn; a second Ctrl-C exits).

MCP App views (docs/mcp-apps.md): with --ui, acpd run serves a page on
127.0.0.1 (the URL, with a per-run secret, is printed and opened with
$BROWSER, xdg-open, open or start) that shows the conversation and renders
the views of the tools called; after the turn the run stays while the page
shows views, until Finish is pressed there, the page is closed or Ctrl-C. On an interactive
terminal without --ui, the first view asks whether to open the page.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExit(run.Run(cmd.Context(), runOptions(g), f, args))
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return runExit(run.UsageError(err.Error()))
	})
	f.Register(cmd.Flags())
	return cmd
}

// runOptions are what acpd run takes from the rest of the binary.
func runOptions(g *globalFlags) run.Options {
	return run.Options{
		Version:     acpdVersion(),
		LoadConfig:  func() (*config.Loader, error) { return loadConfig(g) },
		OpenLogger:  openLogger,
		LogLevelSet: g.logLevel != "" || os.Getenv("ACPD_LOG_LEVEL") != "",
		LocalAgent: func(ctx context.Context, loader *config.Loader, lg *log.Logger) (func(context.Context, io.Reader, io.WriteCloser) error, io.Closer, error) {
			a, closer, err := newLocalAgent(ctx, loader, slog.New(lg))
			if err != nil {
				return nil, nil, err
			}
			return a.Serve, closer, nil
		},
		Sandbox: runTerminalSandbox,
	}
}

// runExit turns run's exit status into the binary's.
func runExit(err error) error {
	var st run.ExitStatus
	if errors.As(err, &st) {
		return exitError(st)
	}
	return err
}

// runTerminalSandbox is the policy of the terminals acpd run serves to
// another agent: the session policy of cwd; none with mode off.
func runTerminalSandbox(loader *config.Loader, cwd string) *sandbox.Policy {
	cfg, warning, err := loader.ForSession(cwd)
	if err != nil {
		cfg = loader.User()
	} else if warning != nil {
		fmt.Fprintf(os.Stderr, "acpd: warning: %v\n", warning)
	}
	p := sessionPolicy(cfg, []string{cwd})
	if p.Mode == sandbox.Off {
		return nil
	}
	return &p
}
