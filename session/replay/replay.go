// Package replay turns a stored session's updates back into the
// session/update stream session/load sends: text chunks of one message
// merged, live-only updates dropped, terminal content the client cannot
// reach any more rewritten (terminals.go). It reads stored JSON, which may
// be damaged or foreign: what it cannot decode it skips, and it passes on
// only updates the strict decoder accepts.
//
// The functions are pure; they may be called concurrently.
package replay

import (
	"encoding/json"
	"iter"
	"log/slog"
	"strings"

	"acpd/acp"
	"acpd/internal/outbox"
	"acpd/model"
)

// Options say what the client takes.
type Options struct {
	// Compaction: the client shows compaction updates
	// (clientCapabilities.session.compaction); without it they are
	// dropped, as ACP requires.
	Compaction bool
	// Terminals: the client shows Zed's display-only terminals
	// (clientCapabilities._meta.terminal_output); without it terminal
	// content replays as fenced text.
	Terminals bool
	// Results are the text results the model got by tool call id (see
	// [Results]): a command's output, replayed in place of its terminal.
	Results map[string]string
	// Logger hears of each stored update that does not decode; nil
	// discards.
	Logger *slog.Logger
}

// Updates returns, in order, the session/update payloads that replay the
// stored ones (the "update" records of a session's log, as the client was
// shown them).
func Updates(stored []json.RawMessage, o Options) iter.Seq[json.RawMessage] {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(yield func(json.RawMessage) bool) {
		merged := merge(stored, o.Compaction, log)
		var terms *terminals
		if o.Terminals {
			terms = newTerminals()
		}
		terms.scan(merged)
		for _, u := range merged {
			for _, r := range terms.rewrite(u, o.Results) {
				if !yield(r) {
					return
				}
			}
		}
	}
}

// Results maps a transcript's tool call ids to the text results the model
// got (a command's output and exit status).
func Results(transcript []model.Message) map[string]string {
	out := map[string]string{}
	for _, m := range transcript {
		for _, p := range m.Parts {
			if p.Type != model.PartToolResult {
				continue
			}
			var b strings.Builder
			for _, c := range p.Content {
				if c.Type == model.PartText {
					b.WriteString(c.Text)
				}
			}
			out[p.ToolCallID] = b.String()
		}
	}
	return out
}

// probe is the part of a stored update that replay needs to merge text
// chunks and to filter: decoding it skips everything else, which is far
// cheaper than the strict generated decoder.
type probe struct {
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

// chunkKey identifies a run of mergeable chunks: agent message or thought
// text of one message.
type chunkKey struct {
	thought bool
	msg     string
}

// mergeable reports whether p is a plain text chunk of an agent message or
// thought, which replay rebuilds from its text and message id alone.
func (p *probe) mergeable() (chunkKey, string, bool) {
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

// merge prepares stored updates for replay: consecutive text chunks of one
// message merge into one update (a long streamed answer replays as one
// chunk, re-encoded from its text), notices are dropped (live events, never
// replayed; logs written before they stopped being logged hold some) and
// compaction updates kept only when compaction says so. Everything else
// passes through as the stored JSON, after the strict decoder has accepted
// it: an update that does not decode (a damaged or foreign record) is
// skipped with a warning, as it always was. The strict decode costs only
// for updates that are not text chunks, the few in a long conversation.
func merge(updates []json.RawMessage, compaction bool, log *slog.Logger) []json.RawMessage {
	var out []json.RawMessage
	var pendingKey chunkKey
	pending := false
	var text strings.Builder // linear in the message's length, whatever its chunk count
	flush := func() {
		if !pending {
			return
		}
		if b, err := json.Marshal(outbox.TextChunk(pendingKey.thought, pendingKey.msg, text.String())); err == nil {
			out = append(out, b)
		}
		pending = false
	}
	for _, raw := range updates {
		var p probe
		if err := json.Unmarshal(raw, &p); err != nil {
			log.Warn("skipping a stored update that does not decode", "err", err)
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
			log.Warn("skipping a stored update that does not decode", "err", err)
			continue
		}
		out = append(out, raw)
	}
	flush()
	return out
}
