package openai

import (
	"io"
	"strings"
	"testing"

	"acpd/model"
)

// BenchmarkRequestLong: the request of a 500-turn conversation in the
// long-conversation row's shape (a prompt, a call of read_file, its 4 KiB
// result, a 1.5 KiB answer), from memoized messages (each encoded once,
// as in a session) and from messages encoded anew.
func BenchmarkRequestLong(b *testing.B) {
	file := strings.Repeat("// step runs stage 1 of the start-up and reports its error.\nfunc step() error { return nil }\n\n", 45)
	answer := strings.Repeat("The file declares the package's entry point and wires the store. ", 23)
	var transcript []model.Message
	for n := range 500 {
		transcript = append(transcript,
			model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "Turn: what does main.go do at start-up?"}}},
			model.Message{Role: model.RoleAssistant, Parts: []model.Part{{Type: model.PartToolUse, ToolCallID: "call_" + string(rune('a'+n%26)), ToolName: "read_file", Input: []byte(`{"path":"/tmp/main.go"}`)}}},
			model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartToolResult, ToolCallID: "call_" + string(rune('a'+n%26)), Content: []model.Part{{Type: model.PartText, Text: file}}}}},
			model.Message{Role: model.RoleAssistant, Parts: []model.Part{{Type: model.PartText, Text: answer}}},
		)
	}
	be := New(Options{})
	for _, memo := range []bool{true, false} {
		name := "anew"
		msgs := append([]model.Message(nil), transcript...)
		if memo {
			name = "memoized"
			for i := range msgs {
				msgs[i] = msgs[i].Memoized()
			}
		}
		req := &model.Request{Model: "gpt-test", System: "You are a test.", Messages: msgs}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := be.requestPayload(req)
				if err != nil {
					b.Fatal(err)
				}
				_ = p.Len()
			}
		})
		// The body written, as the transport does: the kept escapes make
		// it a copy of the texts' runs.
		b.Run(name+"/written", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := be.requestPayload(req)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.WriteTo(io.Discard); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
