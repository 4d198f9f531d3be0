package main

import (
	"path/filepath"
	"testing"
)

// TestInteropSteer drives prompts sent during a turn through the binary
// with the ACP TypeScript SDK client (testdata/interop/steer.mjs): a
// queued session/prompt becomes the next turn; _session/steering messages
// reach the running turn's very next model request (the expect lines of
// responses 5 and 7), shown and replayed by session/load in a new process
// in their place; a cancel drops the queued prompt and the waiting
// steering message and names both.
func TestInteropSteer(t *testing.T) {
	t.Parallel()
	r := newInteropRun(t)
	writeFile(t, filepath.Join(r.project, "a.txt"), "a\n")
	writeFile(t, filepath.Join(r.project, "b.txt"), "b\n")
	r.addReplay(t, "steer",
		`# 1: the first turn reads a.txt (held by the client meanwhile)`,
		`{"type":"expect","contains":"QUEUE-FIRST"}`,
		`{"type":"tool_done","toolCallId":"call_a","toolName":"read_file","input":{"path":"a.txt"}}`,
		`{"type":"finish"}`,
		`{"type":"text","text":"First answer."}`,
		`{"type":"finish"}`,
		`# 3: the queued prompt is the next turn and sees the first one`,
		`{"type":"expect","contains":"QUEUE-SECOND"}`,
		`{"type":"expect","contains":"First answer."}`,
		`{"type":"text","text":"Second answer."}`,
		`{"type":"finish"}`,
		`# 4: the steered turn reads b.txt (held while the client steers)`,
		`{"type":"expect","contains":"STEER-TURN"}`,
		`{"type":"tool_done","toolCallId":"call_b","toolName":"read_file","input":{"path":"b.txt"}}`,
		`{"type":"finish"}`,
		`# 5: the very next request has both steering messages`,
		`{"type":"expect","contains":"content of b.txt"}`,
		`{"type":"expect","contains":"STEER-ONE"}`,
		`{"type":"expect","contains":"STEER-TWO"}`,
		`{"type":"text","text":"Steered answer."}`,
		`{"type":"finish"}`,
		`# 6: a long answer, cancelled with a prompt queued and a steering message waiting`,
		`{"type":"text","text":"Starting the long one"}`,
		`{"type":"delay","ms":60000}`,
		`{"type":"text","text":"never sent"}`,
		`{"type":"finish"}`,
		`# 7: after session/load in a new process the transcript has the steering messages`,
		`{"type":"expect","contains":"STEER-TWO"}`,
		`{"type":"expect","contains":"AFTER-LOAD"}`,
		`{"type":"text","text":"Loaded."}`,
		`{"type":"finish"}`,
	)
	r.run(t, "steer", nil)
}
