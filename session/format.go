package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"acpd/internal/jsonscan"
)

// logVersion is the value of "v" in the header this package writes and the
// only one it reads.
const logVersion = 1

// maxLineBytes bounds one line of a log (header or record, without its
// newline). Append refuses larger records; a longer complete line in a log is
// damage.
const maxLineBytes = 64 << 20

// maxKindLen bounds record kinds.
const maxKindLen = 64

// header is the first line of every log.
type header struct {
	V                     int       `json:"v"`
	Kind                  string    `json:"kind"`
	ID                    string    `json:"id"`
	Cwd                   string    `json:"cwd,omitempty"`
	AdditionalDirectories []string  `json:"additionalDirectories,omitempty"`
	CreatedAt             time.Time `json:"createdAt"`
}

// encodeHeader returns the header line including its trailing newline.
func encodeHeader(h header) ([]byte, error) {
	b, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// validateKind reports whether kind may be used as a record kind:
// 1..maxKindLen bytes from [A-Za-z0-9._/-]. The restricted set keeps the
// envelope free of JSON escapes.
func validateKind(kind string) error {
	if kind == "" || len(kind) > maxKindLen {
		return fmt.Errorf("session: invalid record kind %q: want 1..%d bytes", kind, maxKindLen)
	}
	for i := 0; i < len(kind); i++ {
		if !kindByte(kind[i]) {
			return fmt.Errorf("session: invalid record kind %q: byte %#x not in [A-Za-z0-9._/-]", kind, kind[i])
		}
	}
	return nil
}

func kindByte(c byte) bool {
	return idByte(c) || c == '/'
}

// appendRecord appends the encoded line of a record (with trailing newline) to
// dst. kind must be valid and data must be compact, valid JSON.
func appendRecord(dst []byte, seq int64, t time.Time, kind string, data []byte) []byte {
	dst = append(dst, `{"seq":`...)
	dst = strconv.AppendInt(dst, seq, 10)
	dst = append(dst, `,"t":"`...)
	dst = t.UTC().AppendFormat(dst, time.RFC3339Nano)
	dst = append(dst, `","kind":"`...)
	dst = append(dst, kind...)
	dst = append(dst, `","data":`...)
	dst = append(dst, data...)
	return append(dst, '}', '\n')
}

// marshalData encodes a record payload as compact JSON. A json.RawMessage
// passes through (validated and compacted; empty means null); everything else
// goes through encoding/json without HTML escaping.
func marshalData(data any) ([]byte, error) {
	switch d := data.(type) {
	case json.RawMessage:
		if len(d) == 0 {
			return []byte("null"), nil
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, d); err != nil {
			return nil, fmt.Errorf("session: invalid json.RawMessage payload: %w", err)
		}
		return buf.Bytes(), nil
	case nil:
		return []byte("null"), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(data); err != nil {
		return nil, fmt.Errorf("session: marshal payload: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// parsed is the result of parsing a log image.
type parsed struct {
	header  header
	records []Record
	// good is the length of the valid prefix: everything after it is a torn
	// tail (an incomplete last line, or an unparseable last line).
	good int64
}

// errLine describes damage at a line of a log.
type errLine struct {
	line int
	msg  string
}

func (e *errLine) Error() string { return fmt.Sprintf("line %d: %s", e.line, e.msg) }

// parseLog parses a complete log image. wantID, when not empty, must match
// the header's id. The Data of returned records aliases data (but for
// records in another layout, whose data is compacted).
//
// A last line that lacks its newline or does not parse is a torn tail: it is
// excluded from the result and from good. Any other defect (missing or bad
// header, an unparseable line followed by more data, a sequence number that
// is not the previous one plus one) is returned as *errLine.
func parseLog(data []byte, wantID string) (parsed, error) {
	var p parsed
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		return p, &errLine{1, "incomplete header"}
	}
	if err := parseHeader(data[:nl], &p.header); err != nil {
		return p, &errLine{1, err.Error()}
	}
	if wantID != "" && p.header.ID != wantID {
		return p, &errLine{1, fmt.Sprintf("header names session %q, want %q", p.header.ID, wantID)}
	}
	pos := nl + 1
	p.good = int64(pos)
	if n := bytes.Count(data[pos:], []byte{'\n'}); n > 0 {
		p.records = make([]Record, 0, n)
	}
	kinds := make(map[string]string, 4)
	line := 1
	for pos < len(data) {
		nl := bytes.IndexByte(data[pos:], '\n')
		if nl < 0 {
			break // torn tail: no newline
		}
		line++
		end := pos + nl
		last := end+1 == len(data)
		var r Record
		err := parseRecord(data[pos:end], &r, kinds)
		if err != nil {
			if last {
				break // torn tail: final line does not parse
			}
			return p, &errLine{line, err.Error()}
		}
		if want := int64(len(p.records)) + 1; r.Seq != want {
			return p, &errLine{line, fmt.Sprintf("sequence number %d, want %d", r.Seq, want)}
		}
		p.records = append(p.records, r)
		pos = end + 1
		p.good = int64(pos)
	}
	return p, nil
}

func parseHeader(line []byte, h *header) error {
	if len(line) > maxLineBytes {
		return errors.New("header too long")
	}
	// Probe the version first so that a newer format is reported as such
	// rather than as whatever field it changed.
	var probe struct {
		V    *int    `json:"v"`
		Kind *string `json:"kind"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return fmt.Errorf("bad header: %v", err)
	}
	if probe.V == nil || probe.Kind == nil || *probe.Kind != "header" {
		return errors.New(`bad header: want {"v":1,"kind":"header",...}`)
	}
	if *probe.V != logVersion {
		return fmt.Errorf("unsupported log version %d (this acpd reads version %d)", *probe.V, logVersion)
	}
	if err := json.Unmarshal(line, h); err != nil {
		return fmt.Errorf("bad header: %v", err)
	}
	if err := validateID(h.ID); err != nil {
		return fmt.Errorf("bad header: %v", err)
	}
	return nil
}

// parseRecord decodes one record line (without newline) into r. The fast path
// recognises exactly the layout appendRecord writes (its data valid and
// compact, checked in one pass); anything else goes through encoding/json
// with the same validation, and its data is compacted: a record's Data is
// always compact, valid JSON. kinds interns kind strings.
func parseRecord(line []byte, r *Record, kinds map[string]string) error {
	if len(line) > maxLineBytes {
		return errors.New("record too long")
	}
	if fastRecord(line, r, kinds) {
		return nil
	}
	return slowRecord(line, r)
}

func fastRecord(line []byte, r *Record, kinds map[string]string) bool {
	rest, ok := bytes.CutPrefix(line, []byte(`{"seq":`))
	if !ok {
		return false
	}
	// At most 18 digits, so the value cannot overflow int64; longer
	// numbers take the slow path.
	var seq int64
	i := 0
	for i < len(rest) && i < 18 && '0' <= rest[i] && rest[i] <= '9' {
		seq = seq*10 + int64(rest[i]-'0')
		i++
	}
	if i == 0 || rest[0] == '0' {
		return false
	}
	rest, ok = bytes.CutPrefix(rest[i:], []byte(`,"t":"`))
	if !ok {
		return false
	}
	q := bytes.IndexByte(rest, '"')
	if q < 0 {
		return false
	}
	var t time.Time
	if t.UnmarshalText(rest[:q]) != nil {
		return false
	}
	rest, ok = bytes.CutPrefix(rest[q:], []byte(`","kind":"`))
	if !ok {
		return false
	}
	q = bytes.IndexByte(rest, '"')
	if q <= 0 || q > maxKindLen {
		return false
	}
	kb := rest[:q]
	for _, c := range kb {
		if !kindByte(c) {
			return false
		}
	}
	rest, ok = bytes.CutPrefix(rest[q:], []byte(`","data":`))
	if !ok || len(rest) < 2 || rest[len(rest)-1] != '}' {
		return false
	}
	data := rest[:len(rest)-1]
	if valid, compact := jsonscan.Check(data); !valid || !compact {
		return false
	}
	kind, ok := kinds[string(kb)]
	if !ok {
		kind = string(kb)
		kinds[kind] = kind
	}
	*r = Record{Seq: seq, Time: t, Kind: kind, Data: json.RawMessage(data[:len(data):len(data)])}
	return true
}

func slowRecord(line []byte, r *Record) error {
	var env struct {
		Seq  *int64          `json:"seq"`
		T    *string         `json:"t"`
		Kind *string         `json:"kind"`
		Data json.RawMessage `json:"data"`
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return fmt.Errorf("bad record: %v", err)
	}
	if len(bytes.TrimLeft(line[dec.InputOffset():], " \t\r\n")) != 0 {
		return errors.New("bad record: trailing data")
	}
	if env.Seq == nil || env.T == nil || env.Kind == nil || env.Data == nil {
		return errors.New(`bad record: want {"seq":N,"t":"...","kind":"...","data":...}`)
	}
	if *env.Seq < 1 {
		return fmt.Errorf("bad record: sequence number %d", *env.Seq)
	}
	if err := validateKind(*env.Kind); err != nil {
		return errors.New("bad record: invalid kind")
	}
	var t time.Time
	if err := t.UnmarshalText([]byte(*env.T)); err != nil {
		return fmt.Errorf("bad record: time: %v", err)
	}
	data := env.Data
	if _, compact := jsonscan.Check(data); !compact {
		var buf bytes.Buffer
		if err := json.Compact(&buf, data); err != nil {
			return fmt.Errorf("bad record: %v", err)
		}
		data = buf.Bytes()
	}
	*r = Record{Seq: *env.Seq, Time: t, Kind: *env.Kind, Data: data}
	return nil
}
