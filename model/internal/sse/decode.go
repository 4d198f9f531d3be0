package sse

import (
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"

	"acpd/model"
)

// Truncated is the error of a stream that ended before the response was
// complete.
func Truncated() error {
	return &model.Error{Kind: model.ErrNetwork, Message: "stream ended before completion"}
}

// ErrStopped is what a [Decoder] returns when emit returned false: the
// consumer stopped the iteration.
var ErrStopped = errors.New("sse: consumer stopped")

// Stopped is the error of an emit's result: nil when ok, [ErrStopped]
// otherwise.
func Stopped(ok bool) error {
	if ok {
		return nil
	}
	return ErrStopped
}

// A Decoder translates the events of one response's stream into model
// events; it serves one stream. Its methods pass the events to emit and
// return [ErrStopped] as soon as emit returns false.
type Decoder interface {
	// Event handles one event whose data is not blank, its Data trimmed of
	// surrounding white space. done reports that the event completed the
	// response; done or an error (a *model.Error for a failed or malformed
	// response) ends [Decode].
	Event(ev Event, emit func(model.Event) bool) (done bool, err error)
	// End is called when the stream ends, cleanly or torn, before an event
	// completed the response: it finishes a response that is complete
	// nonetheless, or returns [Truncated].
	End(emit func(model.Event) bool) error
}

// Decode reads r to the end of one response, handing its events to d. It
// returns nil once the response is complete, [ErrStopped] when emit
// returned false, a *model.Error for a failed, malformed or truncated
// response or an event over the reader's limit, and the raw error of the
// underlying reader otherwise.
func Decode(r *Reader, d Decoder, emit func(model.Event) bool) error {
	for {
		ev, err := r.Next()
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			return d.End(emit)
		case err == ErrEventTooLarge:
			return &model.Error{Kind: model.ErrServer, Message: "stream event too large", Err: err}
		case err != nil:
			return err
		}
		ev.Data = strings.TrimSpace(ev.Data)
		if ev.Data == "" {
			continue
		}
		if done, err := d.Event(ev, emit); err != nil || done {
			return err
		}
	}
}

// Unmarshal decodes data, one JSON chunk of a stream, into v; data that
// does not decode is a *model.Error of kind ErrServer. It keeps no
// reference to data: v owns what it decodes.
func Unmarshal(data string, v any) error {
	// encoding/json reads bytes: the chunk is copied into a scratch buffer
	// reused across chunks (and streams) rather than a new one per chunk,
	// one allocation less per streamed delta. json.Unmarshal copies what
	// it keeps (strings, RawMessage), so the buffer is free once it returns.
	bp := scratch.Get().(*[]byte)
	buf := append((*bp)[:0], data...)
	err := json.Unmarshal(buf, v)
	if cap(buf) <= maxScratch {
		*bp = buf
		scratch.Put(bp)
	}
	if err != nil {
		return &model.Error{Kind: model.ErrServer, Message: "malformed stream chunk: " + err.Error(), Err: err}
	}
	return nil
}

// maxScratch bounds the buffers [Unmarshal] keeps for reuse: a chunk
// larger than this (a big tool argument, an inline image) gets a buffer
// that is dropped after use, so one large chunk pins no memory.
const maxScratch = 16 << 10

// scratch holds *[]byte buffers for [Unmarshal].
var scratch = sync.Pool{New: func() any { return new([]byte) }}

// Complete emits the end of a response: its usage unless nil, then its
// finish. It returns [ErrStopped] when emit returned false.
func Complete(emit func(model.Event) bool, usage *model.Usage, finish model.FinishReason) error {
	if usage != nil && !emit(model.Event{Type: model.EventUsage, Usage: usage}) {
		return ErrStopped
	}
	return Stopped(emit(model.Event{Type: model.EventFinish, Finish: finish}))
}

// ToolInput returns streamed tool arguments as tool input: {} when blank,
// the arguments when valid JSON, otherwise the arguments as a JSON string
// (so the session log stays valid JSON; the tool then rejects the input and
// request mapping sends the original text back).
func ToolInput(args string) json.RawMessage {
	if strings.TrimSpace(args) == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}

// Arguments is the inverse of [ToolInput] for a request: the arguments
// string of a tool call. Input that ToolInput wrapped as a JSON string
// (arguments that were not valid JSON) is unwrapped so the model sees
// exactly what it produced.
func Arguments(input json.RawMessage) string {
	if len(input) == 0 {
		return "{}"
	}
	if input[0] == '"' {
		var s string
		if json.Unmarshal(input, &s) == nil {
			return s
		}
	}
	return string(input)
}

// Finish is the finish of a response that completed without a reason of its
// own: tool use when it called tools, else a refusal when it refused, else
// the end of the turn.
func Finish(toolCalls, refusal bool) model.FinishReason {
	switch {
	case toolCalls:
		return model.FinishToolUse
	case refusal:
		return model.FinishRefusal
	}
	return model.FinishEndTurn
}
