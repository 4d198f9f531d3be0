package sse

import (
	"encoding/json"
	"io"
	"strings"

	"acpd/model"
)

// Truncated is the error of a stream that ended before the response was
// complete.
func Truncated() error {
	return &model.Error{Kind: model.ErrNetwork, Message: "stream ended before completion"}
}

// NextData returns the next event whose data is not blank, its Data trimmed
// of surrounding white space. At the end of the stream (a clean or a torn
// one) it returns io.EOF when complete reports the response complete, and
// [Truncated] otherwise; an event over the reader's limit becomes a
// *model.Error of kind ErrServer; any other error of the underlying reader
// is returned as it is.
func NextData(r *Reader, complete bool) (Event, error) {
	for {
		ev, err := r.Next()
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				if !complete {
					return Event{}, Truncated()
				}
				return Event{}, io.EOF
			}
			if err == ErrEventTooLarge {
				return Event{}, &model.Error{Kind: model.ErrServer, Message: "stream event too large", Err: err}
			}
			return Event{}, err
		}
		ev.Data = strings.TrimSpace(ev.Data)
		if ev.Data != "" {
			return ev, nil
		}
	}
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
