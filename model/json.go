package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"unicode/utf8"
)

// WriteJSON writes m as encoding/json encodes it without HTML escaping
// (json.Encoder with SetEscapeHTML(false), without the trailing newline),
// byte for byte, through a small buffer: a message holding a long answer is
// never encoded whole in memory (encoding/json would build it in a growing
// buffer and then copy it). The session log stores assistant messages this
// way. An Input or Opaque that is not valid JSON is an error, as it is for
// encoding/json; w may then have received part of the encoding.
func (m Message) WriteJSON(w io.Writer) error {
	bp := jsonBufs.Get().(*[]byte)
	defer jsonBufs.Put(bp)
	e := jsonWriter{w: w, buf: (*bp)[:0]}
	e.raw(`{"role":`)
	e.str(string(m.Role))
	e.raw(`,"parts":`)
	if m.Parts == nil {
		e.raw("null")
	} else {
		e.parts(m.Parts)
	}
	if m.Cache {
		e.raw(`,"cache":true`)
	}
	if m.Interrupted {
		e.raw(`,"interrupted":true`)
	}
	e.raw("}")
	return e.flush()
}

// jsonChunk is the size at which jsonWriter passes its buffer on.
const jsonChunk = 32 << 10

// jsonBufs holds WriteJSON's buffers between messages: the session log
// writes every message with one, and a turn writes several.
var jsonBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, jsonChunk+utf8.UTFMax+16)
	return &b
}}

// jsonWriter encodes into buf and writes buf to w whenever it passes
// jsonChunk. The first error is kept; later writes are dropped.
type jsonWriter struct {
	w   io.Writer
	buf []byte
	err error
}

func (e *jsonWriter) flush() error {
	if e.err == nil && len(e.buf) > 0 {
		_, e.err = e.w.Write(e.buf)
	}
	e.buf = e.buf[:0]
	return e.err
}

func (e *jsonWriter) maybeFlush() {
	if len(e.buf) >= jsonChunk {
		e.flush()
	}
}

func (e *jsonWriter) raw(s string) {
	e.buf = append(e.buf, s...)
	e.maybeFlush()
}

func (e *jsonWriter) parts(ps []Part) {
	e.raw("[")
	for i := range ps {
		if i > 0 {
			e.raw(",")
		}
		e.part(&ps[i])
	}
	e.raw("]")
}

// part writes p's fields in declaration order, omitting the empty ones
// (their omitempty tags).
func (e *jsonWriter) part(p *Part) {
	e.raw(`{"type":`)
	e.str(string(p.Type))
	e.field(`,"text":`, p.Text)
	e.field(`,"mimeType":`, p.MimeType)
	e.field(`,"data":`, p.Data)
	e.field(`,"toolCallId":`, p.ToolCallID)
	e.field(`,"toolName":`, p.ToolName)
	e.rawField(`,"input":`, p.Input)
	if len(p.Content) > 0 {
		e.raw(`,"content":`)
		e.parts(p.Content)
	}
	if p.IsError {
		e.raw(`,"isError":true`)
	}
	e.field(`,"signature":`, p.Signature)
	if p.Redacted {
		e.raw(`,"redacted":true`)
	}
	e.rawField(`,"opaque":`, p.Opaque)
	e.field(`,"provider":`, p.Provider)
	if p.Continued {
		e.raw(`,"continued":true`)
	}
	e.raw("}")
}

func (e *jsonWriter) field(key, v string) {
	if v != "" {
		e.raw(key)
		e.str(v)
	}
}

// rawField writes a json.RawMessage compacted, as encoding/json does.
func (e *jsonWriter) rawField(key string, v json.RawMessage) {
	if len(v) == 0 {
		return
	}
	e.raw(key)
	b := bytes.NewBuffer(e.buf)
	if err := json.Compact(b, v); err != nil {
		if e.err == nil {
			e.err = fmt.Errorf("json: error calling MarshalJSON for type json.RawMessage: %w", err)
		}
		return
	}
	e.buf = b.Bytes()
	e.maybeFlush()
}

const hexDigits = "0123456789abcdef"

// str writes s as a JSON string exactly as encoding/json does without HTML
// escaping: invalid UTF-8 becomes U+FFFD, U+2028 and U+2029 are escaped.
func (e *jsonWriter) str(s string) {
	e.buf = append(e.buf, '"')
	start := 0
	for i := 0; i < len(s); {
		if len(e.buf)+(i-start) >= jsonChunk {
			e.buf = append(e.buf, s[start:i]...)
			start = i
			e.flush()
		}
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			e.buf = append(e.buf, s[start:i]...)
			switch b {
			case '\\', '"':
				e.buf = append(e.buf, '\\', b)
			case '\b':
				e.buf = append(e.buf, '\\', 'b')
			case '\f':
				e.buf = append(e.buf, '\\', 'f')
			case '\n':
				e.buf = append(e.buf, '\\', 'n')
			case '\r':
				e.buf = append(e.buf, '\\', 'r')
			case '\t':
				e.buf = append(e.buf, '\\', 't')
			default:
				e.buf = append(e.buf, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			e.buf = append(e.buf, s[start:i]...)
			e.buf = append(e.buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			e.buf = append(e.buf, s[start:i]...)
			e.buf = append(e.buf, `\u202`...)
			e.buf = strconv.AppendInt(e.buf, int64(c&0xF), 16)
			i += size
			start = i
			continue
		}
		i += size
	}
	e.buf = append(e.buf, s[start:]...)
	e.buf = append(e.buf, '"')
	e.maybeFlush()
}
