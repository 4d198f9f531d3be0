// Package sse reads Server-Sent Events streams (the text/event-stream
// format of the WHATWG HTML standard) and holds the HTTP plumbing the
// streaming model backends share: an idle-timeout guarded request
// ([Open]) and Retry-After parsing ([RetryAfter]).
package sse

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"sync"
)

// DefaultMaxEventBytes is the event size limit [NewReader] applies when
// given a limit of zero or less.
const DefaultMaxEventBytes = 4 << 20

// ErrEventTooLarge is returned by [Reader.Next] when a line or the data of
// one event exceeds the reader's size limit. The stream cannot be resumed.
var ErrEventTooLarge = errors.New("sse: event exceeds size limit")

// Event is one dispatched event.
type Event struct {
	// Event is the value of the event's "event" field, "" when it had none
	// (the standard then calls the event "message").
	Event string
	// Data is the event's data lines joined by "\n".
	Data string
	// ID is the last event ID of the stream when the event was dispatched
	// (it persists across events, as the standard requires).
	ID string
	// Retry is the last reconnection time in milliseconds the stream set
	// with a "retry" field before this event, 0 if none.
	Retry int
}

// Reader parses an event stream incrementally. It is not safe for
// concurrent use. It never closes the underlying reader.
type Reader struct {
	r   io.Reader
	max int

	buf        []byte // read buffer; buf[start:end] is unconsumed
	bufMax     int    // the size buf may grow to
	start, end int
	readErr    error // pending error of the underlying reader
	empties    int   // consecutive (0, nil) reads

	line    []byte // partial line carried across reads
	partial bool   // line holds an unterminated line
	skipLF  bool   // the last line ended with '\r': ignore a leading '\n'
	bomDone bool

	data      []byte // data buffer, each line followed by '\n'
	eventType []byte
	pending   bool // a field of an undispatched event was seen
	id        string
	retry     int

	err error // sticky terminal error
}

// The read buffer starts at readBufMin and doubles, up to readBufMax,
// each time a read fills it: a model streams deltas of tens of bytes, a few
// hundred bytes a read, so a stream that trickles holds 4 KiB (one
// acpd serving 50 streams held 1.6 MB of 32 KiB buffers), and one that
// arrives in bulk (a replayed or buffered answer) soon reads 32 KiB at a
// time.
const (
	readBufMin = 4 << 10
	readBufMax = 32 << 10
)

// NewReader returns a Reader of r. maxEventBytes bounds both the length of
// one line and the data of one event; zero or less means
// [DefaultMaxEventBytes]. Memory use is O(maxEventBytes).
func NewReader(r io.Reader, maxEventBytes int) *Reader {
	if maxEventBytes <= 0 {
		maxEventBytes = DefaultMaxEventBytes
	}
	bufMax := min(readBufMax, maxEventBytes+2)
	return &Reader{r: r, max: maxEventBytes, bufMax: bufMax, buf: make([]byte, min(readBufMin, bufMax))}
}

// readBufs keeps the grown (readBufMax) read buffers of released Readers
// for Readers that grow theirs later: a bulk answer would otherwise
// allocate a new 32 KiB buffer each.
var readBufs = sync.Pool{New: func() any { b := make([]byte, readBufMax); return &b }}

// Release gives r's read buffer back for later Readers; r must not be
// used after it. The events r returned stay valid (they own their bytes).
func (r *Reader) Release() {
	if cap(r.buf) == readBufMax {
		b := r.buf[:readBufMax]
		readBufs.Put(&b)
	}
	r.buf, r.start, r.end = nil, 0, 0
	if r.err == nil {
		r.err = errReleased
	}
}

// errReleased is what a released Reader's Next returns.
var errReleased = errors.New("sse: reader released")

// Next returns the next event. At the end of the stream it returns io.EOF,
// or io.ErrUnexpectedEOF when the stream ended inside an event or line
// (the standard discards such an incomplete event). A read error of the
// underlying reader is returned as is; [ErrEventTooLarge] reports an
// oversized event. Every error is final: later calls return it again.
func (r *Reader) Next() (Event, error) {
	if r.err != nil {
		return Event{}, r.err
	}
	for {
		line, err := r.nextLine()
		if err != nil {
			if err == io.EOF && (r.partial || r.pending) {
				err = io.ErrUnexpectedEOF
			}
			r.err = err
			return Event{}, err
		}
		if len(line) == 0 {
			if ev, ok := r.dispatch(); ok {
				return ev, nil
			}
			continue
		}
		if err := r.field(line); err != nil {
			r.err = err
			return Event{}, err
		}
	}
}

// dispatch ends the current event; ok is false when it had no data.
func (r *Reader) dispatch() (Event, bool) {
	r.pending = false
	if len(r.data) == 0 {
		r.eventType = r.eventType[:0]
		return Event{}, false
	}
	ev := Event{
		Event: string(r.eventType),
		Data:  string(r.data[:len(r.data)-1]),
		ID:    r.id,
		Retry: r.retry,
	}
	r.data = r.data[:0]
	r.eventType = r.eventType[:0]
	return ev, true
}

// field processes one non-empty line.
func (r *Reader) field(line []byte) error {
	if line[0] == ':' {
		return nil // comment
	}
	name, value := line, []byte(nil)
	if i := bytes.IndexByte(line, ':'); i >= 0 {
		name, value = line[:i], line[i+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(name) {
	case "data":
		if len(r.data)+len(value)+1 > r.max {
			return ErrEventTooLarge
		}
		r.data = append(r.data, value...)
		r.data = append(r.data, '\n')
		r.pending = true
	case "event":
		r.eventType = append(r.eventType[:0], value...)
		r.pending = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			r.id = string(value)
		}
	case "retry":
		if n, ok := digits(value); ok {
			r.retry = n
		}
	}
	return nil
}

// digits parses an all-ASCII-digit value; overflowing values are ignored.
func digits(b []byte) (int, bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(string(b))
	return n, err == nil
}

// nextLine returns the next complete line without its terminator. The
// slice is valid until the next call.
func (r *Reader) nextLine() ([]byte, error) {
	for {
		if r.start < r.end {
			if !r.bomDone {
				if r.end-r.start < 3 && r.readErr == nil &&
					bytes.HasPrefix([]byte("\xEF\xBB\xBF"), r.buf[r.start:r.end]) {
					_ = r.fill() // errors are kept in r.readErr and surface below
					continue
				}
				r.bomDone = true
				if bytes.HasPrefix(r.buf[r.start:r.end], []byte("\xEF\xBB\xBF")) {
					r.start += 3
					continue
				}
			}
			if r.skipLF {
				r.skipLF = false
				if r.buf[r.start] == '\n' {
					r.start++
					continue
				}
			}
			chunk := r.buf[r.start:r.end]
			i := bytes.IndexByte(chunk, '\n')
			search := chunk
			if i >= 0 {
				search = chunk[:i]
			}
			if j := bytes.IndexByte(search, '\r'); j >= 0 {
				i = j
			}
			if i >= 0 {
				line := chunk[:i]
				r.start += i + 1
				if chunk[i] == '\r' {
					r.skipLF = true
				}
				if r.partial {
					if len(r.line)+len(line) > r.max {
						return nil, ErrEventTooLarge
					}
					r.line = append(r.line, line...)
					line = r.line
					r.line = r.line[:0]
					r.partial = false
				} else if len(line) > r.max {
					return nil, ErrEventTooLarge
				}
				return line, nil
			}
			if len(r.line)+len(chunk) > r.max {
				return nil, ErrEventTooLarge
			}
			r.line = append(r.line, chunk...)
			r.partial = true
			r.start, r.end = 0, 0
		}
		if err := r.fill(); err != nil {
			return nil, err
		}
	}
}

// fill reads more bytes into the buffer, keeping unconsumed ones.
func (r *Reader) fill() error {
	if r.readErr != nil {
		return r.readErr
	}
	if r.start > 0 {
		n := copy(r.buf, r.buf[r.start:r.end])
		r.start, r.end = 0, n
	}
	n, err := r.r.Read(r.buf[r.end:])
	if n < 0 || n > len(r.buf)-r.end {
		r.readErr = errors.New("sse: invalid read count")
		return r.readErr
	}
	if r.end += n; r.end == len(r.buf) && len(r.buf) < r.bufMax {
		// The read filled the buffer: more is likely waiting.
		var buf []byte
		if n := min(2*len(r.buf), r.bufMax); n == readBufMax {
			buf = *readBufs.Get().(*[]byte)
		} else {
			buf = make([]byte, n)
		}
		r.end = copy(buf, r.buf[r.start:r.end])
		r.buf, r.start = buf, 0
	}
	if err != nil {
		r.readErr = err
		if n > 0 {
			return nil
		}
		return err
	}
	if n == 0 {
		r.empties++
		if r.empties >= 100 {
			r.readErr = io.ErrNoProgress
			return r.readErr
		}
	} else {
		r.empties = 0
	}
	return nil
}
