// Package loadfixture writes the stored session that the session/load
// benchmarks replay (agent's BenchmarkLoad10k, cmd/acpd's
// BenchmarkTableLoad10k): a long conversation logged one record per
// streamed delta, as acpd logged before it merged text, with realistic
// sizes (about 2 MB for 10,000 records). It is for benchmarks only.
package loadfixture

import (
	"encoding/json"
	"fmt"
	"strings"

	"acpd/acp"
	"acpd/session"
)

// Write creates a session in store with cwd and n "update" records, then
// closes it: per ten records a user text chunk (a prompt of two
// sentences), seven agent message chunks of one message (a streamed answer, a
// sentence each), a read tool call (title, kind, raw input, location) and
// its completing update (the file's text, about 100 bytes, as content and
// raw output). It returns the session id and the log's path.
func Write(store *session.Store, cwd string, n int) (id, path string, err error) {
	l, err := store.Create(session.Meta{Cwd: cwd})
	if err != nil {
		return "", "", err
	}
	for i := range n {
		if _, err := l.Append("update", json.RawMessage(Update(cwd, i))); err != nil {
			l.Close()
			return "", "", err
		}
	}
	if err := l.Close(); err != nil {
		return "", "", err
	}
	return l.ID(), store.Dir() + "/sessions/" + l.ID() + ".jsonl", nil
}

// prompt is a user's request, as typed: a few sentences.
const prompt = "The parser drops the last token when the input has no trailing newline. " +
	"Please find where parser.go handles the end of input and fix it."

// source is what the read tool returns: a stretch of Go source.
const source = "func (p *Parser) next() Token {\n\tif p.pos >= len(p.toks) {\n" +
	"\t\treturn Token{Kind: EOF}\n\t}\n\tp.pos++\n\treturn p.toks[p.pos-1]\n}\n"

// sentences are the streamed deltas of an answer, one per record.
var sentences = []string{
	"The end of input is handled ",
	"in next(): without a newline ",
	"the lexer never emits the ",
	"final token, so the line ",
	"counter stays one behind. ",
	"I will flush it at EOF ",
	"and add a test.\n\n",
}

// Update returns the JSON of record i's update in a session in cwd, as
// acpd encodes it (package acp).
func Update(cwd string, i int) []byte {
	msg := acp.MessageID(fmt.Sprintf("m_%d", i/10))
	var u acp.SessionUpdate
	switch k := i % 10; k {
	case 0:
		id := msg + "u"
		u.UserMessageChunk = &acp.ContentChunk{Content: textBlock(prompt), MessageID: &id}
	case 8:
		file := cwd + "/parser/parser.go"
		line := uint32(120)
		u.ToolCall = &acp.ToolCall{
			ToolCallID: acp.ToolCallID(fmt.Sprintf("call_%08d", i)),
			Title:      "Read parser/parser.go",
			Kind:       acp.ToolKindRead,
			Status:     acp.ToolCallStatusPending,
			Locations:  []acp.ToolCallLocation{{Path: file, Line: &line}},
			RawInput:   map[string]any{"path": file, "offset": 120, "limit": 12},
		}
	case 9:
		done := acp.ToolCallStatusCompleted
		u.ToolCallUpdate = &acp.ToolCallUpdate{
			ToolCallID: acp.ToolCallID(fmt.Sprintf("call_%08d", i-1)),
			Status:     &done,
			Content:    []acp.ToolCallContent{{Content: &acp.Content{Content: textBlock(source)}}},
			RawOutput:  map[string]any{"lines": strings.Count(source, "\n")},
		}
	default:
		u.AgentMessageChunk = &acp.ContentChunk{Content: textBlock(sentences[k-1]), MessageID: &msg}
	}
	b, err := json.Marshal(u)
	if err != nil {
		panic(err) // static shapes: cannot fail
	}
	return b
}

func textBlock(s string) acp.ContentBlock {
	return acp.ContentBlock{Text: &acp.TextContent{Text: s}}
}
