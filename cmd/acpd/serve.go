package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/charmbracelet/log"
	"github.com/charmbracelet/x/term"

	"acpd/acp/jsonrpc"
	"acpd/agent"
	"acpd/cmd/acpd/internal/run"
	"acpd/config"
	"acpd/model/provider"
	"acpd/permissions"
	"acpd/session"
	"acpd/terminal"
)

// loadConfig reads the user configuration with flags and environment applied.
func loadConfig(g *globalFlags) (*config.Loader, error) {
	return config.NewLoader(config.Overrides{
		ConfigFile: g.config,
		Model:      g.model,
		LogFile:    g.logFile,
		LogLevel:   g.logLevel,
		StateDir:   g.stateDir,
	}, os.Getenv)
}

// loadConfigOrDefaults is loadConfig for the commands that must keep
// working with a broken user file (serve, sessions, doctor): it then
// returns a loader without that file (config.Fallback), whose UserError
// and session warnings say what is wrong.
func loadConfigOrDefaults(g *globalFlags) (*config.Loader, error) {
	loader, err := loadConfig(g)
	if err == nil {
		return loader, nil
	}
	fb, ferr := config.Fallback(config.Overrides{
		ConfigFile: g.config,
		Model:      g.model,
		LogFile:    g.logFile,
		LogLevel:   g.logLevel,
		StateDir:   g.stateDir,
	}, os.Getenv, err)
	if ferr != nil {
		return nil, err // the environment or flags are broken too: say the first
	}
	return fb, nil
}

// openLogger returns the process logger: stderr, or the configured file.
// Logs never go to stdout. It also becomes the handler of slog's default
// logger, so that the library packages, which log through *slog.Logger,
// write to the same place; pass them slog.New(lg). The returned closer
// flushes and closes the file.
func openLogger(cfg *config.Config) (*log.Logger, io.Closer, error) {
	w, c, err := logWriter(cfg)
	if err != nil {
		return nil, nil, err
	}
	lg := newLogger(cfg, w)
	slog.SetDefault(slog.New(lg))
	return lg, c, nil
}

// openServeLogger is openLogger for serving, as a *slog.Logger whose
// charm logger is built at the first record logged (see lazyHandler): an
// editor's acpd that has nothing to say never initialises the styling
// stack. A log file that cannot be opened is still an error at once.
func openServeLogger(cfg *config.Config) (*slog.Logger, io.Closer, error) {
	w, c, err := logWriter(cfg)
	if err != nil {
		return nil, nil, err
	}
	h := newLazyHandler(slog.Level(logLevel(cfg)), func() slog.Handler { return newLogger(cfg, w) })
	lg := slog.New(h)
	slog.SetDefault(lg)
	return lg, c, nil
}

// logWriter opens where logs go: the configured file, else stderr.
func logWriter(cfg *config.Config) (io.Writer, io.Closer, error) {
	if cfg.Log.File != "" {
		f, err := os.OpenFile(cfg.Log.File, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("log file: %w", err)
		}
		return f, f, nil
	}
	// Wrapped, so the log's renderer does not see a terminal and ask it
	// for its colours (waiting up to 5 s each when it does not answer);
	// the colour profile is set from the environment instead.
	return struct{ io.Writer }{os.Stderr}, io.NopCloser(nil), nil
}

// logLevel is the configured level, info by default or when the
// configuration names none charmbracelet/log knows. (Its levels are
// slog's.)
func logLevel(cfg *config.Config) log.Level {
	lvl, err := log.ParseLevel(strings.ToLower(orDefault(cfg.Log.Level, "info")))
	if err != nil {
		return log.InfoLevel
	}
	return lvl
}

// newLogger builds the charm logger writing to w.
func newLogger(cfg *config.Config, w io.Writer) *log.Logger {
	lg := log.NewWithOptions(w, log.Options{ReportTimestamp: true, Prefix: "acpd"})
	if cfg.Log.File == "" && isTerminal(os.Stderr) {
		if !run.NoColor() {
			lg.SetColorProfile(run.ColorProfile())
		}
	} else {
		// Read by programs and people paging a file, not styled: logfmt,
		// which writes without the styling stack the text form renders
		// every field through.
		lg.SetFormatter(log.LogfmtFormatter)
	}
	lg.SetLevel(logLevel(cfg))
	return lg
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// openStore opens the session store named by the configuration (whose
// state directory defaults to config.DefaultStateDir); ctx bounds its
// waits for another process's locks.
func openStore(ctx context.Context, cfg *config.Config) (*session.Store, error) {
	dir := cfg.State.Dir
	if dir == "" {
		dir = config.DefaultStateDir(os.Getenv)
	}
	if dir == "" {
		return nil, errors.New("no state directory: set state.dir, ACPD_STATE_DIR, XDG_STATE_HOME or HOME (LOCALAPPDATA on Windows)")
	}
	return session.Open(ctx, dir)
}

// runServe serves ACP on stdin/stdout until stdin closes.
func runServe(ctx context.Context, g *globalFlags) error {
	if isTerminal(os.Stdin) && isTerminal(os.Stdout) {
		fmt.Fprintf(os.Stderr, `acpd is an ACP agent: an editor starts it and talks JSON-RPC on stdin/stdout.
Add it to your editor (for Zed: "agent_servers": {"acpd": {"command": "acpd"}}),
or see "acpd --help" for the commands people use (acpd sessions list, …).
`)
		return exitError(2)
	}
	// A broken user file must not kill the editor's connection: acpd
	// answers initialize with its defaults and every session says what is
	// wrong.
	loader, err := loadConfigOrDefaults(g)
	if err != nil {
		return err
	}
	cfg := loader.User()
	lg, closeLog, err := openServeLogger(cfg)
	if err != nil {
		return err
	}
	defer closeLog.Close()
	if uerr := loader.UserError(); uerr != nil {
		lg.Error("user configuration ignored; serving with the defaults", "err", uerr)
	}
	// From here on stdout carries only protocol bytes: a stray write to fd 1
	// by any package lands on stderr.
	proto, err := jsonrpc.ProtectStdout()
	if err != nil {
		return fmt.Errorf("protecting stdout: %w", err)
	}
	a, closeAgent, err := newLocalAgent(ctx, loader, lg)
	if err != nil {
		return err
	}
	defer closeAgent.Close()
	lg.Debug("serving ACP on stdio", "pid", os.Getpid())
	err = a.Serve(ctx, os.Stdin, proto)
	lg.Debug("connection closed", "err", err)
	return err
}

// newLocalAgent builds acpd's own agent from the configuration: for serve,
// and for `acpd run` without --agent. The closer releases the model
// backends (exec plug-ins, the recording file).
func newLocalAgent(ctx context.Context, loader *config.Loader, lg *slog.Logger) (*agent.Agent, io.Closer, error) {
	cfg := loader.User()
	store, err := openStore(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	perms, err := permissions.OpenStore(filepath.Join(store.Dir(), permissionsFile))
	if err != nil {
		return nil, nil, err
	}
	models, closeModels, err := newModelSource(cfg, lg)
	if err != nil {
		return nil, nil, err
	}
	return agent.New(agent.Options{
		Name:         "acpd",
		Version:      acpdVersion(),
		Config:       loader,
		Store:        store,
		Resolve:      models.resolve,
		DefaultModel: models.defaultModel,
		Models:       models.models,
		Describe:     models.reg.Describe,
		Reload:       models.reg.Reload,
		Logout:       func() error { return provider.OpenCredentials("").Delete("") },
		// `acpd login` run by the editor in another process (Zed's
		// terminal auth) is seen on the next session or model-less prompt.
		CredentialsStamp: credentialsStamp,
		Permissions:      perms,
		Protected:        []string{config.UserDir(os.Getenv), store.Dir()},
		Outputs:          config.OutputsDir(os.Getenv),
		MCPTokens:        mcpTokens(),
		Env:              terminal.FilterEnv(os.Environ(), cfg.Env.Allow),
		Getenv:           os.Getenv,
		Logger:           lg,
		MaxLineBytes:     cfg.Protocol.MaxLineBytes,
	}), closeModels, nil
}

func isTerminal(f *os.File) bool { return term.IsTerminal(f.Fd()) }

// credentialsStamp fingerprints the stored keys file by its modification
// time and size ("" when there is none): a stat, cheap enough for every
// session/new.
func credentialsStamp() string {
	p := provider.OpenCredentials("").Path()
	if p == "" {
		return ""
	}
	fi, err := os.Stat(p)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d/%d", fi.ModTime().UnixNano(), fi.Size())
}
