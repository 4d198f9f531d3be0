package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"acpd/config"
	"acpd/internal/cmdshell"
	"acpd/mcpclient"
	"acpd/model/provider"
	"acpd/terminal"
)

// doctorTimeout bounds each network or process check of acpd doctor.
const doctorTimeout = 20 * time.Second

func newDoctorCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check acpd's configuration, state directory, model and MCP servers",
		Long: `Check what acpd would use when an editor starts it: the configuration
files, the state directory, the model (from --model, the config, API keys,
stored keys or a local server), the shell for commands, and the configured
MCP servers. Keys are never printed. Lines marked "note" say what acpd
cannot do on this platform. Exits 1 when something needs fixing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd.Context(), g, cmd.OutOrStdout())
		},
	}
}

// probeTimeout bounds doctor's probe of the model: a plug-in's hello, a
// connection to the endpoint.
const probeTimeout = 5 * time.Second

// probeModel checks that ref's plug-in answers or its endpoint accepts
// connections.
func probeModel(ctx context.Context, reg *provider.Registry, ref string) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	return reg.Probe(ctx, ref)
}

func runDoctor(ctx context.Context, g *globalFlags, out io.Writer) error {
	failed := false
	line := func(mark, what, detail string) { fmt.Fprintf(out, "%s %-14s %s\n", mark, what, detail) }
	report := func(ok bool, what, detail string) {
		mark := "ok  "
		if !ok {
			mark, failed = "FAIL", true
		}
		line(mark, what, detail)
	}
	loader, err := loadConfigOrDefaults(g)
	if err != nil {
		report(false, "config", err.Error())
		return exitError(1)
	}
	cfg := loader.User()
	if uerr := loader.UserError(); uerr != nil {
		// Every other check still runs, with the defaults.
		report(false, "config", uerr.Error()+" (the checks below use the defaults)")
	} else {
		files := "none (defaults)"
		if len(cfg.Files) > 0 {
			files = strings.Join(cfg.Files, ", ")
		}
		report(true, "config", files)
	}
	if dir := config.UserDir(os.Getenv); dir != "" {
		report(true, "config dir", dir)
	} else {
		report(false, "config dir", "none: set XDG_CONFIG_HOME or "+homeVariable())
	}
	if p := provider.OpenCredentials("").Path(); p != "" {
		report(true, "credentials", p)
	}
	logDest := "standard error"
	if cfg.Log.File != "" {
		logDest = cfg.Log.File
	}
	report(true, "log", logDest)
	uses, limits := platformNotes()
	report(true, "platform", runtime.GOOS+"/"+runtime.GOARCH+": "+uses)
	for _, l := range limits {
		line("note", "platform", l) // what acpd cannot do here: no failure
	}
	if cwd, err := os.Getwd(); err == nil {
		if _, err := loader.ForProject(cwd); err != nil {
			report(false, "project config", err.Error())
		} else {
			report(true, "project root", config.ProjectRoot(cwd))
		}
	}
	store, err := openStore(ctx, cfg)
	if err != nil {
		report(false, "state", err.Error())
	} else {
		probe, err := os.CreateTemp(store.Dir(), ".doctor-*")
		if err == nil {
			probe.Close()
			os.Remove(probe.Name())
		}
		report(err == nil, "state", store.Dir())
	}
	lg := slog.New(slog.DiscardHandler)
	reg := provider.New(provider.Options{
		Config:      cfg,
		Credentials: provider.OpenCredentials(""),
		Discover:    os.Getenv("ACPD_DISCOVER") != "0",
		Logger:      lg,
		Version:     acpdVersion(),
	})
	defer reg.Close()
	mctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	ref, err := reg.Default(mctx)
	cancel()
	if err != nil {
		report(false, "model", err.Error())
	} else if _, info, err := reg.Resolve(ref); err != nil {
		report(false, "model", fmt.Sprintf("%s: %v", ref, err))
	} else if err := probeModel(ctx, reg, ref); err != nil && !errors.As(err, new(*provider.UnreachableError)) {
		report(false, "model", fmt.Sprintf("%s: %v", ref, err))
	} else {
		detail := ref
		if info.ContextWindow > 0 {
			detail += fmt.Sprintf(" (context %d tokens)", info.ContextWindow)
		}
		report(true, "model", detail)
		if err != nil {
			line("note", "model", err.Error())
		}
	}
	sh := cmdshell.Find()
	detail := sh.String()
	if sh.WholeLine() {
		detail += " (no bash found: install Git for Windows for bash; permission rules match PowerShell lines only as whole lines)"
	}
	report(true, "shell", detail)
	reportSandbox(report, func(what, detail string) { line("note", what, detail) }, cfg)
	if servers := cfg.MCPClientServers(); len(servers) > 0 {
		cwd, _ := os.Getwd()
		m := mcpclient.NewManager(mcpclient.Options{ClientName: "acpd doctor", ClientVersion: acpdVersion(), Logger: lg, BaseEnv: terminal.FilterEnv(os.Environ(), cfg.Env.Allow), Dir: cwd, StateDir: cfg.State.Dir})
		for _, srv := range servers {
			// One server at a time, so each error belongs to its server.
			sctx, cancel := context.WithTimeout(ctx, doctorTimeout)
			errs := m.Start(sctx, []mcpclient.Server{srv})
			cancel()
			if len(errs) > 0 {
				report(false, "mcp "+srv.Name, errs[0].Error())
				continue
			}
			n := 0
			for _, t := range m.Tools() {
				if t.Server == srv.Name {
					n++
				}
			}
			proto := ""
			for _, st := range m.Status() {
				if st.Name == srv.Name {
					proto = ", protocol " + st.ProtocolVersion
				}
			}
			report(true, "mcp "+srv.Name, fmt.Sprintf("%s%s, %d tools", srv.Transport, proto, n))
		}
		// Close reports how the servers ended (a stdio server stopped by
		// SIGTERM is an error there); that is no finding.
		_ = m.Close()
	}
	if failed {
		return exitError(1)
	}
	return nil
}
