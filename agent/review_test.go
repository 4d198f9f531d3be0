package agent

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"acpd/acp"
)

// /review on a real repository: the model gets the uncommitted diff and
// the reviewing instructions, its findings reach the editor as a tool call
// with clickable locations inside the project, and a clean tree or a bad
// argument is answered without a model request.
func TestReviewCommand(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	env := newEnv(t, "")
	git := gitRepo(t, env)
	env.write("calc.go", "package calc\n\nfunc Div(a, b int) int {\n\treturn a / b\n}\n")
	git("add", "calc.go")
	git("commit", "-q", "-m", "calc")

	answer := "- [P1] Division by zero panics — calc.go:4\n  Check b first.\n- [P2] Invented file — ../outside.go:1\n\nThe change needs work."
	rec := record(env.script(textLine(t, answer), `{"type":"finish"}`))
	env.setModel(mainModel, rec)
	c, sid := env.fullSession()

	c.mustPrompt(sid, "/review", acp.StopReasonEndTurn)
	if n := len(rec.requests()); n != 0 {
		t.Fatalf("a clean tree made %d model requests", n)
	}
	if got := chunkText(c.allUpdates(sid)); !strings.Contains(got, "nothing to review") {
		t.Errorf("clean tree answer: %q", got)
	}
	c.mustPrompt(sid, "/review base", acp.StopReasonEndTurn)
	if n := len(rec.requests()); n != 0 {
		t.Fatalf("a bad argument made %d model requests", n)
	}

	env.write("calc.go", "package calc\n\nfunc Div(a, b int) int {\n\treturn a / b / 1\n}\n")
	before := len(c.allUpdates(sid))
	c.mustPrompt(sid, "/review look at panics", acp.StopReasonEndTurn)
	reqs := rec.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests, want 1", len(reqs))
	}
	msgs := reqs[0].Messages
	got := msgs[len(msgs)-1].Text()
	for _, want := range []string{"Review the uncommitted changes", "+\treturn a / b / 1", "focus on: look at panics", "[P0] Title — path/to/file.go:LINE"} {
		if !strings.Contains(got, want) {
			t.Errorf("the model's prompt lacks %q:\n%s", want, got)
		}
	}
	var card *acp.ToolCall
	for _, u := range c.allUpdates(sid)[before:] {
		if u.ToolCall != nil && u.ToolCall.Name != nil && *u.ToolCall.Name == "review" {
			card = u.ToolCall
		}
	}
	if card == nil {
		t.Fatal("no review findings tool call")
	}
	want := filepath.Join(env.cwd, "calc.go")
	if real, err := filepath.EvalSymlinks(env.cwd); err == nil {
		want = filepath.Join(real, "calc.go")
	}
	if card.Status != acp.ToolCallStatusCompleted || len(card.Locations) != 1 || card.Locations[0].Path != want || card.Locations[0].Line == nil || *card.Locations[0].Line != 4 {
		t.Errorf("findings card: %+v (locations %+v)", card, card.Locations)
	}
	if card.Title != "Review: 1 finding" {
		t.Errorf("card title %q", card.Title)
	}
}

// textLine is a replay script line answering text.
func textLine(t *testing.T, text string) string {
	b, err := json.Marshal(map[string]string{"type": "text", "text": text})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A hostile repository's configuration runs nothing when /review reads
// its changes: a filter driver, an fsmonitor hook and an external diff
// all name a command that would leave a mark.
func TestReviewRunsNoRepositoryCommand(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	env := newEnv(t, "")
	mark := filepath.Join(env.base, "ran")
	git := gitRepo(t, env)
	env.write("a.txt", "one\n")
	git("add", "a.txt")
	git("commit", "-q", "-m", "a")
	evil := "sh -c 'echo ran >> " + mark + "; cat'"
	git("config", "filter.evil.clean", evil)
	git("config", "filter.evil.process", evil)
	git("config", "core.fsmonitor", evil)
	git("config", "diff.external", evil)
	git("config", "diff.evil.textconv", evil)
	env.write(".gitattributes", "* filter=evil diff=evil\n")
	env.write("a.txt", "two\n")

	rec := record(env.script(textLine(t, "The change looks correct."), `{"type":"finish"}`))
	env.setModel(mainModel, rec)
	c, sid := env.fullSession()
	c.mustPrompt(sid, "/review", acp.StopReasonEndTurn)
	if len(rec.requests()) != 1 || !strings.Contains(rec.requests()[0].Messages[len(rec.requests()[0].Messages)-1].Text(), "+two") {
		t.Fatalf("the model did not get the diff")
	}
	if b, err := os.ReadFile(mark); err == nil {
		t.Fatalf("a repository command ran during /review: %q", b)
	}
}

// gitRepo makes the project a git repository on branch main with a
// committer set, and returns a runner of git commands in it.
func gitRepo(t *testing.T, env *testEnv) func(args ...string) {
	t.Helper()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = env.cwd
		cmd.Env = append(cmd.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+env.base)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("config", "user.email", "t@example.invalid")
	git("config", "user.name", "t")
	return git
}
