package replay

import (
	"os"
	"path/filepath"
	"testing"

	"acpd/model"
)

// FuzzParseScript checks that parsing never panics and that every script it
// accepts has the shape Stream relies on.
func FuzzParseScript(f *testing.F) {
	if data, err := os.ReadFile(filepath.Join("testdata", "example.jsonl")); err == nil {
		f.Add(data)
	}
	for _, s := range []string{
		"{\"type\":\"text\",\"text\":\"a\"}\n{\"type\":\"finish\"}\n",
		"{\"type\":\"tool_done\",\"toolCallId\":\"c\",\"toolName\":\"t\",\"input\":{\"x\":[1,2]}}\n{\"type\":\"finish\"}\n",
		"{\"type\":\"tool_start\",\"toolCallId\":\"c\",\"toolName\":\"t\"}\n{\"type\":\"tool_delta\",\"toolCallId\":\"c\",\"text\":\"{}\"}\n{\"type\":\"tool_done\",\"toolCallId\":\"c\"}\n{\"type\":\"finish\"}\n",
		"{\"type\":\"request\",\"model\":\"m\",\"messages\":1}\n{\"type\":\"delay\",\"ms\":5}\n{\"type\":\"error\",\"kind\":\"server\",\"status\":500}\n",
		"{\"type\":\"expect\",\"contains\":\"x\"}\n{\"type\":\"reasoning_done\",\"redacted\":true,\"opaque\":\"e\"}\n{\"type\":\"usage\",\"usage\":{}}\n{\"type\":\"finish\",\"finish\":\"refusal\"}\n",
		"# c\n\r\n{\"type\":null}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		responses, err := parseScript("fuzz.jsonl", data)
		if err != nil {
			return
		}
		if len(responses) == 0 {
			t.Fatal("accepted a script without responses")
		}
		for i, r := range responses {
			if len(r.steps) == 0 {
				t.Fatalf("response %d is empty", i)
			}
			started := map[string]bool{}
			delta := map[string]bool{}
			for j, s := range r.steps {
				last := j == len(r.steps)-1
				terminal := s.kind == stepError || s.kind == stepEvent && s.event.Type == model.EventFinish
				if terminal != last {
					t.Fatalf("response %d: step %d terminal=%v, last=%v", i, j, terminal, last)
				}
				if s.kind != stepEvent {
					continue
				}
				switch ev := s.event; ev.Type {
				case model.EventToolStart:
					started[ev.ToolCallID] = true
				case model.EventToolDelta:
					delta[ev.ToolCallID] = true
				case model.EventToolDone:
					if !started[ev.ToolCallID] || ev.ToolName == "" || len(ev.Input) == 0 {
						t.Fatalf("response %d: tool_done %+v without start, name or input", i, ev)
					}
				case model.EventFinish:
					if ev.Finish == "" {
						t.Fatalf("response %d: empty finish reason", i)
					}
				}
			}
		}
	})
}
