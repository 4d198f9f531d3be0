//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const nobody = 65534

// unprivileged prepares a world where acpd runs as the nobody user: a copy
// of the binary it may execute, and a home, config, state, temp and project
// directory it owns.
type unprivileged struct {
	bin, home, tmp, proj, outside string
	env                           []string
}

func newUnprivileged(t *testing.T) *unprivileged {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run acpd as another user")
	}
	base, err := os.MkdirTemp("", "acpd-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	u := &unprivileged{bin: filepath.Join(base, "acpd"), home: filepath.Join(base, "home"), tmp: filepath.Join(base, "tmp"), proj: filepath.Join(base, "proj"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{u.home, u.tmp, u.proj, u.outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(acpdBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(u.bin, src, 0o755); err != nil {
		t.Fatal(err)
	}
	u.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + u.home, "TMPDIR=" + u.tmp, "ACPD_SECRET_MARK=sk-in-acpd-environ"}
	return u
}

// run runs acpd as nobody.
func (u *unprivileged) run(t *testing.T, config string, args ...string) (string, int) {
	t.Helper()
	if config != "" {
		dir := filepath.Join(u.home, ".config", "acpd")
		cmd := exec.Command("bash", "-c", fmt.Sprintf("mkdir -p %q && cat > %q/config.toml", dir, dir))
		cmd.Stdin = strings.NewReader(config)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
	}
	cmd := exec.Command(u.bin, args...)
	cmd.Dir = u.proj
	cmd.Env = u.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Run()
	return out.String(), cmd.ProcessState.ExitCode()
}

// readAcpdEnviron is a script that reads the environment of the acpd
// process that started it: its parent, or with the sandbox's first stage
// in between, its grandparent.
const readAcpdEnviron = `p=$PPID; read -r _ comm _ pp _ < /proc/$p/stat; case $comm in *acpd-sandbox*|*exe*) p=$pp;; esac; cat /proc/$p/environ | tr '\0' '\n' | grep ACPD_SECRET_MARK`

// TestNonDumpableStopsSameUser: acpd running as an ordinary user is not
// dumpable, so a command of the same user, even unsandboxed, cannot read
// acpd's environment through /proc; an ordinary process of that user can
// (the control).
func TestNonDumpableStopsSameUser(t *testing.T) {
	u := newUnprivileged(t)
	// (The background child shows the variable once it has executed sleep.)
	control := exec.Command("bash", "-c", `ACPD_SECRET_MARK=x sleep 30 & for i in $(seq 100); do c=$(tr '\0' '\n' < /proc/$!/environ | grep -c ACPD_SECRET_MARK); [ "$c" = 1 ] && break; sleep 0.1; done; kill $!; echo $c`)
	control.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	if out, err := control.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "1" {
		t.Fatalf("control: a same-user process's environ was not readable: %v %s", err, out)
	}
	out, _ := u.run(t, "[sandbox]\nmode = \"off\"\n", "sandbox", "--", "bash", "-c", readAcpdEnviron)
	if strings.Contains(out, "sk-in-acpd-environ") {
		t.Fatalf("an unsandboxed same-user command read acpd's environ:\n%s", out)
	}
	if !strings.Contains(out, "Permission denied") {
		t.Errorf("want a permission error, got:\n%s", out)
	}
}

// TestSandboxAsUnprivileged runs the sandbox from a non-root, non-dumpable
// acpd (the first-stage path): confinement holds and acpd's environ stays
// unreadable.
func TestSandboxAsUnprivileged(t *testing.T) {
	requireSandbox(t)
	u := newUnprivileged(t)
	if out, code := u.run(t, "", "sandbox", "--", "bash", "-c", "echo ok > f && cat f && id -u"); code != 0 || !strings.HasPrefix(out, "ok\n") {
		t.Fatalf("write in the project as nobody: exit %d\n%s", code, out)
	}
	if out, code := u.run(t, "", "sandbox", "--", "bash", "-c", "echo x > "+filepath.Join(u.outside, "x")); code == 0 {
		t.Fatalf("write outside as nobody succeeded:\n%s", out)
	}
	if out, _ := u.run(t, "", "sandbox", "--", "bash", "-c", readAcpdEnviron); strings.Contains(out, "sk-in-acpd-environ") {
		t.Fatalf("a sandboxed command read acpd's environ:\n%s", out)
	}
}

// TestSandboxedEnvironAsRoot: as root non-dumpable is no barrier; the
// sandbox is.
func TestSandboxedEnvironAsRoot(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("the root case")
	}
	iso := newIsolation(t)
	env := append(iso.Env(), "ACPD_SECRET_MARK=sk-in-acpd-environ")
	out, _, _ := runCLI(t, env, "sandbox", "--cwd", t.TempDir(), "--", "bash", "-c", readAcpdEnviron)
	if strings.Contains(out, "sk-in-acpd-environ") {
		t.Fatalf("a sandboxed command of root read acpd's environ:\n%s", out)
	}
}

// TestInheritedDescriptorsDoNotLeak: descriptors acpd inherited without
// close-on-exec do not reach its children.
func TestInheritedDescriptorsDoNotLeak(t *testing.T) {
	iso := newIsolation(t)
	iso.writeUserConfig(t, "[sandbox]\nmode = \"off\"\n")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	cmd := exec.Command(acpdBinary(t), "sandbox", "--", "bash", "-c", `for f in 3 4 5 6 7; do [ -e /proc/$$/fd/$f ] && echo "leaked $f -> $(readlink /proc/$$/fd/$f)"; done; true`)
	cmd.Env = iso.Env()
	cmd.ExtraFiles = []*os.File{r, w, r, w, r} // fds 3..7 in acpd, without close-on-exec
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, io.Discard
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if out.Len() != 0 {
		t.Fatalf("descriptors leaked into a child:\n%s", out.String())
	}
}
