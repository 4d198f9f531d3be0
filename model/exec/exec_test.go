package exec

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	osexec "os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/log"
	"go.uber.org/goleak"

	"acpd/internal/syncbuf"
	"acpd/model"
	"acpd/model/internal/sse/ssetest"
)

var streams = flag.Int("exec.streams", 8, "concurrent requests in TestConcurrentRequests")

func TestMain(m *testing.M) {
	if mode := os.Getenv(pluginEnvVar); mode != "" {
		runPlugin(mode)
		return
	}
	goleak.VerifyTestMain(m)
}

// newPlugin returns a Backend running the test binary as a plug-in in
// mode, closed at the end of the test.
func newPlugin(t *testing.T, mode string, opts Options) (*Backend, *syncbuf.Buffer) {
	t.Helper()
	logs := &syncbuf.Buffer{}
	opts.Command = []string{os.Args[0]}
	opts.Env = append(opts.Env, pluginEnvVar+"="+mode)
	opts.Logger = slog.New(log.NewWithOptions(logs, log.Options{Level: log.DebugLevel}))
	if opts.Version == "" {
		opts.Version = "0.test"
	}
	b := New(opts)
	b.killGrace = 200 * time.Millisecond
	// No test may depend on the read grace period to end a process: a
	// teardown that waits for it hangs the test.
	b.readGrace = time.Hour
	t.Cleanup(func() { b.Close() })
	return b, logs
}

func say(text string) *model.Request {
	return &model.Request{Model: "test-model", Messages: []model.Message{{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: text}}}}}
}

// texts returns the concatenated text events of res.
func texts(res ssetest.Result) string {
	var s strings.Builder
	for _, ev := range res.Events {
		if ev.Type == model.EventText {
			s.WriteString(ev.Text)
		}
	}
	return s.String()
}

// ask runs one request and returns its text, failing the test on errors.
func ask(t *testing.T, b *Backend, text string) string {
	t.Helper()
	res := ssetest.Collect(t, b.Stream(t.Context(), say(text)))
	if res.Error != nil {
		t.Fatalf("%q: %+v", text, res.Error)
	}
	return texts(res)
}

func TestEchoPlugin(t *testing.T) {
	python, err := osexec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is required under CI")
		}
		t.Skip("python3 not installed")
	}
	script, err := filepath.Abs("../../testdata/plugins/echo_plugin.py")
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncbuf.Buffer{}
	b := New(Options{Command: []string{python, script}, Version: "1.2.3",
		Logger: slog.New(log.NewWithOptions(logs, log.Options{Level: log.DebugLevel}))})
	defer b.Close()

	models, err := b.Models(t.Context())
	if err != nil || len(models) != 1 || models[0].ID != "echo" || !models[0].Tools {
		t.Fatalf("models = %+v, %v", models, err)
	}

	res := ssetest.Collect(t, b.Stream(t.Context(), say("hello plug-in world")))
	if res.Error != nil || texts(res) != "You said: hello plug-in world" {
		t.Fatalf("echo: %+v", res)
	}
	if n := len(res.Events); n != 7 || res.Events[0].Text != "You" || res.Events[n-2].Type != model.EventUsage || res.Events[n-1].Finish != model.FinishEndTurn {
		t.Errorf("echo events: %+v", res.Events)
	}

	res = ssetest.Collect(t, b.Stream(t.Context(), say(`now use tool read_file {"path": "go.mod"}`)))
	if res.Error != nil || len(res.Events) != 4 {
		t.Fatalf("tool: %+v", res)
	}
	start, done, fin := res.Events[0], res.Events[2], res.Events[3]
	if start.Type != model.EventToolStart || start.ToolName != "read_file" || !strings.HasPrefix(start.ToolCallID, "call_") ||
		done.Type != model.EventToolDone || done.ToolCallID != start.ToolCallID || !ssetest.JSONEqual(done.Input, []byte(`{"path":"go.mod"}`)) ||
		fin.Finish != model.FinishToolUse {
		t.Errorf("tool events: %+v", res.Events)
	}

	req := say("use tool read_file {}")
	req.Messages = append(req.Messages,
		model.Message{Role: model.RoleAssistant, Parts: []model.Part{{Type: model.PartToolUse, ToolCallID: start.ToolCallID, ToolName: "read_file", Input: done.Input}}},
		model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartToolResult, ToolCallID: start.ToolCallID, Content: []model.Part{{Type: model.PartText, Text: "module acpd"}}}}})
	res = ssetest.Collect(t, b.Stream(t.Context(), req))
	if res.Error != nil || texts(res) != "Tool said: module acpd" {
		t.Fatalf("tool result: %+v", res)
	}

	res = ssetest.Collect(t, b.Stream(t.Context(), say("use tool x {broken")))
	if res.Error == nil || res.Error.Kind != model.ErrInvalidRequest || !strings.Contains(res.Error.Message, "bad tool arguments") {
		t.Errorf("bad arguments: %+v", res)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "echo plug-in serving acpd 1.2.3") {
		t.Errorf("stderr not logged:\n%s", logs)
	}
}

func TestHandshakeFailures(t *testing.T) {
	tests := []struct {
		mode    string
		command []string
		want    string
	}{
		{mode: "hang", want: "did not answer the hello within 200ms"},
		{mode: "v2", want: "speaks protocol version 2; this acpd speaks version 1"},
		{mode: "refuse", want: "refused to start: needs acpd 9"},
		{mode: "notjson", want: "is not a JSON object"},
		{mode: "noid", want: "lists a model without an id"},
		{mode: "exit", want: "exit status 7"},
		{command: []string{"/nonexistent/acpd-plugin"}, want: "cannot start"},
		{command: []string{"acpd-no-such-plugin-in-path"}, want: "executable file not found"},
	}
	for _, tt := range tests {
		t.Run(tt.mode+strings.Join(tt.command, ""), func(t *testing.T) {
			opts := Options{}
			if tt.mode == "hang" {
				opts.HandshakeTimeout = 200 * time.Millisecond
			}
			b, _ := newPlugin(t, tt.mode, opts)
			if tt.command != nil {
				b.argv, b.name = tt.command, filepath.Base(tt.command[0])
			}
			for range 2 { // a failed start is tried again at the next call
				res := ssetest.Collect(t, b.Stream(t.Context(), say("echo hi")))
				if len(res.Events) != 0 || res.Error == nil || res.Error.Kind != model.ErrInvalidRequest || !strings.Contains(res.Error.Message, tt.want) {
					t.Fatalf("result = %+v, want an invalid_request error containing %q", res, tt.want)
				}
			}
			if _, err := b.Models(t.Context()); model.KindOf(err) != model.ErrInvalidRequest {
				t.Errorf("Models: %v", err)
			}
		})
	}
	t.Run("exit message", func(t *testing.T) {
		b, _ := newPlugin(t, "exit", Options{})
		_, err := b.Models(t.Context())
		if err == nil || !strings.Contains(err.Error(), "cannot start: missing configuration") {
			t.Errorf("err = %v, want the plug-in's last stderr line", err)
		}
	})
	t.Run("no command", func(t *testing.T) {
		res := ssetest.Collect(t, New(Options{}).Stream(t.Context(), say("hi")))
		if res.Error == nil || res.Error.Kind != model.ErrInvalidRequest {
			t.Errorf("result = %+v", res)
		}
	})
}

func TestModelsAndVersion(t *testing.T) {
	b, _ := newPlugin(t, "ok", Options{Version: "7.7.7"})
	m, err := b.Models(t.Context())
	if err != nil || len(m) != 1 || m[0].ID != "test-model" || m[0].Name != "acpd 7.7.7" || m[0].ContextWindow != 1000 {
		t.Fatalf("models = %+v, %v", m, err)
	}
	m[0].ID = "changed"
	if m2, _ := b.Models(t.Context()); m2[0].ID != "test-model" {
		t.Error("Models returned shared state")
	}
}

func TestDiesMidStream(t *testing.T) {
	b, logs := newPlugin(t, "ok", Options{})
	pid := ask(t, b, "pid")
	res := ssetest.Collect(t, b.Stream(t.Context(), say("die")))
	if len(res.Events) != 1 || res.Events[0].Text != "dying" || res.Error == nil || res.Error.Kind != model.ErrNetwork ||
		!strings.Contains(res.Error.Message, "exit status 3") || !strings.Contains(res.Error.Message, "fatal: boom") {
		t.Fatalf("result = %+v", res)
	}
	// The next request restarts the plug-in.
	if pid2 := ask(t, b, "pid"); pid2 == pid || pid2 == "" {
		t.Errorf("pid %s after restart, was %s", pid2, pid)
	}
	if !strings.Contains(logs.String(), "fatal: boom") {
		t.Errorf("stderr not logged:\n%s", logs)
	}
}

func TestProtocolErrors(t *testing.T) {
	tests := []struct {
		request string
		want    string
		events  int
	}{
		{"badjson", "line 7 is not a JSON object", 1},
		{"long 70000", "longer than 65536 bytes", 0},
		{"closeout", "closed its standard output", 0},
	}
	for _, tt := range tests {
		t.Run(tt.request, func(t *testing.T) {
			b, _ := newPlugin(t, "ok", Options{})
			b.maxLine = 1 << 16
			b.readGrace = 300 * time.Millisecond // for closeout
			if got := ask(t, b, "long 60000"); len(got) != 60000 {
				t.Fatalf("a line within the limit: %d bytes", len(got))
			}
			pid := ask(t, b, "pid")
			res := ssetest.Collect(t, b.Stream(t.Context(), say(tt.request)))
			if len(res.Events) != tt.events || res.Error == nil || !strings.Contains(res.Error.Message, tt.want) {
				t.Fatalf("result = %+v, want %q", res, tt.want)
			}
			if k := res.Error.Kind; k != model.ErrServer && k != model.ErrNetwork {
				t.Errorf("kind %s is not retryable", k)
			}
			if pid2 := ask(t, b, "pid"); pid2 == pid {
				t.Error("the plug-in was not restarted")
			}
		})
	}
}

func TestTypedErrors(t *testing.T) {
	b, _ := newPlugin(t, "ok", Options{})
	res := ssetest.Collect(t, b.Stream(t.Context(), say("error")))
	want := &ssetest.Error{Kind: model.ErrOverloaded, Status: 529, RetryAfterMS: 1500, Message: "busy"}
	if len(res.Events) != 0 || res.Error == nil || *res.Error != *want {
		t.Errorf("result = %+v", res)
	}
	res = ssetest.Collect(t, b.Stream(t.Context(), say("errorunknown")))
	if res.Error == nil || res.Error.Kind != model.ErrServer || res.Error.Message != "odd" {
		t.Errorf("unknown kind: %+v", res)
	}
	if got := ask(t, b, "cancelled?"); got != "" {
		t.Errorf("requests ended by the plug-in were cancelled: %q", got)
	}
}

func TestInvalidLines(t *testing.T) {
	b, _ := newPlugin(t, "ok", Options{})
	pid := ask(t, b, "pid")
	res := ssetest.Collect(t, b.Stream(t.Context(), say("badevent")))
	if len(res.Events) != 0 || res.Error == nil || res.Error.Kind != model.ErrServer || !strings.Contains(res.Error.Message, `unknown event type "bogus"`) {
		t.Fatalf("badevent: %+v", res)
	}
	res = ssetest.Collect(t, b.Stream(t.Context(), say("neither")))
	if res.Error == nil || !strings.Contains(res.Error.Message, "neither an event nor an error") {
		t.Fatalf("neither: %+v", res)
	}
	// A tool call whose streamed arguments are not JSON fails the request
	// at its tool_done, which never reaches the assembler.
	res = ssetest.Collect(t, b.Stream(t.Context(), say("badargs")))
	if res.Error == nil || res.Error.Kind != model.ErrServer || !strings.Contains(res.Error.Message, `tool call "c1": its streamed arguments are not valid JSON`) {
		t.Fatalf("badargs: %+v", res)
	}
	for _, ev := range res.Events {
		if ev.Type == model.EventToolDone {
			t.Fatalf("badargs: the tool_done was delivered: %+v", ev)
		}
	}
	res = ssetest.Collect(t, b.Stream(t.Context(), say("goodargs")))
	var a model.Assembler
	for _, ev := range res.Events {
		a.Add(ev)
	}
	if res.Error != nil || len(a.Calls()) != 1 || string(a.Calls()[0].Input) != `{"a":1}` {
		t.Fatalf("goodargs: %+v", res)
	}
	if got := ask(t, b, "unknownid"); got != "mine" {
		t.Errorf("unknownid: %q", got)
	}
	// acpd cancelled the requests it stopped listening to; the process
	// survived.
	if got := ask(t, b, "cancelled?"); got != "r2,r3,r4" {
		t.Errorf("cancelled = %q", got)
	}
	if ask(t, b, "pid") != pid {
		t.Error("the plug-in was restarted")
	}
}

func TestCancel(t *testing.T) {
	b, _ := newPlugin(t, "ok", Options{})
	for ev, err := range b.Stream(t.Context(), say("wait")) { // r1
		if err != nil || ev.Text != "waiting" {
			t.Fatalf("got %+v, %v", ev, err)
		}
		break
	}
	ctx, cancel := context.WithCancel(t.Context())
	var last error
	for ev, err := range b.Stream(ctx, say("wait")) { // r2
		if err != nil {
			last = err
			break
		}
		if ev.Text == "waiting" {
			cancel()
		}
	}
	if last != context.Canceled {
		t.Errorf("err = %v", last)
	}
	if got := ask(t, b, "cancelled?"); got != "r1,r2" {
		t.Errorf("cancelled = %q", got)
	}
	ctx, cancel = context.WithCancel(t.Context())
	cancel()
	res := ssetest.Collect(t, b.Stream(ctx, say("echo x")))
	if res.Error == nil || res.Error.Message != context.Canceled.Error() {
		t.Errorf("cancelled context: %+v", res)
	}
}

// TestBackend runs the contract every backend keeps (package ssetest) on
// a plug-in whose answer to "wait" stalls after "waiting".
func TestBackend(t *testing.T) {
	ssetest.TestBackend(t, ssetest.Factory{Stalled: func(t *testing.T) ssetest.Stalled {
		b, _ := newPlugin(t, "ok", Options{})
		return ssetest.Stalled{Backend: b, Request: say("wait"), Text: "waiting"}
	}})
}

func TestConcurrentRequests(t *testing.T) {
	b, _ := newPlugin(t, "ok", Options{})
	// Two requests that can only finish while both are in flight.
	var wg sync.WaitGroup
	results := make([]ssetest.Result, 2)
	for i := range results {
		wg.Go(func() { results[i] = ssetest.Collect(t, b.Stream(t.Context(), say(fmt.Sprintf("pair %d", i)))) })
	}
	wg.Wait()
	for i, res := range results {
		if res.Error != nil || texts(res) != fmt.Sprintf("%d:1%d:2", i, i) {
			t.Errorf("pair %d: %+v", i, res)
		}
	}
	// Many at once, each getting its own answer.
	out := make([]string, *streams)
	for i := range out {
		wg.Go(func() { out[i] = ask(t, b, "echo "+strconv.Itoa(i)) })
	}
	wg.Wait()
	for i, got := range out {
		if got != strconv.Itoa(i) {
			t.Errorf("request %d got %q", i, got)
		}
	}
}

func TestEnvironment(t *testing.T) {
	t.Setenv("ACPD_TEST_API_KEY", "s3cret")
	t.Setenv("ACPD_TEST_PLAIN", "visible")
	t.Setenv("ACPD_TEST_OVERRIDE", "parent")
	dir := t.TempDir()
	b, _ := newPlugin(t, "ok", Options{Env: []string{"ACPD_TEST_EXTRA=1", "ACPD_TEST_OVERRIDE=configured", "ACPD_TEST_GIVEN_TOKEN=ok"}, Dir: dir})
	for name, want := range map[string]string{
		"ACPD_TEST_API_KEY":     "<unset>",
		"ACPD_TEST_PLAIN":       "visible",
		"ACPD_TEST_EXTRA":       "1",
		"ACPD_TEST_OVERRIDE":    "configured",
		"ACPD_TEST_GIVEN_TOKEN": "ok", // configured explicitly
	} {
		if got := ask(t, b, "env "+name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got := ask(t, b, "cwd"); got != dir {
		t.Errorf("working directory %q, want %q", got, dir)
	}
}

func TestPluginEnv(t *testing.T) {
	// The names only this package's old filter dropped, and one only the
	// terminal's dropped: plug-ins now get the stricter union.
	for _, name := range []string{"GITHUB_TOKENS", "DOCKER_AUTH_CONFIG", "REDIS_CREDENTIALS", "SESSION_COOKIE", "SMTP_PASS", "NPM_CONFIG__AUTH", "SSH_AUTH_SOCK", "AWS_ACCESS_KEY_ID", "GOOGLE_APPLICATION_CREDENTIALS", "MY_PASS", "private_key_path"} {
		if got := pluginEnv([]string{name + "=s"}, nil, nil, nil); len(got) != 0 {
			t.Errorf("%s inherited: %q", name, got)
		}
	}
	got := pluginEnv([]string{"A=1", "X_TOKEN=t", "=weird", "noequals", "B=2=3", "PASSAGE=p", "KEYBOARD_LAYOUT=us"}, []string{"C=4"}, nil, nil)
	if strings.Join(got, " ") != "A=1 B=2=3 PASSAGE=p KEYBOARD_LAYOUT=us C=4" {
		t.Errorf("pluginEnv = %q", got)
	}
	// Hidden names go whatever they look like (another provider's key in
	// an ordinary-looking variable) and whatever allow says.
	got = pluginEnv([]string{"A=1", "WORK_CREDS=k", "B=2", "GH_TOKEN=g", "X_TOKEN=x"}, nil, []string{"WORK_CREDS", "*_TOKEN"}, []string{"WORK_CREDS"})
	if strings.Join(got, " ") != "A=1 B=2 GH_TOKEN=g X_TOKEN=x" {
		t.Errorf("pluginEnv with allowed and hidden names = %q", got)
	}
}

func TestClose(t *testing.T) {
	b, _ := newPlugin(t, "stubborn", Options{})
	started := make(chan struct{})
	var res ssetest.Result
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev, err := range b.Stream(context.Background(), say("wait")) {
			if err != nil {
				res.Error = ssetest.ErrorOf(err)
				break
			}
			res.Events = append(res.Events, ev)
			close(started)
		}
	}()
	<-started
	if err := b.Close(); err != nil { // SIGTERM is ignored: SIGKILL after the grace
		t.Fatal(err)
	}
	<-done
	if res.Error == nil || res.Error.Kind != model.ErrNetwork || !strings.Contains(res.Error.Message, "closed") {
		t.Errorf("in-flight stream: %+v", res)
	}
	if err := b.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	after := ssetest.Collect(t, b.Stream(t.Context(), say("echo hi")))
	if after.Error == nil || after.Error.Kind != model.ErrInvalidRequest || !strings.Contains(after.Error.Message, "closed") {
		t.Errorf("after Close: %+v", after)
	}
	if _, err := b.Models(t.Context()); err == nil {
		t.Error("Models after Close succeeded")
	}
}

// TestCloseKillsGroup checks that Close also stops what the plug-in
// started.
func TestCloseKillsGroup(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	b, _ := newPlugin(t, "spawn", Options{})
	m, err := b.Models(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	child, err := strconv.Atoi(m[0].Name)
	if err != nil {
		t.Fatalf("child pid %q", m[0].Name)
	}
	if !alive(child) {
		t.Fatal("the grandchild is not running")
	}
	b.Close()
	// The grandchild was killed; its new parent reaps it at its own pace.
	deadline := time.Now().Add(10 * time.Second)
	for alive(child) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still running after Close", child)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether pid runs (exists and is not a zombie).
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

func TestReadLine(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader("a\r\nbb\n\n"+strings.Repeat("c", 20)+"\n"+strings.Repeat("d", 21)+"\nlast"), 16)
	var got []string
	for {
		line, err := readLine(r, 20)
		if err != nil {
			got = append(got, "err:"+err.Error())
			if err == errLineTooLong {
				continue // not resumable in real use; here it shows the position
			}
			break
		}
		got = append(got, string(line))
	}
	want := []string{"a", "bb", "", strings.Repeat("c", 20), "err:line too long"}
	if strings.Join(got[:min(len(got), 5)], "|") != strings.Join(want, "|") {
		t.Errorf("lines = %q", got)
	}
}

// FuzzLine feeds arbitrary plug-in output through the line reader and the
// message decoder.
func FuzzLine(f *testing.F) {
	for _, seed := range []string{
		`{"v":1,"type":"hello","models":[{"id":"m"}]}`,
		`{"v":1,"id":"r1","event":{"type":"text","text":"hi"}}`,
		`{"v":1,"id":"r1","event":{"type":"tool_done","toolCallId":"c","input":{"a":1}}}`,
		`{"v":1,"id":"r1","event":{"type":"finish","finish":"end_turn"}}`,
		`{"v":1,"id":"r1","event":{"type":"usage","usage":{"inputTokens":1}}}`,
		`{"v":1,"id":"r1","error":{"kind":"rate_limit","message":"slow","retryAfterMs":10}}`,
		`{"v":1,"id":"r1","event":{"type":"finish"},"error":{}}`,
		"{\"v\":1}\r\n\n\n",
		"not json",
	} {
		f.Add([]byte(seed + "\n"))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReaderSize(bytes.NewReader(data), 16)
		for {
			line, err := readLine(r, 1<<10)
			if err != nil {
				if err != errLineTooLong && len(line) != 0 {
					t.Fatalf("line with error %v", err)
				}
				return
			}
			if len(line) > 1<<10 || bytes.ContainsAny(line, "\n") {
				t.Fatalf("bad line %q", line)
			}
			var in inLine
			if json.Unmarshal(line, &in) != nil || in.ID == "" {
				continue
			}
			m, terminal := decodeMessage(&in)
			switch {
			case m.err != nil:
				if !terminal || model.KindOf(m.err) == "" {
					t.Fatalf("error message %+v, terminal %v", m, terminal)
				}
			case terminal != (m.ev.Type == model.EventFinish):
				t.Fatalf("terminal %v for %+v", terminal, m.ev)
			default:
				if _, err := json.Marshal(m.ev); err != nil {
					t.Fatalf("event does not marshal: %v", err)
				}
			}
		}
	})
}

// TestBreakpointsAreMarks: the protocol marks breakpoints on the messages,
// whether the request has them there or as Request.CacheAt.
func TestBreakpointsAreMarks(t *testing.T) {
	b, _ := newPlugin(t, "ok", Options{})
	req := say("first")
	req.Messages = append(req.Messages,
		model.Message{Role: model.RoleAssistant, Parts: []model.Part{{Type: model.PartText, Text: "ok"}}},
		model.Message{Role: model.RoleUser, Cache: true, Parts: []model.Part{{Type: model.PartText, Text: "second"}}},
		model.Message{Role: model.RoleAssistant, Parts: []model.Part{{Type: model.PartText, Text: "ok"}}},
		model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "marks"}}})
	req.CacheAt = []int{4, 0}
	res := ssetest.Collect(t, b.Stream(t.Context(), req))
	if res.Error != nil {
		t.Fatal(res.Error)
	}
	if got := texts(res); got != "0,2,4 cacheAt=[]" {
		t.Errorf("the plug-in saw %q, want the messages 0, 2 and 4 marked and no cacheAt", got)
	}
	if req.Messages[0].Cache || req.Messages[4].Cache || len(req.CacheAt) != 2 {
		t.Error("the request was modified")
	}
}
