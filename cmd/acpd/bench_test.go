package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkSpawnToInitialize measures an editor starting acpd: spawn the
// binary, send initialize, read the reply, close stdin and wait for the exit.

// updateParams is what the benchmarks read of a session/update
// notification's params: the kind and a chunk's text.
type updateParams struct {
	Update struct {
		Kind    string `json:"sessionUpdate"`
		Content struct {
			Text string `json:"text"`
		} `json:"content"`
	} `json:"update"`
}

func BenchmarkSpawnToInitialize(b *testing.B) {
	iso := newIsolation(b)
	acpdBinary(b)
	b.ResetTimer()
	for b.Loop() {
		p := startProc(b, iso.Env())
		p.initialize()
		p.close()
	}
}

// BenchmarkSessionNew measures session/new on one process (each creates and
// syncs a session log and the index).
func BenchmarkSessionNew(b *testing.B) {
	iso := newIsolation(b)
	project := b.TempDir()
	p := startProc(b, iso.Env())
	p.initialize()
	b.ResetTimer()
	for b.Loop() {
		p.newSession(project)
		// Drop the available_commands_update notifications and the record.
		p.backlog, p.got, p.sent = p.backlog[:0], p.got[:0], p.sent[:0]
	}
	b.StopTimer()
	p.close()
}

// BenchmarkStreamChunks measures a prompt turn whose model response streams
// streamChunks text events, end to end (prompt sent to reply read, all
// their text received, merged into however many agent_message_chunk updates
// the agent sent), and reports model chunks per second.
func BenchmarkStreamChunks(b *testing.B) {
	const streamChunks = 2000
	iso := newIsolation(b)
	project := b.TempDir()
	var script strings.Builder
	var want string
	for i := range streamChunks {
		fmt.Fprintf(&script, `{"type":"text","text":"chunk %d "}`+"\n", i)
		want += fmt.Sprintf("chunk %d ", i)
	}
	script.WriteString(`{"type":"finish"}` + "\n")
	path := writeFile(b, filepath.Join(b.TempDir(), "stream.jsonl"), script.String())
	p := startProc(b, iso.Env(), "--model", "replay/"+path)
	p.initialize()
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		// A new session per turn: the replay plays response 1 for a request
		// without assistant messages.
		sid := p.newSession(project)
		p.backlog = p.backlog[:0]
		b.StartTimer()
		var text strings.Builder
		id := p.request("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "stream"}}})
		for {
			m := decodeMsg(b, p.next())
			if m.isResponse() {
				if string(m.ID) != id || m.Error != nil {
					b.Fatalf("prompt reply: %s", m.raw)
				}
				break
			}
			var n updateParams
			if err := json.Unmarshal(m.Params, &n); err == nil && n.Update.Kind == "agent_message_chunk" {
				text.WriteString(n.Update.Content.Text)
			}
		}
		if text.String() != want {
			b.Fatalf("received %d bytes of text, want %d", text.Len(), len(want))
		}
		text.Reset()
		p.got, p.sent = p.got[:0], p.sent[:0] // do not keep every line of every iteration
	}
	b.ReportMetric(float64(streamChunks)*float64(b.N)/b.Elapsed().Seconds(), "chunks/s")
	b.StopTimer()
	p.close()
}
