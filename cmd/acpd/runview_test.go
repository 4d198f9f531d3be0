//go:build unix

package main

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"acpd/cmd/acpd/internal/run"
)

// screen is a tiny terminal: enough of one to replay what the live view
// writes (text, \r, \n, cursor up, erase below, erase right; colours and
// other sequences are dropped).
type screen struct {
	lines    []string
	row, col int
}

func (s *screen) feed(b []byte) {
	str := string(b)
	for i := 0; i < len(str); {
		c := str[i]
		switch {
		case c == '\r':
			s.col = 0
			i++
		case c == '\n':
			s.row++
			s.col = 0
			i++
		case c == 0x1b && i+1 < len(str) && str[i+1] == '[':
			j := i + 2
			for j < len(str) && (str[j] < 0x40 || str[j] > 0x7e) {
				j++
			}
			if j >= len(str) {
				return
			}
			arg, final := str[i+2:j], str[j]
			n, err := strconv.Atoi(arg)
			if err != nil || n == 0 {
				n = 1
			}
			switch final {
			case 'A':
				s.row = max(0, s.row-n)
			case 'J':
				s.grow()
				s.lines[s.row] = cut(s.lines[s.row], s.col)
				s.lines = s.lines[:s.row+1]
			case 'K':
				s.grow()
				s.lines[s.row] = cut(s.lines[s.row], s.col)
			}
			i = j + 1
		case c == 0x1b && i+1 < len(str) && str[i+1] == ']':
			j := strings.Index(str[i:], "\x1b\\")
			if j < 0 {
				return
			}
			i += j + 2
		case c == 0x1b:
			i += 2
		default:
			s.grow()
			r := []rune(s.lines[s.row])
			ch := []rune(str[i:])[0]
			for len(r) < s.col {
				r = append(r, ' ')
			}
			if s.col < len(r) {
				r[s.col] = ch
			} else {
				r = append(r, ch)
			}
			s.lines[s.row] = string(r)
			s.col++
			i += len(string(ch))
		}
	}
}

func (s *screen) grow() {
	for len(s.lines) <= s.row {
		s.lines = append(s.lines, "")
	}
}

func cut(line string, col int) string {
	r := []rune(line)
	if col < len(r) {
		return string(r[:col])
	}
	return line
}

func (s *screen) String() string { return strings.Join(s.lines, "\n") }

// ptyRun is acpd run on a pseudo-terminal (stdin, stdout and stderr; its
// controlling terminal), with the terminal's replies to colour queries.
type ptyRun struct {
	t    *testing.T
	ptmx *os.File
	cmd  *exec.Cmd
	mu   sync.Mutex
	raw  bytes.Buffer
	done chan struct{}
}

func startPTYRun(t *testing.T, env []string, args ...string) *ptyRun {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	pty.Setsize(ptmx, &pty.Winsize{Rows: 50, Cols: 120})
	cmd := exec.Command(acpdBinary(t), args...)
	cmd.Env = append(env, "TERM=xterm-256color")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	p := &ptyRun{t: t, ptmx: ptmx, cmd: cmd, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			if n > 0 {
				chunk := buf[:n]
				p.mu.Lock()
				p.raw.Write(chunk)
				p.mu.Unlock()
				// Answer like a terminal: background, foreground, cursor.
				if bytes.Contains(chunk, []byte("\x1b]11;?")) {
					io.WriteString(ptmx, "\x1b]11;rgb:0000/0000/0000\x1b\\")
				}
				if bytes.Contains(chunk, []byte("\x1b]10;?")) {
					io.WriteString(ptmx, "\x1b]10;rgb:ffff/ffff/ffff\x1b\\")
				}
				if bytes.Contains(chunk, []byte("\x1b[6n")) {
					io.WriteString(ptmx, "\x1b[1;1R")
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		ptmx.Close()
		<-p.done
	})
	return p
}

func (p *ptyRun) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.raw.String()
}

func (p *ptyRun) screen() string {
	var s screen
	s.feed([]byte(p.output()))
	return s.String()
}

// waitFor waits until the raw output has n occurrences of want.
func (p *ptyRun) waitFor(want string, n int) {
	p.t.Helper()
	deadline := time.Now().Add(*flagReplyWait)
	for strings.Count(p.screen(), want) < n {
		if time.Now().After(deadline) {
			p.t.Fatalf("%q did not appear %d times; screen:\n%s", want, n, p.screen())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (p *ptyRun) wait() int {
	p.t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(*flagReplyWait):
		p.cmd.Process.Kill()
		<-done
		p.t.Fatalf("acpd run did not exit; screen:\n%s", p.screen())
	}
	select { // the rest of the output
	case <-p.done:
	case <-time.After(*flagReplyWait):
	}
	return p.cmd.ProcessState.ExitCode()
}

// liveScript thinks, answers, edits a file and runs a command (each asked
// with one key), waits a little and ends.
const liveScript = `{"type":"reasoning","text":"The user wants a file; I will write it."}
{"type":"text","text":"Writing the file.\n"}
{"type":"tool_done","toolCallId":"call_p","toolName":"update_plan","input":{"entries":[{"content":"Write the file","status":"completed"},{"content":"Run the check","status":"in_progress"}]}}
{"type":"tool_done","toolCallId":"call_w","toolName":"write_file","input":{"path":"out.txt","content":"hello from run\n"}}
{"type":"tool_done","toolCallId":"call_r","toolName":"run_command","input":{"command":"echo ran-$((40+2)); sleep 1"}}
{"type":"finish"}
{"type":"delay","ms":1000}
{"type":"text","text":"All done."}
{"type":"finish"}
`

// TestRunLiveView runs acpd run on a real PTY and reads the screen: the
// spinner and in-place status, the thought folded, the diff, and both
// permission prompts answered with one key.
func TestRunLiveView(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, liveScript)
	p := startPTYRun(t, iso.Env(), "run", "--cwd", project, "--model", "replay/"+script, "write the file")
	p.waitFor("? Write out.txt", 1)
	p.waitFor("›", 1)
	io.WriteString(p.ptmx, "y")
	p.waitFor("? echo ran-$((40+2)); sleep 1", 1)
	p.waitFor("›", 2)
	io.WriteString(p.ptmx, "y")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, p.screen())
	}
	if got, _ := fileContent(filepath.Join(project, "out.txt")); got != "hello from run\n" {
		t.Errorf("out.txt = %q", got)
	}
	raw, scr := p.output(), p.screen()
	for _, want := range []string{"\x1b[A", "\x1b[J"} { // in place
		if !strings.Contains(raw, want) {
			t.Errorf("the output lacks %q", want)
		}
	}
	frames := 0 // the spinner turns
	for _, f := range run.SpinnerFrames() {
		if strings.Contains(raw, f) {
			frames++
		}
	}
	if frames < 2 {
		t.Errorf("the spinner did not turn (%d frames shown)", frames)
	}
	if !strings.Contains(raw, "\x1b[32m") {
		t.Errorf("nothing was coloured green (✓, +lines)")
	}
	for _, want := range []string{
		"✻ The user wants a file; I will write it.",
		"Writing the file.",
		"[y] Allow", "› Allow once",
		"✓ Write out.txt", "+hello from run",
		"$ echo ran-$((40+2)); sleep 1",
		"✓ echo ran-$((40+2)); sleep 1",
		"  └ ran-42", // the command's last output line
		"All done.",
		"☑ Write the file", "◐ Run the check",
		"end turn · 3 tool calls",
	} {
		if !strings.Contains(scr, want) {
			t.Errorf("the screen lacks %q:\n%s", want, scr)
		}
	}
	if strings.Contains(scr, "running") || strings.Contains(scr, "working") {
		t.Errorf("the live region was left on the screen:\n%s", scr)
	}
}

// TestRunLiveViewInterrupts: on a terminal, Ctrl-C cancels the turn and a
// second Ctrl-C exits (130), also when the agent ignores the cancel; the
// agent does not outlive acpd run.
func TestRunLiveViewInterrupts(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	iso, project, _ := runSetup(t, "")
	agent, err := filepath.Abs(filepath.Join("testdata", "hang_agent.py"))
	if err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "pid")
	p := startPTYRun(t, iso.Env(), "run", "--cwd", project, "--agent", py, "--agent-arg", agent, "--agent-arg", pidFile, "go")
	p.waitFor("Working on it", 1)
	io.WriteString(p.ptmx, "\x03")
	p.waitFor("cancelling the turn", 1)
	io.WriteString(p.ptmx, "\x03")
	if code := p.wait(); code != run.ExitCancelled {
		t.Errorf("exit %d, want %d; screen:\n%s", code, run.ExitCancelled, p.screen())
	}
	if !strings.Contains(p.screen(), "aborted") {
		t.Errorf("the screen lacks the abort:\n%s", p.screen())
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if !processGone(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the agent (pid %d) outlived acpd run", pid)
	}
}

// TestRunNoColorOnTerminal: with NO_COLOR the output on a terminal is the
// plain one: no colour, no cursor movement, no spinner.
func TestRunNoColorOnTerminal(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, liveScript)
	p := startPTYRun(t, append(iso.Env(), "NO_COLOR=1"), "run", "--yes", "--cwd", project, "--model", "replay/"+script, "write the file")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, p.screen())
	}
	raw := p.output()
	for _, bad := range []string{"\x1b[A", "\x1b[J", "\x1b[3", "\x1b[2m"} {
		if strings.Contains(raw, bad) {
			t.Errorf("the output has %q:\n%q", bad, raw)
		}
	}
	for _, f := range run.SpinnerFrames() {
		if strings.Contains(raw, f) {
			t.Errorf("a spinner frame %q was shown", f)
		}
	}
	for _, want := range []string{"✓ Write out.txt", "+hello from run", "All done.", "— end turn"} {
		if !strings.Contains(p.screen(), want) {
			t.Errorf("the screen lacks %q:\n%s", want, p.screen())
		}
	}
}

// TestRunLiveViewCommandOutput: on a terminal, a running command shows its
// last three lines; when it ends, its last five stay (all of them for a
// failed command). The first command waits for a file the test writes
// once it has seen the running lines.
func TestRunLiveViewCommandOutput(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, `{"type":"tool_done","toolCallId":"call_a","toolName":"run_command","input":{"command":"for i in 1 2 3 4 5 6; do echo live-$i; done; while [ ! -e go.flag ]; do sleep 0.05; done; echo live-7"}}
{"type":"tool_done","toolCallId":"call_b","toolName":"run_command","input":{"command":"for i in 1 2 3 4 5 6 7; do echo bad-$i; done; exit 2"}}
{"type":"finish"}
{"type":"text","text":"Done."}
{"type":"finish"}
`)
	p := startPTYRun(t, iso.Env(), "run", "--yes", "--cwd", project, "--model", "replay/"+script, "go")
	p.waitFor("  └ live-6", 1)
	if scr := p.screen(); !strings.Contains(scr, "  │ live-4\n  │ live-5\n  └ live-6") || strings.Contains(scr, "live-3") {
		t.Errorf("the running command's last three lines are not what is shown:\n%s", scr)
	}
	if err := os.WriteFile(filepath.Join(project, "go.flag"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, p.screen())
	}
	scr := p.screen()
	for _, want := range []string{
		"done; echo live-7\n  │ … 2 earlier lines (--verbose shows all)\n  │ live-3\n",
		"  └ live-7\n",
		"exit 2\n  │ bad-1\n  │ bad-2\n",
		"  └ bad-7\n",
	} {
		if !strings.Contains(scr, want) {
			t.Errorf("the screen lacks %q:\n%s", want, scr)
		}
	}
}
