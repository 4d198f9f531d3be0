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
//
// Zed creates a display-only terminal only from _meta.terminal_info on a
// tool_call (not on a tool_call_update), before it applies the tool call's
// content, and takes terminal_output and terminal_exit only on
// tool_call_updates (crates/agent_servers/src/acp.rs,
// handle_session_notification); an update naming a terminal it does not
// know is dropped. So the tool_call that opens a tool call with terminal
// content anywhere carries terminal_info and the terminal content, and is
// followed at once by the output and the exit status; a tool call whose
// log does not open with a tool_call replays its terminal as fenced text.
// The stored log is untrusted: terminal_* _meta it carries (ids of earlier
// connections) is dropped.
type terminals struct {
	exits map[acp.ToolCallID]map[string]any // the exit status stored in rawOutput
	wants map[acp.ToolCallID]bool           // tool calls with terminal content
	seen  map[acp.ToolCallID]bool           // tool calls already replayed from
	ids   map[acp.ToolCallID]string         // tool call -> its display-only terminal
}

func newTerminals() *terminals {
	return &terminals{
		exits: map[acp.ToolCallID]map[string]any{},
		wants: map[acp.ToolCallID]bool{},
		seen:  map[acp.ToolCallID]bool{},
		ids:   map[acp.ToolCallID]string{},
	}
}

// terminalMeta are the _meta keys of Zed's display-only terminals.
var terminalMeta = []string{"terminal_info", "terminal_output", "terminal_exit"}

// scan records which tool calls have terminal content and their exit
// status (rawOutput exitCode and signal), so that a terminal can be opened
// by its tool call and shown finished from its first replayed update on.
func (r *terminals) scan(updates []json.RawMessage) {
	if r == nil {
		return
	}
	for _, raw := range updates {
		if !bytes.Contains(raw, []byte(`"rawOutput"`)) && !bytes.Contains(raw, []byte(`"terminal"`)) {
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
		for _, c := range tc.content {
			if c.Terminal != nil {
				r.wants[tc.id] = true
			}
		}
		m, ok := tc.rawOutput.(map[string]any)
		if !ok {
			continue
		}
		_, hasCode := m["exitCode"]
		_, hasSignal := m["signal"]
		if hasCode || hasSignal {
			r.exits[tc.id] = map[string]any{"exit_code": m["exitCode"], "signal": m["signal"]}
		}
	}
}

// rewrite returns what to replay for the stored update raw. With a nil r
// that is withoutTerminals(raw). Otherwise the tool_call opening a tool
// call with terminal content gets a display-only terminal (content and
// _meta.terminal_info) and is followed by a tool_call_update with
// _meta.terminal_output (the stored output) and one with
// _meta.terminal_exit, the shapes acpd sends live for its own PTYs; later
// updates naming a terminal name that one instead.
func (r *terminals) rewrite(raw json.RawMessage, results map[string]string) []json.RawMessage {
	if r == nil {
		return []json.RawMessage{withoutTerminals(raw, results)}
	}
	if !bytes.Contains(raw, []byte(`"terminal`)) {
		// Nothing to rewrite unless it opens a tool call that needs a
		// terminal: a light probe says.
		if len(r.wants) == 0 || !bytes.Contains(raw, []byte(`"toolCallId"`)) {
			return []json.RawMessage{raw}
		}
		var p struct {
			SessionUpdate string         `json:"sessionUpdate"`
			ToolCallID    acp.ToolCallID `json:"toolCallId"`
		}
		if json.Unmarshal(raw, &p) != nil || (p.SessionUpdate != "tool_call" && p.SessionUpdate != "tool_call_update") {
			return []json.RawMessage{raw}
		}
		if r.seen[p.ToolCallID] || p.SessionUpdate != "tool_call" || !r.wants[p.ToolCallID] {
			r.seen[p.ToolCallID] = true
			return []json.RawMessage{raw}
		}
	}
	var u acp.SessionUpdate
	if json.Unmarshal(raw, &u) != nil {
		return []json.RawMessage{raw}
	}
	tc, ok := toolCallOf(&u)
	if !ok {
		return []json.RawMessage{raw}
	}
	id := tc.id
	first := !r.seen[id]
	r.seen[id] = true
	changed := dropTerminalMeta(tc.meta)
	open := first && u.ToolCall != nil && r.wants[id]
	tid, known := r.ids[id]
	if open {
		tid, known = freshTerminalID(), true
		r.ids[id] = tid
		if !hasTerminal(tc.content) {
			u.ToolCall.Content = append(u.ToolCall.Content, acp.ToolCallContent{Terminal: &acp.Terminal{}})
			tc.content = u.ToolCall.Content
		}
		m := map[string]any{}
		for k, v := range *tc.meta {
			m[k] = v
		}
		m["terminal_info"] = map[string]any{"terminal_id": tid}
		*tc.meta = m
		changed = true
	}
	for i, c := range tc.content {
		if c.Terminal == nil {
			continue
		}
		changed = true
		if known {
			tc.content[i] = acp.ToolCallContent{Terminal: &acp.Terminal{TerminalID: acp.TerminalID(tid)}}
		} else {
			tc.content[i] = outputText(id, results)
		}
	}
	if !changed {
		return []json.RawMessage{raw}
	}
	b, err := json.Marshal(u)
	if err != nil {
		return []json.RawMessage{withoutTerminals(raw, results)}
	}
	out := []json.RawMessage{b}
	if !open {
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

// dropTerminalMeta removes the display-only terminal keys from *meta and
// reports whether there were any.
func dropTerminalMeta(meta *map[string]any) bool {
	dropped := false
	for _, k := range terminalMeta {
		if _, ok := (*meta)[k]; ok {
			if !dropped {
				m := make(map[string]any, len(*meta))
				for k, v := range *meta {
					m[k] = v
				}
				*meta = m
			}
			delete(*meta, k)
			dropped = true
		}
	}
	if dropped && len(*meta) == 0 {
		*meta = nil
	}
	return dropped
}

func hasTerminal(content []acp.ToolCallContent) bool {
	for _, c := range content {
		if c.Terminal != nil {
			return true
		}
	}
	return false
}

// outputText is what replays in place of tool call id's terminal when the
// client cannot be shown one: the command's output as fenced text.
func outputText(id acp.ToolCallID, results map[string]string) acp.ToolCallContent {
	text, ok := results[string(id)]
	if !ok {
		text = "(the command ran in the editor's terminal; its output is not stored)"
	}
	return tools.TextContent(tools.Fence(text))
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
	changed := false
	for i, c := range tc.content {
		if c.Terminal != nil {
			tc.content[i] = outputText(tc.id, results)
			changed = true
		}
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
