// Package replay implements the replay model backend: "--model
// replay/<path>" plays a script of normalised model events, one response per
// model request. It is a deterministic model for editor and client
// developers and for acpd's own tests. [NewRecorder] writes such scripts
// from live sessions.
//
// # Script format
//
// A script is a text file of JSON lines (JSONL). Blank lines and lines whose
// first non-blank character is '#' are ignored. Every other line is one JSON
// object with a "type":
//
//   - text, reasoning, reasoning_done, tool_start, tool_delta, tool_done,
//     usage, finish: a [model.Event], in its JSON form (for example
//     {"type":"text","text":"Hello"}). Only the fields that event type uses
//     are allowed.
//   - {"type":"delay","ms":50}: wait 50 milliseconds (cancelled by the
//     request's context).
//   - {"type":"error","kind":"overloaded","message":"...","status":529,
//     "retryAfterMs":1000}: the response fails with a *[model.Error] of that
//     [model.ErrorKind] (status and retryAfterMs are optional). This ends
//     the response.
//   - {"type":"expect","contains":"some text"}: the response fails with a
//     *model.Error of kind [model.ErrReplay] unless the request's messages,
//     encoded as JSON (as in the session log, without HTML escaping),
//     contain the text. Tests use it to prove that the model saw the whole
//     prior transcript. Note that quotes and backslashes appear escaped in
//     that JSON.
//   - {"type":"request","model":"...","messages":3}: written by the
//     recorder before each response; ignored on playback.
//
// A response is the sequence of lines up to and including a finish event or
// an error line; its lines are played in order. Conveniences:
//
//   - a tool_done whose toolCallId had no tool_start is played as tool_start,
//     one tool_delta carrying the whole input, and tool_done, so consumers
//     always see all three; "input" defaults to the concatenated deltas, or
//     {} when there were none;
//   - a tool_done without toolName takes the name from its tool_start;
//   - a finish without "finish" ends with tool_use when the response has
//     tool calls, else with end_turn.
//
// Every started tool call must be done before its response's finish.
// Scripts are validated strictly when loaded: malformed JSON, unknown types
// or fields, invalid values and a final response without finish or error
// are errors naming the line.
//
// # Which response plays
//
// A request plays response number k+1, where k is the number of assistant
// messages in the request: the first request of a session plays the first
// response, the request after one model reply the second, and so on. The
// backend keeps no state, so a session loaded into a fresh process resumes
// at the right response. A request beyond the last response fails with a
// model.ErrReplay error.
//
// testdata/example.jsonl is a complete example.
package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"acpd/internal/ctxsleep"
	"acpd/model"
)

const (
	// maxScriptBytes bounds the size of a script file.
	maxScriptBytes = 64 << 20
	// maxDelay bounds a delay line.
	maxDelay = time.Hour
)

// Backend plays a replay script. It is immutable after [New] and safe for
// concurrent use.
type Backend struct {
	path      string
	responses []response
}

type stepKind int

const (
	stepEvent stepKind = iota
	stepDelay
	stepExpect
	stepError
)

// step is one playable line of a response.
type step struct {
	kind     stepKind
	line     int
	event    model.Event   // stepEvent
	delay    time.Duration // stepDelay
	contains []byte        // stepExpect
	err      model.Error   // stepError
}

// response is the steps of one model response.
type response struct {
	line  int // where it starts
	steps []step
}

// New reads and validates the replay script at path. The file is read once;
// later changes to it have no effect on the Backend.
func New(path string) (*Backend, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("replay script: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("replay script: %w", err)
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("replay script %s: not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxScriptBytes+1))
	if err != nil {
		return nil, fmt.Errorf("replay script %s: %w", path, err)
	}
	if len(data) > maxScriptBytes {
		return nil, fmt.Errorf("replay script %s: larger than %d bytes", path, maxScriptBytes)
	}
	responses, err := parseScript(path, data)
	if err != nil {
		return nil, err
	}
	return &Backend{path: path, responses: responses}, nil
}

// Stream plays the response selected by the number of assistant messages
// in req (see the package documentation). It never modifies req. Each
// yielded event is a fresh copy the consumer may keep and modify.
func (b *Backend) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		var messages []model.Message
		if req != nil {
			messages = req.Messages
		}
		k := 0
		for _, m := range messages {
			if m.Role == model.RoleAssistant {
				k++
			}
		}
		if err := ctx.Err(); err != nil {
			yield(model.Event{}, err)
			return
		}
		if k >= len(b.responses) {
			yield(model.Event{}, &model.Error{Kind: model.ErrReplay, Message: fmt.Sprintf(
				"replay script %s has %d responses; request needs response #%d", b.path, len(b.responses), k+1)})
			return
		}
		var transcript []byte
		for _, s := range b.responses[k].steps {
			if err := ctx.Err(); err != nil {
				yield(model.Event{}, err)
				return
			}
			switch s.kind {
			case stepEvent:
				if !yield(cloneEvent(s.event), nil) {
					return
				}
			case stepDelay:
				if err := ctxsleep.Sleep(ctx, s.delay); err != nil {
					yield(model.Event{}, err)
					return
				}
			case stepExpect:
				if transcript == nil {
					transcript = encodeMessages(messages)
				}
				if !bytes.Contains(transcript, s.contains) {
					yield(model.Event{}, &model.Error{Kind: model.ErrReplay, Message: fmt.Sprintf(
						"replay script %s:%d: response #%d expects the request's messages to contain %q",
						b.path, s.line, k+1, s.contains)})
					return
				}
			case stepError:
				e := s.err
				yield(model.Event{}, &e)
				return
			}
		}
	}
}

// encodeMessages returns the JSON of messages as expect lines match it.
func encodeMessages(messages []model.Message) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if messages == nil {
		messages = []model.Message{}
	}
	if err := enc.Encode(messages); err != nil {
		// Messages hold only strings, bools and valid raw JSON (decoded
		// from a session log or a provider): encoding cannot fail.
		panic(fmt.Sprintf("replay: encoding request messages: %v", err))
	}
	return buf.Bytes()
}

func cloneEvent(e model.Event) model.Event {
	e.Input = bytes.Clone(e.Input)
	e.Opaque = bytes.Clone(e.Opaque)
	if e.Usage != nil {
		u := *e.Usage
		e.Usage = &u
	}
	return e
}

// Pseudo-event line types.
const (
	typeDelay   = "delay"
	typeError   = "error"
	typeExpect  = "expect"
	typeRequest = "request"
)

// allowedFields returns the fields the lines of an event type may set
// (ok false for an unknown type). A switch, not a map: nothing is built
// at start-up for a package most processes never use.
func allowedFields(typ model.EventType) (fields string, ok bool) {
	switch typ {
	case model.EventText, model.EventReasoning:
		return "text", true
	case model.EventReasoningDone:
		return "signature, redacted, opaque, provider", true
	case model.EventToolStart:
		return "toolCallId, toolName", true
	case model.EventToolDelta:
		return "toolCallId, text", true
	case model.EventToolDone:
		return "toolCallId, toolName, input, signature, opaque, provider", true
	case model.EventUsage:
		return "usage", true
	case model.EventFinish:
		return "finish", true
	}
	return "", false
}

var (
	finishReasons = []model.FinishReason{model.FinishEndTurn, model.FinishToolUse, model.FinishMaxTokens, model.FinishRefusal}
	errorKinds    = []model.ErrorKind{
		model.ErrAuth, model.ErrQuota, model.ErrRateLimit, model.ErrOverloaded, model.ErrServer,
		model.ErrNetwork, model.ErrContextOverflow, model.ErrInvalidRequest, model.ErrReplay,
	}
)

type delayLine struct {
	Type string `json:"type"`
	MS   int64  `json:"ms"`
}

type errorLine struct {
	Type         string          `json:"type"`
	Kind         model.ErrorKind `json:"kind"`
	Message      string          `json:"message,omitempty"`
	Status       int             `json:"status,omitempty"`
	RetryAfterMS int64           `json:"retryAfterMs,omitempty"`
}

type expectLine struct {
	Type     string `json:"type"`
	Contains string `json:"contains"`
}

type requestLine struct {
	Type     string `json:"type"`
	Model    string `json:"model"`
	Messages int    `json:"messages"`
}

// toolCall tracks one tool call of the response being parsed.
type toolCall struct {
	line   int // of its tool_start, or its tool_done when synthesised
	name   string
	deltas strings.Builder
	done   bool
}

// parser builds responses from script lines.
type parser struct {
	name      string
	responses []response
	cur       *response // nil between responses
	tools     map[string]*toolCall
	order     []string // tool call ids in start order
}

// parseScript parses a script; name is used in errors.
func parseScript(name string, data []byte) ([]response, error) {
	p := &parser{name: name}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	for i, raw := range bytes.Split(data, []byte("\n")) {
		line := bytes.TrimSpace(raw)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if err := p.line(i+1, line); err != nil {
			return nil, fmt.Errorf("replay script %s:%d: %w", name, i+1, err)
		}
	}
	if p.cur != nil {
		return nil, fmt.Errorf("replay script %s:%d: response #%d has no finish or error line",
			name, p.cur.line, len(p.responses)+1)
	}
	if len(p.responses) == 0 {
		return nil, fmt.Errorf("replay script %s: no responses", name)
	}
	return p.responses, nil
}

// line parses the script line number n.
func (p *parser) line(n int, line []byte) error {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return fmt.Errorf("invalid JSON line: %w", err)
	}
	if head.Type == typeRequest {
		var r requestLine
		if err := decodeStrict(line, &r); err != nil {
			return err
		}
		if p.cur != nil {
			return fmt.Errorf("request line inside response #%d (line %d has no finish or error line)",
				len(p.responses)+1, p.cur.line)
		}
		return nil
	}
	if p.cur == nil {
		p.cur = &response{line: n}
		p.tools = map[string]*toolCall{}
		p.order = p.order[:0]
	}
	switch head.Type {
	case typeDelay:
		var d delayLine
		if err := decodeStrict(line, &d); err != nil {
			return err
		}
		if d.MS < 0 || d.MS > maxDelay.Milliseconds() {
			return fmt.Errorf("delay ms must be between 0 and %d", maxDelay.Milliseconds())
		}
		p.add(step{kind: stepDelay, line: n, delay: time.Duration(d.MS) * time.Millisecond})
	case typeExpect:
		var x expectLine
		if err := decodeStrict(line, &x); err != nil {
			return err
		}
		if x.Contains == "" {
			return errors.New(`expect needs a non-empty "contains"`)
		}
		p.add(step{kind: stepExpect, line: n, contains: []byte(x.Contains)})
	case typeError:
		var e errorLine
		if err := decodeStrict(line, &e); err != nil {
			return err
		}
		if !slices.Contains(errorKinds, e.Kind) {
			return fmt.Errorf("unknown error kind %q", e.Kind)
		}
		if e.Status < 0 || e.Status > 999 {
			return fmt.Errorf("invalid HTTP status %d", e.Status)
		}
		if e.RetryAfterMS < 0 || e.RetryAfterMS > maxDelay.Milliseconds() {
			return fmt.Errorf("retryAfterMs must be between 0 and %d", maxDelay.Milliseconds())
		}
		if e.Message == "" {
			e.Message = "replayed " + string(e.Kind) + " error"
		}
		p.add(step{kind: stepError, line: n, err: model.Error{
			Kind: e.Kind, Status: e.Status, Message: e.Message,
			RetryAfter: time.Duration(e.RetryAfterMS) * time.Millisecond,
		}})
		p.end()
	default:
		return p.event(n, line, model.EventType(head.Type))
	}
	return nil
}

// event parses a model event line.
func (p *parser) event(n int, line []byte, typ model.EventType) error {
	allowed, ok := allowedFields(typ)
	if !ok {
		if typ == "" {
			return errors.New(`missing "type"`)
		}
		return fmt.Errorf("unknown type %q", typ)
	}
	var ev model.Event
	if err := decodeStrict(line, &ev); err != nil {
		return err
	}
	if !onlyAllowed(ev) {
		return fmt.Errorf("a %s event may only set %s", typ, allowed)
	}
	switch typ {
	case model.EventToolStart:
		if ev.ToolCallID == "" || ev.ToolName == "" {
			return errors.New("tool_start needs toolCallId and toolName")
		}
		if tc, ok := p.tools[ev.ToolCallID]; ok {
			return fmt.Errorf("tool call %q was already started on line %d", ev.ToolCallID, tc.line)
		}
		p.tools[ev.ToolCallID] = &toolCall{line: n, name: ev.ToolName}
		p.order = append(p.order, ev.ToolCallID)
	case model.EventToolDelta:
		tc, ok := p.tools[ev.ToolCallID]
		switch {
		case ev.ToolCallID == "":
			return errors.New("tool_delta needs toolCallId")
		case !ok:
			return fmt.Errorf("tool_delta for tool call %q before its tool_start", ev.ToolCallID)
		case tc.done:
			return fmt.Errorf("tool_delta for tool call %q after its tool_done", ev.ToolCallID)
		}
		tc.deltas.WriteString(ev.Text)
	case model.EventToolDone:
		return p.toolDone(n, ev)
	case model.EventUsage:
		if ev.Usage == nil {
			return errors.New("usage event needs usage")
		}
	case model.EventFinish:
		if ev.Finish == "" {
			ev.Finish = model.FinishEndTurn
			if len(p.order) > 0 {
				ev.Finish = model.FinishToolUse
			}
		} else if !slices.Contains(finishReasons, ev.Finish) {
			return fmt.Errorf("unknown finish reason %q", ev.Finish)
		}
		for _, id := range p.order {
			if tc := p.tools[id]; !tc.done {
				return fmt.Errorf("tool call %q started on line %d has no tool_done", id, tc.line)
			}
		}
		p.add(step{kind: stepEvent, line: n, event: ev})
		p.end()
		return nil
	}
	p.add(step{kind: stepEvent, line: n, event: ev})
	return nil
}

// toolDone adds a tool_done event, synthesising its tool_start and
// tool_delta when the script has none.
func (p *parser) toolDone(n int, ev model.Event) error {
	if ev.ToolCallID == "" {
		return errors.New("tool_done needs toolCallId")
	}
	tc, started := p.tools[ev.ToolCallID]
	switch {
	case !started:
		if ev.ToolName == "" {
			return errors.New("tool_done without tool_start needs toolName")
		}
		if len(ev.Input) == 0 {
			ev.Input = json.RawMessage("{}")
		}
		tc = &toolCall{line: n, name: ev.ToolName}
		p.tools[ev.ToolCallID] = tc
		p.order = append(p.order, ev.ToolCallID)
		p.add(step{kind: stepEvent, line: n, event: model.Event{
			Type: model.EventToolStart, ToolCallID: ev.ToolCallID, ToolName: ev.ToolName}})
		p.add(step{kind: stepEvent, line: n, event: model.Event{
			Type: model.EventToolDelta, ToolCallID: ev.ToolCallID, Text: string(ev.Input)}})
	case tc.done:
		return fmt.Errorf("tool call %q is already done", ev.ToolCallID)
	default:
		if ev.ToolName == "" {
			ev.ToolName = tc.name
		} else if ev.ToolName != tc.name {
			return fmt.Errorf("tool_done names tool %q but its tool_start on line %d names %q", ev.ToolName, tc.line, tc.name)
		}
		if len(ev.Input) == 0 {
			ev.Input = json.RawMessage("{}")
			if s := tc.deltas.String(); s != "" {
				if !json.Valid([]byte(s)) {
					return fmt.Errorf("tool call %q: its deltas are not valid JSON; give the input explicitly", ev.ToolCallID)
				}
				ev.Input = json.RawMessage(s)
			}
		}
	}
	tc.done = true
	p.add(step{kind: stepEvent, line: n, event: ev})
	return nil
}

func (p *parser) add(s step) { p.cur.steps = append(p.cur.steps, s) }

// end completes the current response.
func (p *parser) end() {
	p.responses = append(p.responses, *p.cur)
	p.cur = nil
}

// onlyAllowed reports whether ev sets only the fields its type uses.
func onlyAllowed(ev model.Event) bool {
	keep := model.Event{Type: ev.Type}
	switch ev.Type {
	case model.EventText, model.EventReasoning:
		keep.Text = ev.Text
	case model.EventReasoningDone:
		keep.Signature, keep.Redacted, keep.Opaque, keep.Provider = ev.Signature, ev.Redacted, ev.Opaque, ev.Provider
	case model.EventToolStart:
		keep.ToolCallID, keep.ToolName = ev.ToolCallID, ev.ToolName
	case model.EventToolDelta:
		keep.ToolCallID, keep.Text = ev.ToolCallID, ev.Text
	case model.EventToolDone:
		keep.ToolCallID, keep.ToolName, keep.Input = ev.ToolCallID, ev.ToolName, ev.Input
		keep.Signature, keep.Opaque, keep.Provider = ev.Signature, ev.Opaque, ev.Provider
	case model.EventUsage:
		keep.Usage = ev.Usage
	case model.EventFinish:
		keep.Finish = ev.Finish
	}
	return reflect.DeepEqual(keep, ev)
}

// decodeStrict decodes the single JSON object line into v, rejecting
// unknown fields and trailing data.
func decodeStrict(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid line: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("invalid line: data after the JSON object")
	}
	return nil
}
