// Package notice builds the session/update that shows the user a problem in
// any editor: a notice where the client takes notices (the session
// capability "notices"), else a short failed tool_call card, which every
// editor shows. A notice is a live event, not session history: callers send
// it without logging it, so session/load never replays it; a card is
// logged like any tool call. Functions keep no state and are safe for
// concurrent use.
package notice

import (
	"crypto/rand"
	"encoding/hex"

	"acpd/acp"
)

// Shown reports whether a client with caps shows notice updates.
func Shown(caps acp.ClientCapabilities) bool {
	return caps.Session != nil && caps.Session.Notices != nil
}

// Notice is a notice update of severity sev: title says what, in a few
// words; why, when not "", is its description (why, and how to fix it).
func Notice(sev acp.NoticeSeverity, title, why string) acp.SessionUpdate {
	n := &acp.Notice{Severity: sev, Title: title}
	if why != "" {
		n.Description = &why
	}
	return acp.SessionUpdate{Notice: n}
}

// Card is a failed tool call of kind other with a fresh id ("note_" and 16
// hex digits): title says what, the content (none when why is "") why and
// how to fix it.
func Card(title, why string) acp.SessionUpdate {
	var b [8]byte
	_, _ = rand.Read(b[:])
	tc := &acp.ToolCall{ToolCallID: acp.ToolCallID("note_" + hex.EncodeToString(b[:])), Title: title, Kind: acp.ToolKindOther, Status: acp.ToolCallStatusFailed}
	if why != "" {
		tc.Content = []acp.ToolCallContent{{Content: &acp.Content{Content: acp.ContentBlock{Text: &acp.TextContent{Text: why}}}}}
	}
	return acp.SessionUpdate{ToolCall: tc}
}

// Tell is [Notice] for a client that shows notices, else [Card]; card
// reports which (a card is to be logged, a notice not).
func Tell(caps acp.ClientCapabilities, sev acp.NoticeSeverity, title, why string) (u acp.SessionUpdate, card bool) {
	if Shown(caps) {
		return Notice(sev, title, why), false
	}
	return Card(title, why), true
}
