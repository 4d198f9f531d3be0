package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"

	"acpd/config"
	"acpd/sandbox"
	"acpd/terminal"
)

func newSandboxCmd(g *globalFlags) *cobra.Command {
	var cwd string
	c := &cobra.Command{
		Use:   "sandbox [--cwd DIR] -- COMMAND [ARG...]",
		Short: "Run a command under the sandbox policy of a session",
		Long: `Run a command as acpd runs the model's commands: inside the OS sandbox
([sandbox] in the configuration: writes only in the project, the temp
directory and the configured paths; .git (as a whole, with its
indirections) and .acpd/ read-only and not movable; acpd's config, state
and saved outputs hidden; the network off unless allowed; on Linux also
a private /tmp and /dev/shm, no process outliving the command, no host
Unix sockets with the network off, and a system call filter), with the
environment minus secrets. The exit status is the
command's. acpd refuses to run the command when no sandbox is available,
unless the configured mode is "off".`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSandbox(g, cwd, args)
		},
	}
	c.Flags().StringVar(&cwd, "cwd", "", "the session's directory (default: the current directory)")
	return c
}

func runSandbox(g *globalFlags, cwd string, args []string) error {
	loader, err := loadConfig(g)
	if err != nil {
		return err
	}
	if cwd == "" {
		cwd = "."
	}
	if cwd, err = filepath.Abs(cwd); err != nil {
		return err
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		if err == nil {
			return usageErr{cmd: "acpd sandbox", err: fmt.Errorf("--cwd %s is not a directory", cwd)}
		}
		return usageErr{cmd: "acpd sandbox", err: fmt.Errorf("--cwd %s: the directory does not exist", cwd)}
	}
	cfg, err := loader.ForProject(cwd)
	if err != nil {
		fmt.Fprintf(os.Stderr, "acpd: warning: project configuration ignored: %v\n", err)
		cfg = loader.User()
	}
	p := sessionPolicy(cfg, []string{cwd})
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = cwd
	cmd.Env = terminal.FilterEnv(os.Environ(), cfg.Env.Allow)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Err; err != nil {
		return err
	}
	if p.Mode == sandbox.Off {
		fmt.Fprintln(os.Stderr, "acpd: sandbox mode is off: the command runs unconfined")
	} else if err := p.Wrap(cmd); err != nil {
		return fmt.Errorf("%w; refusing to run the command unconfined", err)
	}
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if code := ee.ExitCode(); code > 0 {
			return exitError(code)
		}
		return exitError(128 + 9)
	}
	return err
}

// sessionPolicy is the sandbox policy of a session with the given roots:
// the configured mode, network and extra writable paths; acpd's
// configuration directory, user configuration file, state directory and
// the sessions' saved command outputs hidden.
func sessionPolicy(cfg *config.Config, roots []string) sandbox.Policy {
	p := sandbox.Policy{
		Mode:     sandbox.Mode(cfg.Sandbox.Mode),
		Roots:    roots,
		Writable: cfg.Sandbox.Writable,
		TempDir:  os.TempDir(),
		Network:  cfg.Sandbox.Network,
		ReadOnly: sandbox.UserGitConfig(),
	}
	if p.Mode == "" {
		p.Mode = sandbox.WorkspaceWrite
	}
	if d := config.UserDir(os.Getenv); d != "" {
		p.Hidden = append(p.Hidden, d)
	}
	if len(cfg.Files) > 0 && filepath.Base(filepath.Dir(cfg.Files[0])) != ".acpd" {
		p.Hidden = append(p.Hidden, cfg.Files[0]) // the user file (--config)
	}
	if cfg.State.Dir != "" {
		p.Hidden = append(p.Hidden, cfg.State.Dir)
	}
	if d := config.OutputsDir(os.Getenv); d != "" {
		p.Hidden = append(p.Hidden, d) // sessions' saved command outputs
	}
	return p
}

// reportSandbox is acpd doctor's sandbox line: whether this machine can
// sandbox commands, and what the configuration makes of it.
// reportSandbox is acpd doctor's sandbox line: a failure where this
// platform's backend cannot run, a note (no failure: nothing to fix) where
// the platform has none.
func reportSandbox(report func(ok bool, what, detail string), note func(what, detail string), cfg *config.Config) {
	cwd, _ := os.Getwd()
	p := sessionPolicy(cfg, []string{cwd})
	st := sandbox.Available()
	switch {
	case p.Mode == sandbox.Off:
		report(true, "sandbox", "off in the configuration: commands run unconfined ("+availability(st)+")")
	case st.Err != nil && st.Backend == "":
		note("sandbox", "none on this platform: "+st.Detail+"; in full mode every command asks first")
	case st.Err != nil:
		report(false, "sandbox", "unavailable: "+st.Detail+"; in full mode every command asks first")
	default:
		report(true, "sandbox", fmt.Sprintf("in use (%s, %s): %s", st.Backend, st.Detail, p.Describe()))
	}
}

func availability(st sandbox.Status) string {
	if st.Err != nil {
		return "and none is available: " + st.Detail
	}
	return st.Backend + " available"
}
