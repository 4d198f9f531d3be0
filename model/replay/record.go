package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"log/slog"
	"slices"
	"sync"

	"acpd/model"
)

// recorder is the model.Backend returned by NewRecorder.
type recorder struct {
	b model.Backend

	mu  sync.Mutex // guards w and err
	w   io.Writer
	err error // first write error; recording stopped then
}

// NewRecorder returns a backend that streams from b and appends every
// response it streams to w as a replay script, so that a live session can
// be replayed with [New]. Each response is written, in one Write call once
// its stream has ended, as a {"type":"request","model":...,"messages":N}
// line (counts only, never message content) followed by the events as
// streamed and ending in finish or an error line. Writes are serialised, so
// responses of concurrent streams do not interleave; but only a single
// session's requests, in order, make a script that replays as recorded.
//
// A stream that fails, or that its consumer abandons, before yielding any
// event other than usage is written as comment lines only: the agent keeps
// no assistant message for such a response, so the next request (a retry,
// or the next prompt) needs the same response number. A stream that ends
// early after output ends with an error line: the kind and status of a
// *model.Error (retryAfterMs rounded down to milliseconds), or kind
// "replay" for cancellation, other errors and abandonment.
//
// The caller owns w and closes it after the last stream has ended. The
// first write error is logged (to slog.Default()) and stops recording;
// streams are never failed because of the recording.
func NewRecorder(b model.Backend, w io.Writer) model.Backend {
	return &recorder{b: b, w: w}
}

// Stream streams req from the wrapped backend, recording the response.
func (r *recorder) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		var (
			events    []model.Event
			failure   error
			finished  bool
			abandoned bool
		)
		for ev, err := range r.b.Stream(ctx, req) {
			if err != nil {
				failure = err
				yield(ev, err)
				break
			}
			events = append(events, cloneEvent(ev))
			finished = ev.Type == model.EventFinish
			if !yield(ev, nil) {
				abandoned = !finished
				break
			}
			if finished {
				break
			}
		}
		switch {
		case finished, failure != nil:
		case abandoned && ctx.Err() != nil:
			failure = ctx.Err()
		case abandoned:
			failure = errors.New("the consumer stopped reading the stream")
		default:
			failure = errors.New("the stream ended without a finish event")
		}
		r.record(req, events, failure)
	}
}

// record writes one response; failure is nil when it finished.
func (r *recorder) record(req *model.Request, events []model.Event, failure error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	encode := func(v any) {
		if err := enc.Encode(v); err != nil {
			// Events came from a backend as valid JSON values; an encoding
			// failure would be a bug in that backend.
			panic(fmt.Sprintf("replay: recording: %v", err))
		}
	}
	reqLine := requestLine{Type: typeRequest}
	if req != nil {
		reqLine.Model, reqLine.Messages = req.Model, len(req.Messages)
	}
	encode(reqLine)

	output := false
	for _, ev := range events {
		output = output || ev.Type != model.EventUsage
	}
	if failure != nil && !output {
		fmt.Fprintf(&buf, "# request failed before any output (not a response): %s\n", oneLine(failure.Error()))
	} else {
		for _, ev := range events {
			encode(ev)
		}
		if failure != nil {
			encode(errorLineFor(failure))
		}
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return
	}
	if _, err := r.w.Write(buf.Bytes()); err != nil {
		r.err = err
		slog.Default().Warn("replay recorder: write failed, recording stopped", "err", err)
	}
}

// errorLineFor returns the error line that replays err.
func errorLineFor(err error) errorLine {
	var me *model.Error
	if errors.As(err, &me) {
		msg := me.Message
		if msg == "" && me.Err != nil {
			msg = me.Err.Error()
		}
		l := errorLine{
			Type: typeError, Kind: me.Kind, Message: msg, Status: me.Status,
			RetryAfterMS: min(max(me.RetryAfter, 0), maxDelay).Milliseconds(),
		}
		if !slices.Contains(errorKinds, l.Kind) {
			l.Kind = model.ErrReplay
		}
		if l.Status < 0 || l.Status > 999 {
			l.Status = 0
		}
		return l
	}
	return errorLine{Type: typeError, Kind: model.ErrReplay, Message: "recorded stream ended early: " + err.Error()}
}

// oneLine replaces line breaks so that s fits in a comment line.
func oneLine(s string) string {
	return string(bytes.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, []byte(s)))
}
