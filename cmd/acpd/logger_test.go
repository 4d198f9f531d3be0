package main

import (
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
	path := filepath.Join(t.TempDir(), "acpd.log")
	cfg := &config.Config{}
	cfg.Log.File = path
	lg, c, err := openLogger(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lg.Info("no default model", "err", "no key set")
	slog.Warn("from a library", "n", 3)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
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
