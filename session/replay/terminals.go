package replay

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"

	"acpd/acp"
	"acpd/tools"
)

// terminals replays the terminal content of stored tool calls as
// Zed's display-only terminals (clientCapabilities._meta.terminal_output):
// the terminal a stored update names belonged to an earlier connection, so
// each tool call gets a fresh id that only ever appears in _meta
// terminal_info/terminal_output/terminal_exit and terminal content, never
// in a terminal/* request. A nil *terminals replays such content as
// fenced text (withoutTerminals), for every other client.
type terminals struct {
	exits map[acp.ToolCallID]map[string]any // the exit status stored in rawOutput
	ids   map[acp.ToolCallID]string         // tool call -> its display-only terminal
}

func newTerminals() *terminals {
	return &terminals{exits: map[acp.ToolCallID]map[string]any{}, ids: map[acp.ToolCallID]string{}}
}

// scan records the exit status (rawOutput exitCode and signal) of the
// tool calls whose updates carry terminal content, so that the terminal
// can be shown finished from its first replayed update on.
func (r *terminals) scan(updates []json.RawMessage) {
	if r == nil {
		return
	}
	for _, raw := range updates {
		if !bytes.Contains(raw, []byte(`"rawOutput"`)) {
			continue
		}
		var u acp.SessionUpdate
		if json.Unmarshal(raw, &u) != nil {
			continue
		}
		tc, ok := toolCallOf(&u)
		if !ok {
			continue
		}
		id := tc.id
		m, ok := tc.rawOutput.(map[string]any)
		if !ok {
			continue
		}
		_, hasCode := m["exitCode"]
		_, hasSignal := m["signal"]
		if hasCode || hasSignal {
			r.exits[id] = map[string]any{"exit_code": m["exitCode"], "signal": m["signal"]}
		}
	}
}

// rewrite returns what to replay for the stored update raw. With a nil r
// that is withoutTerminals(raw). Otherwise an update naming a terminal
// names the tool call's display-only terminal instead, and the first such
// update of a tool call carries _meta.terminal_info and is followed by a
// tool_call_update with _meta.terminal_output (the stored output) and one
// with _meta.terminal_exit, the shapes acpd sends live for its own PTYs.
func (r *terminals) rewrite(raw json.RawMessage, results map[string]string) []json.RawMessage {
	if r == nil {
		return []json.RawMessage{withoutTerminals(raw, results)}
	}
	if !bytes.Contains(raw, []byte(`"terminal"`)) {
		return []json.RawMessage{raw}
	}
	var u acp.SessionUpdate
	if json.Unmarshal(raw, &u) != nil {
		return []json.RawMessage{raw}
	}
	tc, ok := toolCallOf(&u)
	if !ok {
		return []json.RawMessage{raw}
	}
	id, content, meta := tc.id, tc.content, tc.meta
	changed := false
	for i, c := range content {
		if c.Terminal != nil {
			changed = true
			content[i] = acp.ToolCallContent{Terminal: &acp.Terminal{}}
		}
	}
	if !changed {
		return []json.RawMessage{raw}
	}
	tid, known := r.ids[id]
	if !known {
		tid = freshTerminalID()
		r.ids[id] = tid
	}
	for i := range content {
		if content[i].Terminal != nil {
			content[i].Terminal.TerminalID = acp.TerminalID(tid)
		}
	}
	if !known {
		m := map[string]any{}
		for k, v := range *meta {
			m[k] = v
		}
		m["terminal_info"] = map[string]any{"terminal_id": tid}
		*meta = m
	}
	b, err := json.Marshal(u)
	if err != nil {
		return []json.RawMessage{withoutTerminals(raw, results)}
	}
	out := []json.RawMessage{b}
	if known {
		return out
	}
	text, ok := results[string(id)]
	if !ok {
		text = "(the command ran in the editor's terminal; its output is not stored)\n"
	}
	// A terminal needs carriage returns: the stored text has bare newlines.
	data := strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\n", "\r\n")
	exit := map[string]any{"terminal_id": tid, "exit_code": nil, "signal": nil}
	if e, ok := r.exits[id]; ok {
		exit["exit_code"], exit["signal"] = e["exit_code"], e["signal"]
	}
	for _, m := range []map[string]any{
		{"terminal_output": map[string]any{"terminal_id": tid, "data": data}},
		{"terminal_exit": exit},
	} {
		if b, err := json.Marshal(acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: id, Meta: m}}); err == nil {
			out = append(out, b)
		}
	}
	return out
}

// freshTerminalID returns a terminal id no connection has seen.
func freshTerminalID() string {
	var b [8]byte
	rand.Read(b[:])
	return "replay-" + hex.EncodeToString(b[:])
}

// withoutTerminals replaces the terminal content of a stored tool call
// update by the command's output as fenced text: the editor terminal it
// named belonged to an earlier connection, and a client drops an update
// naming a terminal it does not know.
func withoutTerminals(raw json.RawMessage, results map[string]string) json.RawMessage {
	if !bytes.Contains(raw, []byte(`"terminal"`)) {
		return raw
	}
	var u acp.SessionUpdate
	if json.Unmarshal(raw, &u) != nil {
		return raw
	}
	tc, ok := toolCallOf(&u)
	if !ok {
		return raw
	}
	id, content := tc.id, tc.content
	changed := false
	for i, c := range content {
		if c.Terminal == nil {
			continue
		}
		text, ok := results[string(id)]
		if !ok {
			text = "(the command ran in the editor's terminal; its output is not stored)"
		}
		content[i] = tools.TextContent(tools.Fence(text))
		changed = true
	}
	if !changed {
		return raw
	}
	b, err := json.Marshal(u)
	if err != nil {
		return raw
	}
	return b
}

// toolCallFields are the fields of a tool call (or its update) that replay
// reads or rewrites; content and meta are u's own.
type toolCallFields struct {
	id        acp.ToolCallID
	content   []acp.ToolCallContent
	rawOutput any
	meta      *map[string]any
}

// toolCallOf returns u's tool call fields; false when u is neither a
// tool_call nor a tool_call_update.
func toolCallOf(u *acp.SessionUpdate) (toolCallFields, bool) {
	switch {
	case u.ToolCall != nil:
		c := u.ToolCall
		return toolCallFields{c.ToolCallID, c.Content, c.RawOutput, &c.Meta}, true
	case u.ToolCallUpdate != nil:
		c := u.ToolCallUpdate
		return toolCallFields{c.ToolCallID, c.Content, c.RawOutput, &c.Meta}, true
	}
	return toolCallFields{}, false
}
