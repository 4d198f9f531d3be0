// Command acpd is a coding agent for any editor that speaks ACP (the Agent
// Client Protocol). Editors spawn it and talk newline-delimited JSON-RPC over
// stdin/stdout; `acpd sessions` manages the stored sessions for people.
//
// stdout belongs to the protocol: everything human-readable this command
// prints outside `acpd serve` goes to stdout only for subcommands that do not
// speak ACP, and logs always go to stderr or a log file.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"acpd/packaging"
	"acpd/sandbox"
)

// version, commit and date are set at build time with -ldflags
// "-X main.version=… -X main.commit=… -X main.date=…" (see .goreleaser.yaml);
// otherwise the version is packaging.Version with "-dev" (or the module's
// version when installed as a module) and the commit and date come from
// the VCS stamp of the Go toolchain.
var version, commit, date = "", "", ""

// versionLine is what --version and the version command print. It always
// names the commit: "unknown" only when the binary was built outside a
// repository without release ldflags.
func versionLine() string {
	c, d := buildCommit()
	return "acpd " + acpdVersion() + " (commit " + c + ", built " + d + ")"
}

// acpdVersion is computed once: the build information is parsed from the
// binary's module data each time it is read, and serving asks for the
// version in several places.
var acpdVersion = sync.OnceValue(func() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return packaging.Version + "-dev"
})

// buildCommit is the commit and build date of the binary: the release
// ldflags' when set, else the toolchain's vcs.revision (12 digits, with
// "-dirty" for a modified tree) and vcs.time.
func buildCommit() (rev, when string) {
	rev, when = commit, date
	if bi, ok := debug.ReadBuildInfo(); ok && rev == "" {
		var modified bool
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value[:min(len(s.Value), 12)]
			case "vcs.time":
				when = cmp.Or(when, s.Value)
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" && modified {
			rev += "-dirty"
		}
	}
	return cmp.Or(rev, "unknown"), cmp.Or(when, "unknown")
}

func main() {
	// First: as the sandbox helper this process applies a policy and
	// becomes the command.
	sandbox.Init()
	if err := hardenProcess(); err != nil {
		fmt.Fprintln(os.Stderr, "acpd:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	var err error
	if len(os.Args) == 1 {
		// What editors run, once per connection: serving ACP with the
		// defaults. The command line holds nothing to parse, so the
		// command tree (every subcommand with its flags and help) is not
		// built for it.
		err = runServe(ctx, &globalFlags{})
	} else {
		err = newRootCmd().ExecuteContext(ctx)
	}
	stop()
	os.Exit(exitStatus(err, os.Stderr))
}

// exitStatus prints err (unless it only carries a status) and returns the
// process's exit status: 0 without an error, 2 for a usage error (with a
// hint to the help), the carried status of an exitError, else 1.
func exitStatus(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return int(ee)
	}
	var ue usageErr
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "acpd: %v\nRun '%s --help' for usage.\n", ue.err, ue.cmd)
		return 2
	}
	fmt.Fprintln(stderr, "acpd:", err)
	return 1
}

// usageErr is a command line the command cannot take (an unknown flag or
// command, wrong arguments); cmd is the command's path for the help hint.
type usageErr struct {
	cmd string
	err error
}

func (e usageErr) Error() string { return e.err.Error() }
func (e usageErr) Unwrap() error { return e.err }

// markUsageErrors makes flag and argument errors of c and its
// subcommands usageErrs.
func markUsageErrors(c *cobra.Command) {
	c.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageErr{cmd: c.CommandPath(), err: err}
	})
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if args := c.Args; args != nil {
			c.Args = func(cmd *cobra.Command, a []string) error {
				if err := args(cmd, a); err != nil {
					return usageErr{cmd: cmd.CommandPath(), err: err}
				}
				return nil
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(c)
}

// exitError carries an exit status through cobra without printing.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// globalFlags are shared by every subcommand.
type globalFlags struct {
	config   string
	model    string
	logFile  string
	logLevel string
	stateDir string
}

func newRootCmd() *cobra.Command {
	g := &globalFlags{}
	root := &cobra.Command{
		Use:   "acpd",
		Short: "A coding agent for any editor that speaks ACP",
		Long: `acpd is a coding agent that editors (Zed, Neovim, JetBrains, Emacs, …) start
as an ACP agent server: it speaks the Agent Client Protocol over stdin/stdout.

Run without a subcommand (or with "serve") it serves ACP on stdio.`,
		Version:       acpdVersion(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), g)
		},
	}
	root.SetVersionTemplate(versionLine() + "\n")
	pf := root.PersistentFlags()
	pf.StringVar(&g.config, "config", "", "user config file (default $XDG_CONFIG_HOME/acpd/config.toml; env ACPD_CONFIG)")
	pf.StringVar(&g.model, "model", "", "model as provider/model, e.g. anthropic/claude-sonnet-4-5 or replay/script.jsonl (env ACPD_MODEL)")
	pf.StringVar(&g.logFile, "log-file", "", "write logs to this file instead of stderr (env ACPD_LOG_FILE)")
	pf.StringVar(&g.logLevel, "log-level", "", "debug, info, warn or error (env ACPD_LOG_LEVEL)")
	pf.StringVar(&g.stateDir, "state-dir", "", "where sessions live (default $XDG_STATE_HOME/acpd; env ACPD_STATE_DIR)")

	root.AddCommand(
		&cobra.Command{
			Use:   "serve",
			Short: "Serve ACP on stdin/stdout (what editors run)",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				return runServe(cmd.Context(), g)
			},
		},
		newSessionsCmd(g),
		newRunCmd(g),
		newPermissionsCmd(g),
		newDoctorCmd(g),
		newSandboxCmd(g),
		newMCPCmd(g),
		newConfigCmd(),
		newLoginCmd(g),
		newLogoutCmd(),
		&cobra.Command{
			Use:   "version",
			Short: "Print acpd's version",
			Args:  cobra.NoArgs,
			Run: func(cmd *cobra.Command, _ []string) {
				fmt.Fprintln(cmd.OutOrStdout(), versionLine())
			},
		},
	)
	markUsageErrors(root)
	return root
}
