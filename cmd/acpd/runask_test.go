//go:build unix

package main

import (
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"acpd/cmd/acpd/internal/run"
	"acpd/internal/syncbuf"
)

// askScript asks the user which database to use, then answers.
const askScript = `{"type":"tool_done","toolCallId":"call_ask","toolName":"ask_user","input":{"question":"Which database?","choices":["Postgres","SQLite"]}}
{"type":"finish"}
{"type":"text","text":"Noted."}
{"type":"finish"}
`

// askRun runs askScript under acpd run --output stream-json with args and
// returns ask_user's final tool_call_update (its card: the question and
// what became of it; the model's sentences are the tools package's
// tests'), the result and stderr.
func askRun(t *testing.T, args ...string) (told string, res run.Result, stderr string) {
	t.Helper()
	iso, project, script := runSetup(t, askScript)
	args = append(append([]string{"run", "--output", "stream-json", "--cwd", project, "--model", "replay/" + script}, args...), "pick a database")
	stdout, stderr, code := runCLI(t, iso.Env(), args...)
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	for _, l := range lines[:len(lines)-1] {
		if strings.Contains(l, `"toolCallId":"call_ask"`) && strings.Contains(l, `"status":"completed"`) {
			told = l
		}
	}
	return told, checkResult(t, lines[len(lines)-1]), stderr
}

// TestRunAnswersFile: --answers answers ask_user's form, by question (JSON)
// or in order (lines); the model is told the answer and the result lists
// the question.
func TestRunAnswersFile(t *testing.T) {
	t.Parallel()
	for name, file := range map[string]string{
		"json":  `{"Which database?": "sqlite", "*": null}`,
		"lines": "# the database\n2\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			answers := writeFile(t, filepath.Join(t.TempDir(), "answers"), file)
			told, res, stderr := askRun(t, "--answers", answers)
			if !strings.Contains(told, `Which database?\n\nAnswer: SQLite"`) {
				t.Errorf("the model was told %s; stderr:\n%s", told, stderr)
			}
			if len(res.Questions) != 1 || res.Questions[0].Message != "Which database?" || res.Questions[0].Action != "accepted" || res.Questions[0].By != "answers" {
				t.Errorf("questions %+v", res.Questions)
			}
			if a := res.Questions[0].Answer["question_0"]; a.String == nil || *a.String != "SQLite" {
				t.Errorf("answer %+v", res.Questions[0].Answer)
			}
			checkLog(t, "acpd run", stderr)
		})
	}
}

// TestRunQuestionDeclined: under --approve none, or without a terminal, a
// question --answers does not answer is declined, saying so, and the model
// is told the user declined; an answer that fits no choice declines too.
func TestRunQuestionDeclined(t *testing.T) {
	t.Parallel()
	wrong := writeFile(t, filepath.Join(t.TempDir(), "answers.json"), `{"Which database?": {"engine": "x"}}`)
	for _, tc := range []struct {
		name   string
		args   []string
		stderr string
		by     string
	}{
		{"approve none", []string{"--approve", "none"}, `declined the agent's question "Which database?": --approve none (answer it with --answers FILE)`, "policy"},
		{"no terminal", nil, `declined the agent's question "Which database?": stdin is not a terminal to ask on`, "no-terminal"},
		{"unfit answer", []string{"--answers", wrong, "--quiet"}, `the answer in --answers does not fit: the form has no field "engine"`, "answers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			told, res, stderr := askRun(t, tc.args...)
			if !strings.Contains(told, `Which database?\n\nDeclined."`) {
				t.Errorf("the model was told %s", told)
			}
			if !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.stderr, stderr)
			}
			if len(res.Questions) != 1 || res.Questions[0].Action != "declined" || res.Questions[0].By != tc.by {
				t.Errorf("questions %+v", res.Questions)
			}
			checkLog(t, "acpd run", stderr)
		})
	}
}

// TestRunAsksQuestionOnTerminal: with stdin a terminal, the question is
// asked there with its choices numbered, and a number picks a choice.
func TestRunAsksQuestionOnTerminal(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, askScript)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	cmd := exec.Command(acpdBinary(t), "run", "--output", "stream-json", "--cwd", project, "--model", "replay/"+script, "pick a database")
	cmd.Env = iso.Env()
	cmd.Stdin = tty
	stdout, stderr := &syncbuf.Buffer{}, &syncbuf.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		io.Copy(io.Discard, ptmx)
	}()
	deadline := time.Now().Add(*flagReplyWait)
	for !strings.Contains(stderr.String(), "answer (a number, or your own words; an empty line declines): ") {
		if time.Now().After(deadline) {
			t.Fatalf("the question was not asked; stderr:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := io.WriteString(ptmx, "2\n"); err != nil {
		t.Fatal(err)
	}
	if code := exitCode(t, cmd, stderr); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr.String())
	}
	<-drained
	for _, want := range []string{"? Which database?", "  1) Postgres", "  2) SQLite"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if !strings.Contains(stdout.String(), `Which database?\n\nAnswer: SQLite"`) {
		t.Errorf("the model was not told the answer:\n%s", stdout.String())
	}
	checkLog(t, "acpd run", stderr.String())
}

// TestRunLiveViewQuestion: the live view stops for the question, takes a
// choice's name, and goes on.
func TestRunLiveViewQuestion(t *testing.T) {
	t.Parallel()
	iso, project, script := runSetup(t, askScript)
	p := startPTYRun(t, iso.Env(), "run", "--cwd", project, "--model", "replay/"+script, "pick a database")
	p.waitFor("answer (a number, or your own words; an empty line declines):", 1)
	io.WriteString(p.ptmx, "sqlite\n")
	if code := p.wait(); code != 0 {
		t.Fatalf("exit %d; screen:\n%s", code, p.screen())
	}
	scr := p.screen()
	for _, want := range []string{"? Which database?", "  1) Postgres", "  2) SQLite", "✓ Which database?", "Noted."} {
		if !strings.Contains(scr, want) {
			t.Errorf("the screen lacks %q:\n%s", want, scr)
		}
	}
}
