package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"acpd/acp"
)

// replayProbe is the part of a stored update that session/load needs to
// merge text chunks and to filter: decoding it skips everything else, which
// is far cheaper than the strict generated decoder.
type replayProbe struct {
	SessionUpdate string          `json:"sessionUpdate"`
	MessageID     *string         `json:"messageId"`
	Meta          json.RawMessage `json:"_meta"`
	// Content is decoded (as chunkContent) only for chunk updates: in
	// other updates it has other shapes (tool call content is a list).
	Content json.RawMessage `json:"content"`
}

type chunkContent struct {
	Type        string          `json:"type"`
	Text        *string         `json:"text"`
	Annotations json.RawMessage `json:"annotations"`
	Meta        json.RawMessage `json:"_meta"`
}

// mergeable reports whether p is a plain text chunk of an agent message or
// thought, which replay rebuilds from its text and message id alone.
func (p *replayProbe) mergeable() (chunkKey, string, bool) {
	var k chunkKey
	switch p.SessionUpdate {
	case "agent_message_chunk":
	case "agent_thought_chunk":
		k.thought = true
	default:
		return k, "", false
	}
	if p.MessageID == nil || p.Meta != nil || p.Content == nil {
		return k, "", false
	}
	var c chunkContent
	if json.Unmarshal(p.Content, &c) != nil || c.Type != "text" || c.Text == nil || c.Annotations != nil || c.Meta != nil {
		return k, "", false
	}
	k.msg = *p.MessageID
	return k, *c.Text, true
}

// replayUpdates prepares stored updates for session/load: consecutive text
// chunks of one message merge into one update (a long streamed answer
// replays as one chunk, re-encoded from its text), notices are dropped
// (live events, never replayed; logs written before they stopped being
// logged hold some) and compaction updates kept only when the client
// advertises session.compaction, as ACP requires. Everything else passes
// through as the stored JSON, after the strict decoder has accepted it:
// an update that does not decode (a damaged or foreign record) is skipped
// with a warning, as it always was. The strict decode costs only for
// updates that are not text chunks, the few in a long conversation.
func (s *sess) replayUpdates(updates []json.RawMessage, compaction bool) []json.RawMessage {
	var out []json.RawMessage
	var pendingKey chunkKey
	pending := false
	var text strings.Builder // linear in the message's length, whatever its chunk count
	flush := func() {
		if !pending {
			return
		}
		if b, err := json.Marshal(pendingKey.update(text.String())); err == nil {
			out = append(out, b)
		}
		pending = false
	}
	for _, raw := range updates {
		var p replayProbe
		if err := json.Unmarshal(raw, &p); err != nil {
			s.a.log.Warn("skipping a stored update that does not decode", "session", s.id, "err", err)
			continue
		}
		switch p.SessionUpdate {
		case "notice":
			continue
		case "compaction_update", "compaction_summary_chunk":
			if !compaction {
				continue
			}
		}
		if k, t, ok := p.mergeable(); ok {
			if pending && k == pendingKey {
				text.WriteString(t)
				continue
			}
			flush()
			pending, pendingKey = true, k
			text.Reset()
			text.WriteString(t)
			continue
		}
		flush()
		var u acp.SessionUpdate
		if err := json.Unmarshal(raw, &u); err != nil {
			s.a.log.Warn("skipping a stored update that does not decode", "session", s.id, "err", err)
			continue
		}
		out = append(out, raw)
	}
	flush()
	return out
}

// rawNotification is a session/update whose update is already encoded.
type rawNotification struct {
	SessionID acp.SessionID   `json:"sessionId"`
	Update    json.RawMessage `json:"update"`
}

// sendReplay writes one update prepared by replayUpdates, after anything
// queued before it.
func (s *sess) sendReplay(ctx context.Context, raw json.RawMessage) error {
	s.flushOut(ctx)
	conn := s.a.connection()
	if conn == nil {
		return errors.New("connection closed")
	}
	return conn.Notify(ctx, acp.ClientMethodSessionUpdate, rawNotification{SessionID: s.id, Update: raw})
}
