package exec

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	osexec "os/exec"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"acpd/model"
)

// pluginEnvVar selects the test binary's plug-in mode (see runPlugin).
const pluginEnvVar = "ACPD_EXEC_TEST_PLUGIN"

// testPlugin is a plug-in served by the test binary itself, for the fault
// cases the example plug-in does not produce. The start-up mode comes from
// the environment; each request's behaviour from the last user text:
//
//	echo TEXT      text TEXT, finish
//	pid            text: the process id
//	env NAME       text: $NAME or <unset>
//	cwd            text: the working directory
//	die            text, a stderr line, exit 3
//	badjson        text, then a line that is not JSON
//	long N         a line of N bytes
//	error          an overloaded error (status 529, retry after 1.5s)
//	errorunknown   an error of an unknown kind
//	badevent       an event of an unknown type, then text and finish
//	neither        a line with neither event nor error
//	wait           text, then nothing until the request is cancelled
//	cancelled?     text: the cancelled request ids, comma-separated
//	pair N         text N:1, then, once two pairs are in flight, N:2, finish
//	unknownid      a line for another id, then finish
//	closeout       close stdout and hang
type testPlugin struct {
	outMu sync.Mutex
	mu    sync.Mutex
	// cancelled lists cancelled ids; waiting holds the requests of "wait".
	cancelled []string
	waiting   map[string]chan struct{}
	pairs     int
	pairsCond *sync.Cond
}

func (tp *testPlugin) send(line any) {
	b, _ := json.Marshal(line)
	tp.outMu.Lock()
	defer tp.outMu.Unlock()
	os.Stdout.Write(append(b, '\n'))
}

func (tp *testPlugin) event(id string, ev model.Event) {
	tp.send(map[string]any{"v": 1, "id": id, "event": ev})
}

func (tp *testPlugin) text(id, s string) { tp.event(id, model.Event{Type: model.EventText, Text: s}) }

func (tp *testPlugin) finish(id string) {
	tp.event(id, model.Event{Type: model.EventFinish, Finish: model.FinishEndTurn})
}

// runPlugin is the test binary's main in plug-in mode.
func runPlugin(mode string) {
	switch mode {
	case "sleep": // a grandchild for the process group test
		time.Sleep(time.Hour)
		return
	case "exit":
		fmt.Fprintln(os.Stderr, "cannot start: missing configuration")
		os.Exit(7)
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
	}
	tp := &testPlugin{waiting: map[string]chan struct{}{}}
	tp.pairsCond = sync.NewCond(&tp.mu)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	for in.Scan() {
		var msg struct {
			V       int            `json:"v"`
			Type    string         `json:"type"`
			ID      string         `json:"id"`
			ACPD    string         `json:"acpd"`
			Request *model.Request `json:"request"`
		}
		if err := json.Unmarshal(in.Bytes(), &msg); err != nil {
			fmt.Fprintln(os.Stderr, "bad line from acpd:", err)
			os.Exit(2)
		}
		switch msg.Type {
		case "hello":
			tp.hello(mode, msg.ACPD)
		case "request":
			go tp.answer(msg.ID, msg.Request)
		case "cancel":
			tp.mu.Lock()
			tp.cancelled = append(tp.cancelled, msg.ID)
			if ch := tp.waiting[msg.ID]; ch != nil {
				close(ch)
				delete(tp.waiting, msg.ID)
			}
			tp.mu.Unlock()
		}
	}
	os.Exit(0) // acpd closed our input
}

func (tp *testPlugin) hello(mode, version string) {
	models := []model.ModelInfo{{ID: "test-model", Name: "acpd " + version, ContextWindow: 1000, Tools: true}}
	switch mode {
	case "hang":
		return
	case "v2":
		tp.send(map[string]any{"v": 2, "type": "hello", "models": models})
	case "refuse":
		tp.send(map[string]any{"v": 1, "type": "hello", "error": map[string]string{"message": "needs acpd 9"}})
	case "notjson":
		os.Stdout.WriteString("hello world\n")
	case "noid":
		tp.send(map[string]any{"v": 1, "type": "hello", "models": []map[string]string{{"name": "x"}}})
	case "spawn":
		child := osexec.Command(os.Args[0])
		child.Env = append(os.Environ(), pluginEnvVar+"=sleep")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		models[0].Name = fmt.Sprint(child.Process.Pid)
		tp.send(map[string]any{"v": 1, "type": "hello", "models": models})
	default:
		tp.send(map[string]any{"v": 1, "type": "hello", "models": models})
	}
}

func (tp *testPlugin) answer(id string, req *model.Request) {
	var text string
	if n := len(req.Messages); n > 0 {
		text = req.Messages[n-1].Text()
	}
	cmd, arg, _ := strings.Cut(text, " ")
	switch cmd {
	case "echo":
		tp.text(id, arg)
		tp.finish(id)
	case "pid":
		tp.text(id, fmt.Sprint(os.Getpid()))
		tp.finish(id)
	case "marks":
		// The messages marked as breakpoints, and whether CacheAt
		// reached the plug-in.
		var marked []string
		for i, m := range req.Messages {
			if m.Cache {
				marked = append(marked, fmt.Sprint(i))
			}
		}
		tp.text(id, strings.Join(marked, ",")+fmt.Sprintf(" cacheAt=%v", req.CacheAt))
		tp.finish(id)
	case "cwd":
		wd, _ := os.Getwd()
		tp.text(id, wd)
		tp.finish(id)
	case "env":
		v, ok := os.LookupEnv(arg)
		if !ok {
			v = "<unset>"
		}
		tp.text(id, v)
		tp.finish(id)
	case "die":
		tp.text(id, "dying")
		fmt.Fprintln(os.Stderr, "fatal: boom")
		os.Exit(3)
	case "badjson":
		tp.text(id, "fine so far")
		tp.outMu.Lock()
		os.Stdout.WriteString("this is not json\n")
		tp.outMu.Unlock()
	case "long":
		var n int
		fmt.Sscan(arg, &n)
		tp.text(id, strings.Repeat("x", n))
		tp.finish(id)
	case "error":
		tp.send(map[string]any{"v": 1, "id": id, "error": map[string]any{"kind": "overloaded", "message": "busy", "status": 529, "retryAfterMs": 1500}})
	case "errorunknown":
		tp.send(map[string]any{"v": 1, "id": id, "error": map[string]any{"kind": "weird", "message": "odd"}})
	case "badevent":
		tp.event(id, model.Event{Type: "bogus"})
		tp.text(id, "ignored")
		tp.finish(id)
	case "neither":
		tp.send(map[string]any{"v": 1, "id": id})
	case "badargs", "goodargs":
		last := "1"
		if text == "goodargs" {
			last = "1}"
		}
		tp.event(id, model.Event{Type: model.EventToolStart, ToolCallID: "c1", ToolName: "t"})
		tp.event(id, model.Event{Type: model.EventToolDelta, ToolCallID: "c1", Text: `{"a":`})
		tp.event(id, model.Event{Type: model.EventToolDelta, ToolCallID: "c1", Text: last})
		tp.event(id, model.Event{Type: model.EventToolDone, ToolCallID: "c1", ToolName: "t"})
		tp.finish(id)
	case "wait":
		ch := make(chan struct{})
		tp.mu.Lock()
		tp.waiting[id] = ch
		tp.mu.Unlock()
		tp.text(id, "waiting")
		<-ch
	case "cancelled?":
		tp.mu.Lock()
		list := strings.Join(tp.cancelled, ",")
		tp.mu.Unlock()
		tp.text(id, list)
		tp.finish(id)
	case "pair":
		tp.text(id, arg+":1")
		tp.mu.Lock()
		tp.pairs++
		tp.pairsCond.Broadcast()
		for tp.pairs%2 != 0 {
			tp.pairsCond.Wait()
		}
		tp.mu.Unlock()
		tp.text(id, arg+":2")
		tp.finish(id)
	case "unknownid":
		tp.text("r999999", "not yours")
		tp.text(id, "mine")
		tp.finish(id)
	case "closeout":
		tp.outMu.Lock()
		os.Stdout.Close()
		time.Sleep(time.Hour)
	default:
		tp.text(id, "unknown command "+cmd)
		tp.finish(id)
	}
}
