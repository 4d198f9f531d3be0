package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"acpd/config"
)

// A log that goes to a file (or a stderr that is no terminal) is written
// as logfmt: one key=value line per record, with no styling.
func TestOpenLoggerFileIsLogfmt(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	cfg, path := fileLogConfig(t)
	lg, c, err := openLogger(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lg.Info("no default model", "err", "no key set")
	slog.Warn("from a library", "n", 3)
	data := closeAndRead(t, c, path)
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines, got %q", data)
	}
	for i, want := range []string{
		`level=info prefix=acpd msg="no default model" err="no key set"`,
		`level=warn prefix=acpd msg="from a library" n=3`,
	} {
		if !strings.HasPrefix(lines[i], "time=") || !strings.HasSuffix(lines[i], " "+want) {
			t.Errorf("line %d = %q, want time=… %s", i, lines[i], want)
		}
	}
	if strings.Contains(string(data), "\x1b") {
		t.Errorf("escape sequences in the log file: %q", data)
	}
}

// Serving, a process that logs nothing at its level builds no logger;
// what it does log reaches the configured file as logfmt.
func TestServeLoggerIsLazy(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	cfg, path := fileLogConfig(t)
	lg, c, err := openServeLogger(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lg.Debug("serving ACP on stdio")
	if lg.Handler().(*lazyHandler).built() {
		t.Fatal("a debug record at level info built the logger")
	}
	slog.Warn("from a library", "n", 3)
	if s := string(closeAndRead(t, c, path)); !strings.HasPrefix(s, "time=") || !strings.HasSuffix(s, ` level=warn prefix=acpd msg="from a library" n=3`+"\n") || strings.Count(s, "\n") != 1 {
		t.Errorf("log file holds %q", s)
	}
	cfg.Log.File = filepath.Join(t.TempDir(), "no", "such", "dir", "acpd.log")
	if _, _, err := openServeLogger(cfg); err == nil {
		t.Error("a log file that cannot be opened is no error")
	}
}

// fileLogConfig is a configuration that logs to a file of the test's.
func fileLogConfig(t *testing.T) (*config.Config, string) {
	path := filepath.Join(t.TempDir(), "acpd.log")
	cfg := &config.Config{}
	cfg.Log.File = path
	return cfg, path
}

// closeAndRead closes the log and returns what it wrote to path.
func closeAndRead(t *testing.T, c io.Closer, path string) []byte {
	t.Helper()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
