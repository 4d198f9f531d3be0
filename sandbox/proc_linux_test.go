//go:build linux

package sandbox

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// python3 is the interpreter the socket and terminal probes use.
func python3(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3" // not a version manager's shim: quicker
	}
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	return p
}

// processesWith returns the live processes whose command line contains
// mark (before or after a daemon's exec -a renames it).
func processesWith(mark string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(mark)) {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && !strings.Contains(string(st), ") Z ") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestDaemonDiesWithCommand: a daemon a command starts (setsid -f, a
// double fork) is gone once the command ended; unsandboxed (the control)
// it survives.
func TestDaemonDiesWithCommand(t *testing.T) {
	requireSandbox(t)
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("no setsid")
	}
	w := newWorld(t)
	mark := fmt.Sprintf("acpd-daemon-%d", os.Getpid())
	script := func(m string) string {
		return fmt.Sprintf(`setsid -f bash -c 'exec -a %s-a sleep 1000' </dev/null >/dev/null 2>&1; ( bash -c 'exec -a %s-b sleep 1000' </dev/null >/dev/null 2>&1 & ); echo started`, m, m)
	}
	control := exec.Command("bash", "-c", script(mark+"-control"))
	if out, err := control.CombinedOutput(); err != nil {
		t.Fatalf("control: %v %s", err, out)
	}
	// (A process in the middle of an exec may show no command line for a
	// moment: look again until both appear, bounded.)
	survivors := processesWith(mark + "-control")
	for deadline := time.Now().Add(10 * time.Second); len(survivors) < 2 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		survivors = processesWith(mark + "-control")
	}
	for _, pid := range survivors {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	if len(survivors) != 2 {
		t.Fatalf("control: %d unsandboxed daemons survived their command, want 2", len(survivors))
	}
	for _, stage1 := range []bool{false, true} {
		forceStage1 = stage1
		out := mustRun(t, w.policy(), w.root, script(mark))
		forceStage1 = false
		if out != "started\n" {
			t.Fatalf("output %q", out)
		}
		if pids := processesWith(mark); len(pids) != 0 {
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Fatalf("stage1 %v: %d daemons outlived their sandboxed command", stage1, len(pids))
		}
	}
}

// serveUnix listens on path and answers each connection with "served".
func serveUnix(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
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
}

// TestLaterHostSocketsUnreachable: with the network off, Unix sockets of
// services outside the sandbox that appear after the command started (in
// a directory outside /tmp, as in ~, and deep below /tmp) cannot be
// connected to; the command's own Unix sockets and socket pairs of
// streams still work.
func TestLaterHostSocketsUnreachable(t *testing.T) {
	requireSandbox(t)
	py := python3(t)
	w := newWorld(t)
	deep, err := os.MkdirTemp("/tmp", "acpd-deep-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(deep) })
	socks := []string{filepath.Join(w.outside, ".ssh", "cm-socket"), filepath.Join(deep, "a", "b", "c", "d", "tmux-0", "default")}
	fifo := filepath.Join(w.root, "go")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	connect := `import socket,sys
for p in sys.argv[1:]:
    try:
        s=socket.socket(socket.AF_UNIX); s.connect(p); print("CONNECTED", p, s.recv(10))
    except OSError as e:
        print("refused", p, e)
`
	if err := os.WriteFile(filepath.Join(w.root, "connect.py"), []byte(connect), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", fmt.Sprintf(`read x < go; %q connect.py %q %q`, py, socks[0], socks[1]))
	cmd.Dir = w.root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := w.policy().Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The command runs (it waits on the FIFO); now the services start.
	for _, s := range socks {
		serveUnix(t, s)
	}
	if err := os.WriteFile(fifo, []byte("go\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if strings.Contains(out.String(), "CONNECTED") || strings.Count(out.String(), "refused") != 2 {
		t.Fatalf("host sockets created after the command started:\n%s", out.String())
	}
	// The control: the same script outside the sandbox connects.
	if o, _ := exec.Command(py, filepath.Join(w.root, "connect.py"), socks[0], socks[1]).CombinedOutput(); strings.Count(string(o), "CONNECTED") != 2 {
		t.Fatalf("control: %s", o)
	}
	mustRun(t, w.policy(), w.root, py+` -c 'import socket; a,b=socket.socketpair(); a.send(b"x"); assert b.recv(1)==b"x"'`)
	// With the network on the command's own Unix sockets work.
	p := w.policy()
	p.Network = true
	mustRun(t, p, w.root, py+` -c 'import socket,os; s=socket.socket(socket.AF_UNIX); s.bind("own.sock"); s.listen(); c=socket.socket(socket.AF_UNIX); c.connect("own.sock")'`)
}

// TestPrivateTmp: /tmp and /dev/shm inside are the sandbox's own: host
// files there are invisible and what the command leaves there is gone,
// while the session roots and temp dir below /tmp stay as they are.
func TestPrivateTmp(t *testing.T) {
	requireSandbox(t)
	w := newWorld(t)
	host, err := os.CreateTemp("/tmp", "acpd-host-")
	if err != nil {
		t.Fatal(err)
	}
	host.Close()
	t.Cleanup(func() { os.Remove(host.Name()) })
	shm := fmt.Sprintf("/dev/shm/acpd-test-%d", os.Getpid())
	os.WriteFile(shm, []byte("host"), 0o644)
	t.Cleanup(func() { os.Remove(shm) })
	left := fmt.Sprintf("/dev/shm/acpd-left-%d", os.Getpid())
	out := mustRun(t, w.policy(), w.root, fmt.Sprintf(`test ! -e %q && echo tmp-private; test ! -e %q && echo shm-private; echo x > %q && echo shm-writable; echo t > "$TMPDIR/t" && echo tmpdir-ok; echo r > f && echo root-ok`, host.Name(), shm, left))
	for _, want := range []string{"tmp-private", "shm-private", "shm-writable", "tmpdir-ok", "root-ok"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in:\n%s", want, out)
		}
	}
	if _, err := os.Stat(left); err == nil {
		os.Remove(left)
		t.Error("a file the command left in its /dev/shm appeared outside")
	}
	if _, err := os.Stat(filepath.Join(w.tmp, "t")); err != nil {
		t.Error("the session's temp dir below /tmp is not the host's")
	}
	// With /tmp itself as the temp dir, the private tmpfs is it.
	p := w.policy()
	p.TempDir = "/tmp"
	name := fmt.Sprintf("/tmp/acpd-private-%d", os.Getpid())
	mustRun(t, p, w.root, fmt.Sprintf(`echo x > %q && test ! -e %q`, name, host.Name()))
	if _, err := os.Stat(name); err == nil {
		os.Remove(name)
		t.Fatal("a file written to the private /tmp appeared in the host's")
	}
}

// TestTerminalInjection: TIOCSTI is refused on the command's own PTY
// (the filter) and the command's controlling terminal stays its own;
// a command that shares its invoker's terminal gets a session of its own.
func TestTerminalInjection(t *testing.T) {
	requireSandbox(t)
	py := python3(t)
	w := newWorld(t)
	inject := py + ` -c '
import fcntl,termios,os,errno
fd=os.open("/dev/tty", os.O_RDWR)
try:
    fcntl.ioctl(fd, termios.TIOCSTI, b"x"); print("INJECTED")
except OSError as e:
    print("TIOCSTI", errno.errorcode[e.errno])
'`
	runPTY := func(wrap bool) string {
		master, tty, err := pty.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer master.Close()
		cmd := exec.Command("bash", "-c", inject)
		cmd.Dir = w.root
		cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 1}
		if wrap {
			if err := w.policy().Wrap(cmd); err != nil {
				t.Fatal(err)
			}
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tty.Close()
		var out bytes.Buffer
		done := make(chan struct{})
		go func() { defer close(done); io.Copy(&out, master) }()
		cmd.Wait()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			master.Close()
			<-done
		}
		return out.String()
	}
	if b, _ := os.ReadFile("/proc/sys/dev/tty/legacy_tiocsti"); strings.TrimSpace(string(b)) == "1" {
		if out := runPTY(false); !strings.Contains(out, "INJECTED") {
			t.Fatalf("control: TIOCSTI unsandboxed: %q", out)
		}
	}
	if out := runPTY(true); !strings.Contains(out, "TIOCSTI EPERM") {
		t.Fatalf("TIOCSTI in the sandbox: %q, want EPERM", out)
	}
	// Started with the invoker's descriptors (no terminal of its own),
	// the command leads a new session.
	out := mustRun(t, w.policy(), w.root, py+` -c 'import os; print("leader", os.getsid(0) == os.getpid())'`)
	if !strings.Contains(out, "leader True") {
		t.Fatalf("the command does not lead its own session: %q", out)
	}
}

// TestLocalServerWithNetwork: with the network on a command's own HTTP
// server on loopback answers it.
func TestLocalServerWithNetwork(t *testing.T) {
	requireSandbox(t)
	py := python3(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	w := newWorld(t)
	os.WriteFile(filepath.Join(w.root, "index.html"), []byte("local-page\n"), 0o644)
	server := py + ` -c '
import http.server,threading,subprocess,functools
h=functools.partial(http.server.SimpleHTTPRequestHandler, directory=".")
s=http.server.HTTPServer(("127.0.0.1",0), h)
threading.Thread(target=s.serve_forever, daemon=True).start()
subprocess.run(["curl","-sS","http://127.0.0.1:%d/index.html" % s.server_port], check=True)
'`
	for _, network := range []bool{false, true} {
		p := w.policy()
		p.Network = network
		if out := mustRun(t, p, w.root, server+" 2>/dev/null"); !strings.Contains(out, "local-page") {
			t.Fatalf("network %v: %q", network, out)
		}
	}
}
