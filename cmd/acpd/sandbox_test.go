package main

import (
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"acpd/sandbox"
)

func requireSandbox(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the Landlock backend is tested on Linux")
	}
	if st := sandbox.Available(); st.Err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("sandbox unavailable under CI: %v", st.Err)
		}
		t.Skipf("sandbox unavailable: %v", st.Err)
	}
}

// TestSandboxCommand runs commands through `acpd sandbox` with the
// session policy: writes in the project work, outside and into .git/hooks
// they fail, acpd's stored keys are unreadable, and the command's exit
// status is acpd's.
func TestSandboxCommand(t *testing.T) {
	requireSandbox(t)
	iso := newIsolation(t)
	// The temp dir is writable: keep it apart from "outside".
	env := append(iso.Env(), "TMPDIR="+t.TempDir())
	proj := t.TempDir()
	outside := t.TempDir()
	if err := os.MkdirAll(filepath.Join(proj, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	creds := writeFile(t, filepath.Join(iso.Config, "acpd", "credentials.json"), `{"anthropic":"sk-stored-secret"}`)

	sh := func(script string) (string, string, int) {
		return runCLI(t, env, "sandbox", "--cwd", proj, "--", "bash", "-c", script)
	}
	if out, errOut, code := sh("echo in > f && cat f"); code != 0 || out != "in\n" {
		t.Fatalf("write in the project: exit %d %q %s", code, out, errOut)
	}
	if _, _, code := sh("echo x > " + filepath.Join(outside, "x")); code == 0 {
		t.Fatal("write outside the project succeeded")
	}
	if _, _, code := sh("echo x > .git/hooks/pre-commit"); code == 0 {
		t.Fatal("write to .git/hooks succeeded")
	}
	out, _, code := sh("cat " + creds)
	if code == 0 || strings.Contains(out, "sk-stored-secret") {
		t.Fatalf("credentials read: exit %d %q", code, out)
	}
	if _, _, code := sh("exit 42"); code != 42 {
		t.Fatalf("exit status %d, want 42", code)
	}
	// Off in the configuration: unconfined, said on stderr.
	iso.writeUserConfig(t, "[sandbox]\nmode = \"off\"\n")
	_, errOut, code := sh("echo x > " + filepath.Join(outside, "y"))
	if code != 0 || !strings.Contains(errOut, "unconfined") {
		t.Fatalf("mode off: exit %d %s", code, errOut)
	}
	// A broken project file is a warning, not a failure.
	iso.writeUserConfig(t, "")
	writeFile(t, filepath.Join(proj, ".acpd", "config.toml"), "bogus = [")
	if _, errOut, code := sh("true"); code != 0 || !strings.Contains(errOut, "project configuration ignored") {
		t.Fatalf("broken project file: exit %d %s", code, errOut)
	}
}

func TestDoctorReportsSandbox(t *testing.T) {
	requireSandbox(t)
	iso := newIsolation(t)
	script := writeFile(t, filepath.Join(t.TempDir(), "s.jsonl"), `{"type":"finish"}`+"\n")
	out, _, _ := runCLI(t, iso.Env(), "doctor", "--model", "replay/"+script)
	if !regexp.MustCompile(`(?m)^ok\s+sandbox\s+in use \(landlock, Landlock ABI \d+.*network off`).MatchString(out) {
		t.Fatalf("doctor's sandbox line:\n%s", out)
	}
	// Where none can be had (inside acpd's own sandbox, no namespace can
	// mount), doctor says so and what it means.
	inner := t.TempDir()
	bin, innerScript := insideRoot(t, inner, acpdBinary(t)), insideRoot(t, inner, script)
	out, _, code := runCLI(t, append(iso.Env(), "TMPDIR="+inner), "sandbox", "--cwd", inner, "--", "env", "XDG_STATE_HOME="+inner, bin, "doctor", "--model", "replay/"+innerScript)
	if code != 1 || !regexp.MustCompile(`(?m)^FAIL\s+sandbox\s+unavailable: .*full mode every command asks first`).MatchString(out) {
		t.Fatalf("doctor without a sandbox: exit %d\n%s", code, out)
	}
	iso.writeUserConfig(t, "[sandbox]\nmode = \"off\"\n")
	out, _, _ = runCLI(t, iso.Env(), "doctor", "--model", "replay/"+script)
	if !regexp.MustCompile(`(?m)^ok\s+sandbox\s+off in the configuration`).MatchString(out) {
		t.Fatalf("doctor's sandbox line with mode off:\n%s", out)
	}
}

// insideRoot links (or copies) file into root and returns the new path:
// what a sandboxed command started there can see of a file that lives
// elsewhere below /tmp, which the sandbox makes private.
func insideRoot(t *testing.T, root, file string) string {
	t.Helper()
	dst := filepath.Join(root, ".visible", filepath.Base(file))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(file, dst); err != nil {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
