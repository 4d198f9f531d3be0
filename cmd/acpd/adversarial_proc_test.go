//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The adversarial cases of the sandbox's process rules (issue 20, holes 2
// and 8): a scripted model in full mode, acpd running as an unprivileged
// user (nobody; the tests need root to become it, as CI runs), attacks
// through run_command, and each attack is also run with the sandbox off
// (the control), where it works.

var asNobody = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}

// configure writes the user configuration of u (as nobody).
func (u *unprivileged) configure(t *testing.T, toml string) {
	t.Helper()
	dir := filepath.Join(u.home, ".config", "acpd")
	cmd := exec.Command("bash", "-c", fmt.Sprintf("mkdir -p %q && cat > %q/config.toml", dir, dir))
	cmd.Stdin = strings.NewReader(toml)
	cmd.SysProcAttr = asNobody
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
}

// runCommandTurn runs one prompt turn of acpd as nobody in u's project,
// in mode, whose scripted model calls run_command with command; it
// returns everything acpd sent during the turn. Permission requests (an
// escalation offer) are rejected.
func (u *unprivileged) runCommandTurn(t *testing.T, mode, command string) string {
	t.Helper()
	call, _ := json.Marshal(map[string]any{"type": "tool_done", "toolCallId": "call_0", "toolName": "run_command", "input": map[string]any{"command": command}})
	script := filepath.Join(filepath.Dir(u.home), fmt.Sprintf("script-%d.jsonl", scriptSeq.Add(1)))
	body := string(call) + "\n" + `{"type":"finish"}` + "\n" + `{"type":"text","text":"done"}` + "\n" + `{"type":"finish"}` + "\n"
	if err := os.WriteFile(script, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(u.bin, "--model", "replay/"+script)
	cmd.Env = u.env
	cmd.Dir = u.proj
	cmd.SysProcAttr = asNobody
	p := startCmd(t, cmd)
	p.initialize()
	sid := p.newSession(u.proj)
	p.mustCall("session/set_mode", map[string]any{"sessionId": sid, "modeId": mode}, nil)
	seen := promptLines(t, p, sid, func(m wireMsg) {
		if m.Method == "session/request_permission" {
			answerPermission(p, m, "reject_once")
		}
	})
	p.close()
	return seen
}

var scriptSeq atomic.Int64

// python3 for nobody: not a version manager's shim under /root.
func nobodyPython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("no system python3")
	return ""
}

// TestAttackHostSocketCreatedLater: with the network off a command cannot
// connect to a host service's Unix socket that appears after it started,
// neither in ~ (an ssh ControlMaster's) nor deep below /tmp (a tmux
// server's); no connection reaches either server.
func TestAttackHostSocketCreatedLater(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	u := newUnprivileged(t)
	py := nobodyPython(t)
	deep, err := os.MkdirTemp("/tmp", "acpd-deep-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(deep) })
	os.Chmod(deep, 0o755)
	socks := []string{filepath.Join(u.home, ".ssh", "cm-git@host:22"), filepath.Join(deep, "a", "b", "c", "d", "tmux-65534", "default")}
	connect := filepath.Join(u.proj, "connect.py")
	writeFile(t, connect, `import socket,sys
for p in sys.argv[1:]:
    try:
        s=socket.socket(socket.AF_UNIX); s.connect(p); print("CONNECTED", p, s.recv(10))
    except OSError as e:
        print("refused", p, e)
`)
	var accepted atomic.Int64
	serve := func() {
		for _, s := range socks {
			if err := os.MkdirAll(filepath.Dir(s), 0o755); err != nil {
				t.Error(err)
				return
			}
			os.Remove(s)
			ln, err := net.Listen("unix", s)
			if err != nil {
				t.Error(err)
				return
			}
			os.Chmod(s, 0o777)
			t.Cleanup(func() { ln.Close() })
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					accepted.Add(1)
					io.WriteString(c, "served\n")
					c.Close()
				}
			}()
		}
	}
	fifo := filepath.Join(u.proj, "go")
	run := func() string {
		os.Remove(fifo)
		if err := syscall.Mkfifo(fifo, 0o666); err != nil {
			t.Fatal(err)
		}
		os.Chmod(fifo, 0o666)
		started := make(chan struct{})
		go func() {
			defer close(started)
			// Opening the FIFO blocks until the command opens it: the
			// command runs; only now do the services start.
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				t.Error(err)
				return
			}
			serve()
			f.WriteString("go\n")
			f.Close()
		}()
		seen := u.runCommandTurn(t, "full", fmt.Sprintf("read x < go; %s connect.py %q %q", py, socks[0], socks[1]))
		select {
		case <-started:
		default:
			// The command never opened the FIFO: release the writer.
			if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
				<-started
				r.Close()
			}
		}
		return seen
	}
	seen := run()
	if strings.Contains(seen, "CONNECTED") || strings.Count(seen, "refused") < 2 || accepted.Load() != 0 {
		t.Fatalf("a sandboxed command reached host sockets created after it started (%d connections):\n%s", accepted.Load(), seen)
	}
	// The control: unsandboxed, the same command connects to both.
	u.configure(t, "[sandbox]\nmode = \"off\"\n")
	if seen := run(); strings.Count(seen, "CONNECTED") < 2 {
		t.Fatalf("control: the unsandboxed command did not connect:\n%s", seen)
	}
}

// kernelProbe is a python script that reads the session keyring, adds a
// key, sets up an io_uring and pushes a byte into the command's terminal,
// printing each outcome.
func kernelProbe(py string) string {
	return py + ` -c '
import ctypes,errno,fcntl,os,termios
libc=ctypes.CDLL(None, use_errno=True)
def report(name, r):
    print(name, "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()])
report("keyctl-read", libc.syscall(` + strconv.Itoa(unix.SYS_KEYCTL) + `, 11, -3, None, 0))
report("add_key", libc.syscall(` + strconv.Itoa(unix.SYS_ADD_KEY) + `, b"user", b"acpd-probe", b"x", 1, -2))
params=ctypes.create_string_buffer(120)
report("io_uring_setup", libc.syscall(` + strconv.Itoa(unix.SYS_IO_URING_SETUP) + `, 1, params))
try:
    fd=os.open("/dev/tty", os.O_RDWR); fcntl.ioctl(fd, termios.TIOCSTI, b" "); print("tiocsti ok")
except OSError as e:
    print("tiocsti", errno.errorcode[e.errno])
'`
}

// TestAttackKernelInterfaces: the keyring, io_uring and TIOCSTI are
// refused inside the sandbox (EPERM from the syscall filter), and work
// for the same command unsandboxed.
func TestAttackKernelInterfaces(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	u := newUnprivileged(t)
	py := nobodyPython(t)
	seen := u.runCommandTurn(t, "full", kernelProbe(py))
	for _, c := range []string{"keyctl-read", "add_key", "io_uring_setup", "tiocsti"} {
		if !strings.Contains(seen, c+" EPERM") {
			t.Errorf("%s not refused with EPERM in the sandbox:\n%s", c, seen)
		}
	}
	u.configure(t, "[sandbox]\nmode = \"off\"\n")
	seen = u.runCommandTurn(t, "full", kernelProbe(py))
	controls := []string{"keyctl-read", "add_key", "io_uring_setup"}
	if b, _ := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti"); strings.TrimSpace(string(b)) == "1" {
		controls = append(controls, "tiocsti")
	}
	for _, c := range controls {
		if !strings.Contains(seen, c+" ok") {
			t.Errorf("control: %s failed unsandboxed, so the refusal proves nothing:\n%s", c, seen)
		}
	}
}

// TestAttackDaemonOutlivesCommand: daemons a command starts (setsid -f, a
// double fork) are gone when the command ended; unsandboxed they survive
// (the control).
func TestAttackDaemonOutlivesCommand(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	u := newUnprivileged(t)
	mark := fmt.Sprintf("acpd-adv-daemon-%d", os.Getpid())
	daemons := func(m string) string {
		// The command waits (a while) for the setsid daemon to be
		// sleep under its mark, so that it has left the command's
		// session before the command ends, however loaded the machine.
		return fmt.Sprintf(`setsid -f bash -c 'exec -a %s-a sleep 1000' </dev/null >/dev/null 2>&1; ( bash -c 'exec -a %s-b sleep 1000' </dev/null >/dev/null 2>&1 & ); `+
			`for i in $(seq 200); do for f in /proc/[0-9]*/cmdline; do IFS= read -r -d '' a <"$f" 2>/dev/null && [ "$a" = %s-a ] && break 2; done; sleep 0.05; done; echo started`, m, m, m)
	}
	alive := func(m string) []int {
		var pids []int
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			// The mark is in the command line before and after exec -a.
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err != nil || !bytes.Contains(b, []byte(m)) {
				continue
			}
			if st, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); !strings.Contains(string(st), ") Z ") {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	seen := u.runCommandTurn(t, "full", daemons(mark))
	if !strings.Contains(seen, "started") {
		t.Fatalf("the command did not run:\n%s", seen)
	}
	if pids := alive(mark); len(pids) != 0 {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("%d daemons of a sandboxed command outlived it", len(pids))
	}
	u.configure(t, "[sandbox]\nmode = \"off\"\n")
	u.runCommandTurn(t, "full", daemons(mark+"-control"))
	// (The double fork stays in the command's process group, which acpd
	// stops with the command; the setsid daemon escapes it. It may still
	// be starting when the turn ends: look for it a while.)
	pids := alive(mark + "-control")
	for deadline := time.Now().Add(10 * time.Second); len(pids) == 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		pids = alive(mark + "-control")
	}
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if len(pids) == 0 {
		t.Fatal("control: no unsandboxed daemon survived its command")
	}
}

// TestSandboxNeighboursWork: what the rules above must not break, as
// nobody: git status in a repository, python3, a command's own Unix
// socket pair, and with the network on a local HTTP server the command
// starts and curl fetching from it.
func TestSandboxNeighboursWork(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	u := newUnprivileged(t)
	py := nobodyPython(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	git := exec.Command("bash", "-c", "git init -q && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m init")
	git.Dir, git.Env, git.SysProcAttr = u.proj, u.env, asNobody
	if out, err := git.CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	writeFile(t, filepath.Join(u.proj, "index.html"), "local-page\n")
	server := py + ` -c '
import http.server,threading,subprocess,functools
h=functools.partial(http.server.SimpleHTTPRequestHandler, directory=".")
s=http.server.HTTPServer(("127.0.0.1",0), h)
threading.Thread(target=s.serve_forever, daemon=True).start()
subprocess.run(["curl","-sS","http://127.0.0.1:%d/index.html" % s.server_port], check=True)
' 2>/dev/null`
	script := `git status --short >/dev/null && echo git-ok; ` + py + ` -c 'import socket; a,b=socket.socketpair(); a.send(b"y"); print("py-ok", b.recv(1))'; ` + server
	seen := u.runCommandTurn(t, "full", script)
	for _, want := range []string{"git-ok", "py-ok", "local-page"} {
		if !strings.Contains(seen, want) {
			t.Errorf("network off: %s missing:\n%s", want, seen)
		}
	}
	u.configure(t, "[sandbox]\nnetwork = true\n")
	if seen := u.runCommandTurn(t, "full", server); !strings.Contains(seen, "local-page") {
		t.Errorf("network on: the local server did not answer:\n%s", seen)
	}
}

// TestSandboxGoBuild: go build runs under the syscall filter, with the
// build cache made writable by configuration.
func TestSandboxGoBuild(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go")
	}
	out, err := exec.Command(goTool, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	cache := strings.TrimSpace(string(out))
	a := newAttack(t)
	a.iso.writeUserConfig(t, fmt.Sprintf("[sandbox]\nwritable = [%q]\n", cache))
	writeFile(t, filepath.Join(a.project, "go.mod"), "module hello\n\ngo 1.21\n")
	writeFile(t, filepath.Join(a.project, "main.go"), "package main\n\nfunc main() { println(\"hello\") }\n")
	script := a.script(toolCall{"run_command", map[string]any{"command": "GOCACHE=" + cache + " GOFLAGS= GOTOOLCHAIN=local " + goTool + " build -o hello . && ./hello && echo build-ok"}})
	seen, _ := a.turn("full", script, nil, "reject_once")
	if !strings.Contains(seen, "build-ok") {
		t.Fatalf("go build in the sandbox:\n%s", seen)
	}
}
