package run

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/log"

	"acpd/acp"
)

var flagUpdate = flag.Bool("update", false, "rewrite golden files")

// scriptedTurn is a turn as an agent reports it: a thought, text, a plan,
// an edit with its diff, a command that fails, usage, and more text.
const scriptedTurn = `{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"Let me look."}}
{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":" The test is wrong."}}
{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"I will fix "},"messageId":"m1"}
{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"the test."},"messageId":"m1"}
{"sessionUpdate":"plan","entries":[{"content":"Fix the assertion","status":"in_progress","priority":"high"},{"content":"Run the tests","status":"pending","priority":"medium"}]}
{"sessionUpdate":"tool_call","toolCallId":"t1","title":"edit_file","kind":"edit","status":"pending"}
{"sessionUpdate":"tool_call_update","toolCallId":"t1","title":"Edit main_test.go","status":"in_progress","locations":[{"path":"/p/main_test.go"}]}
{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[{"type":"diff","path":"/p/main_test.go","oldText":"package main\n\nfunc TestAdd(t *testing.T) {\n\tif add(1, 2) != 4 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n","newText":"package main\n\nfunc TestAdd(t *testing.T) {\n\tif add(1, 2) != 3 {\n\t\tt.Fatal(\"bad\")\n\t}\n}\n"}]}
{"sessionUpdate":"plan","entries":[{"content":"Fix the assertion","status":"completed","priority":"high"},{"content":"Run the tests","status":"in_progress","priority":"medium"}]}
{"sessionUpdate":"tool_call","toolCallId":"t2","title":"Run go test ./...","kind":"execute","status":"in_progress","rawInput":{"command":"go test ./..."}}
{"sessionUpdate":"tool_call_update","toolCallId":"t2","status":"failed"}
{"sessionUpdate":"usage_update","used":12345,"size":200000,"cost":{"amount":0.0123,"currency":"USD"}}
{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Fixed; the tests need a network.\n"},"messageId":"m2"}
`

// TestRunPlainGolden renders a scripted turn as acpd run does without a
// terminal (testdata/run-plain.golden; go test -update rewrites it).
func TestRunPlainGolden(t *testing.T) {
	var stdout, stderr bytes.Buffer
	r := &runner{
		flags:  &Flags{output: outputText},
		log:    log.New(&stderr),
		stdout: &stdout,
		stderr: &stderr,
		tools:  map[acp.ToolCallID]*toolInfo{},
		files:  map[string]bool{},
		sid:    "s1",
		stop:   acp.StopReasonEndTurn,
	}
	r.out = newOutput(r, false, false)
	for i, l := range strings.Split(strings.TrimSpace(scriptedTurn), "\n") {
		var u acp.SessionUpdate
		if err := json.Unmarshal([]byte(l), &u); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		r.update(acp.SessionNotification{SessionID: "s1", Update: u})
	}
	r.out.stop()
	res := r.result(0, "")
	res.DurationMs = 4200
	r.out.result(res)
	got := "--- stdout\n" + stdout.String() + "--- stderr\n" + stderr.String()

	golden := filepath.Join("testdata", "run-plain.golden")
	if *flagUpdate {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("plain rendering differs from %s (go test -update rewrites it):\n%s", golden, got)
	}
	if res.FilesChanged[0] != "/p/main_test.go" || res.Usage.ContextUsed != 12345 || res.ToolCalls[1].Status != "failed" {
		t.Errorf("result %+v", res)
	}
}

// TestSameFileBreaksLines: with stdout and stderr one file (2>&1 into a
// pipe or a log), the answer's partial line ends before a tool's line.
func TestSameFileBreaksLines(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	other, err := os.CreateTemp(t.TempDir(), "other")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if !sameFile(f, f) || sameFile(f, other) || sameFile(f, io.Discard) {
		t.Fatal("sameFile")
	}
	o := &plainOutput{stdout: f, stderr: f, breakLines: sameFile(f, f), shown: func(toolInfo) int { return 0 }}
	msg := acp.MessageID("m1")
	o.update(acp.SessionNotification{Update: acp.SessionUpdate{AgentMessageChunk: &acp.ContentChunk{Content: acp.ContentBlock{Text: &acp.TextContent{Text: "Hello."}}, MessageID: &msg}}}, toolInfo{})
	o.update(acp.SessionNotification{Update: acp.SessionUpdate{Plan: &acp.Plan{Entries: []acp.PlanEntry{{Content: "step", Status: acp.PlanEntryStatusPending, Priority: acp.PlanEntryPriorityMedium}}}}}, toolInfo{})
	data, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "Hello.\n▸ plan\n") {
		t.Errorf("the log reads %q", data)
	}
}
