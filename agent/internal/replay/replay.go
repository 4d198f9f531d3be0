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
	"runtime"
	"strings"
	"sync"

	"acpd/acp"
	"acpd/internal/jsonscan"
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
// shown them). Each is compact JSON when the stored ones are (as a session
// log's records are): those passed on are the stored bytes, the others
// encoded by encoding/json.
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

// chunkJSON is the wire form of outbox.TextChunk, encoded by encoding/json
// without the generated encoder's nested passes (a test holds the two
// equal): replay writes one per merged message.
type chunkJSON struct {
	SessionUpdate string `json:"sessionUpdate"`
	Content       struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	MessageID string `json:"messageId"`
}

// encode returns the JSON of k's chunk holding text.
func (k chunkKey) encode(text string) ([]byte, error) {
	kind := "agent_message_chunk"
	if k.thought {
		kind = "agent_thought_chunk"
	}
	return encodeChunk(kind, k.msg, text)
}

// encodeChunk returns the JSON of a plain text chunk.
func encodeChunk(kind, msg, text string) ([]byte, error) {
	c := chunkJSON{SessionUpdate: kind, MessageID: msg}
	c.Content.Type, c.Content.Text = "text", text
	return json.Marshal(c)
}

// candidate reports whether p can be a plain text chunk (of an agent
// message or thought, or of a user message), whatever its content holds.
func (p *probe) candidate() bool {
	return (p.SessionUpdate == "agent_message_chunk" || p.SessionUpdate == "agent_thought_chunk" || p.SessionUpdate == "user_message_chunk") &&
		p.MessageID != nil && p.Meta == nil && p.Content != nil
}

// plain reports whether p, with content c, is a plain text chunk: one
// rebuilt from its kind, text and message id alone.
func (p *probe) plain(c *chunkContent) bool {
	return p.candidate() && c.Type == "text" && c.Text != nil && c.Annotations == nil && c.Meta == nil
}

// decode decodes raw into p (and, for a candidate, its content into c) with
// encoding/json: the slow way, for what scanProbe is not sure of.
func (p *probe) decode(raw []byte, c *chunkContent) error {
	// Fresh values: json.RawMessage decodes into its slice's memory, which
	// scanProbe may have pointed into raw.
	*p, *c = probe{}, chunkContent{}
	if err := json.Unmarshal(raw, p); err != nil {
		return err
	}
	if p.candidate() && json.Unmarshal(p.Content, c) != nil {
		*c = chunkContent{}
	}
	return nil
}

// mergeable reports whether p, with content c, is a plain text chunk of an
// agent message or thought, which replay rebuilds from its text and message
// id alone.
func (p *probe) mergeable(c *chunkContent) (chunkKey, string, bool) {
	if !p.plain(c) || p.SessionUpdate == "user_message_chunk" {
		return chunkKey{}, "", false
	}
	return chunkKey{thought: p.SessionUpdate == "agent_thought_chunk", msg: *p.MessageID}, *c.Text, true
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
	cls := classify(updates, compaction)
	var out []json.RawMessage
	var pendingKey chunkKey
	pending := false
	var text strings.Builder // linear in the message's length, whatever its chunk count
	flush := func() {
		if !pending {
			return
		}
		if b, err := pendingKey.encode(text.String()); err == nil {
			out = append(out, b)
		}
		pending = false
	}
	for i, raw := range updates {
		c := &cls[i]
		switch {
		case c.err != nil:
			log.Warn("skipping a stored update that does not decode", "err", c.err)
			continue
		case c.drop:
			continue
		case c.rebuilt != nil:
			flush()
			out = append(out, c.rebuilt)
			continue
		case c.merge:
			if pending && c.key == pendingKey {
				text.WriteString(c.text)
				continue
			}
			flush()
			pending, pendingKey = true, c.key
			text.Reset()
			text.WriteString(c.text)
			continue
		}
		flush()
		out = append(out, raw)
	}
	flush()
	return out
}

// class is what merge does with one stored update.
type class struct {
	err   error // it does not decode: skip it
	drop  bool  // it is not replayed
	merge bool  // a mergeable chunk of key with text
	key   chunkKey
	text  string
	// rebuilt replaces a plain text chunk of a user message (the blocks
	// of a prompt stay apart): built from its text, it needs no strict
	// decode.
	rebuilt json.RawMessage
}

// valid reports whether raw is valid JSON (as json.Valid, faster).
func valid(raw []byte) bool {
	ok, _ := jsonscan.Check(raw)
	return ok
}

// classifyMin is the fewest updates worth a worker of classify.
const classifyMin = 512

// classify decides each update's class, in parallel over contiguous runs
// on up to GOMAXPROCS workers (it waits for them all): the strict decode of
// updates that pass through is most of session/load's work, and the client
// waits idle meanwhile.
func classify(updates []json.RawMessage, compaction bool) []class {
	cls := make([]class, len(updates))
	workers := min(runtime.GOMAXPROCS(0), len(updates)/classifyMin)
	if workers <= 1 {
		classifyRun(updates, cls, compaction)
		return cls
	}
	var wg sync.WaitGroup
	per := (len(updates) + workers - 1) / workers
	for lo := 0; lo < len(updates); lo += per {
		hi := min(lo+per, len(updates))
		wg.Go(func() { classifyRun(updates[lo:hi], cls[lo:hi], compaction) })
	}
	wg.Wait()
	return cls
}

func classifyRun(updates []json.RawMessage, cls []class, compaction bool) {
	for i, raw := range updates {
		c := &cls[i]
		var p probe
		var cc chunkContent
		// scanProbe's answer stands for valid JSON only: an update that
		// passes through is checked by the strict decode below anyway, so
		// only one rebuilt from the probe needs checking first.
		fast := scanProbe(raw, &p, &cc)
		if fast && p.plain(&cc) && !valid(raw) {
			fast = false
		}
		if !fast {
			if err := p.decode(raw, &cc); err != nil {
				c.err = err
				continue
			}
		}
		switch p.SessionUpdate {
		case "notice":
			c.drop = true
			continue
		case "compaction_update", "compaction_summary_chunk":
			if !compaction {
				c.drop = true
				continue
			}
		}
		if c.key, c.text, c.merge = p.mergeable(&cc); c.merge {
			continue
		}
		if p.plain(&cc) {
			if b, err := encodeChunk(p.SessionUpdate, *p.MessageID, *cc.Text); err == nil {
				c.rebuilt = b
				continue
			}
		}
		if decodes(raw, p.SessionUpdate) && valid(raw) {
			continue // a tool call of the shapes acpd writes
		}
		var u acp.SessionUpdate
		c.err = json.Unmarshal(raw, &u)
	}
}
