package main

// requestIDTemplate is emitted for the RequestId definition (null | integer | string).
const requestIDTemplate = `//
// The zero value is the null id. RequestID is comparable and usable as a map
// key; the number 1 and the string "1" are different ids.
type RequestID struct {
	kind int8 // 0 null, 1 number, 2 string
	num  int64
	str  string
}

// NewNumberID returns the integer request id n.
func NewNumberID(n int64) RequestID { return RequestID{kind: 1, num: n} }

// NewStringID returns the string request id s.
func NewStringID(s string) RequestID { return RequestID{kind: 2, str: s} }

// IsNull reports whether id is the JSON null id.
func (id RequestID) IsNull() bool { return id.kind == 0 }

// Number returns the id and true when id is an integer.
func (id RequestID) Number() (int64, bool) { return id.num, id.kind == 1 }

// Str returns the id and true when id is a string.
func (id RequestID) Str() (string, bool) { return id.str, id.kind == 2 }

// String returns the JSON encoding of id: null, 42 or "abc" (quoted).
func (id RequestID) String() string {
	switch id.kind {
	case 1:
		return strconv.FormatInt(id.num, 10)
	case 2:
		b, _ := json.Marshal(id.str)
		return string(b)
	}
	return "null"
}

// MarshalJSON implements [json.Marshaler].
func (id RequestID) MarshalJSON() ([]byte, error) { return []byte(id.String()), nil }

// UnmarshalJSON implements [json.Unmarshaler]. It accepts null, an integer
// literal that fits in int64, or a string; anything else is an error.
func (id *RequestID) UnmarshalJSON(data []byte) error {
	switch k := genKind(data); k {
	case "null":
		*id = RequestID{}
		return nil
	case "integer":
		var n int64
		if err := json.Unmarshal(data, &n); err != nil {
			return fmt.Errorf("acp: RequestID: %w", err)
		}
		*id = NewNumberID(n)
		return nil
	case "string":
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("acp: RequestID: %w", err)
		}
		*id = NewStringID(s)
		return nil
	default:
		return fmt.Errorf("acp: RequestID: a JSON %s is not a valid request id", k)
	}
}

`

// helpers are emitted once at the end of the generated file.
const helpers = `
// genMember is one member of a JSON object: its (unescaped) key and its raw
// value, a subslice of the input.
type genMember struct {
	key string
	val []byte
}

// genMembers are the members of a JSON object in input order.
type genMembers []genMember

// get returns the value of key; like encoding/json, the last duplicate wins.
func (ms genMembers) get(key string) ([]byte, bool) {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].key == key {
			return ms[i].val, true
		}
	}
	return nil, false
}

// genObject splits data, which must be a JSON object, into its members
// without copying them. Values are delimited but not validated: callers
// decode data with encoding/json afterwards, which does.
func genObject(typ string, data []byte) (genMembers, error) {
	i := genSpace(data, 0)
	if i < len(data) && data[i] == 'n' {
		return nil, fmt.Errorf("acp: %s: expected a JSON object, got null", typ)
	}
	bad := fmt.Errorf("acp: %s: malformed JSON object", typ)
	if i >= len(data) || data[i] != '{' {
		return nil, fmt.Errorf("acp: %s: expected a JSON object", typ)
	}
	ms := genMembers{}
	if i = genSpace(data, i+1); i < len(data) && data[i] == '}' {
		return ms, nil
	}
	for {
		end := genStringEnd(data, i)
		if end < 0 {
			return nil, bad
		}
		key := string(data[i+1 : end-1])
		if strings.IndexByte(key, '\\') >= 0 && json.Unmarshal(data[i:end], &key) != nil {
			return nil, bad
		}
		if i = genSpace(data, end); i >= len(data) || data[i] != ':' {
			return nil, bad
		}
		start := genSpace(data, i+1)
		end = genValueEnd(data, start)
		if end <= start {
			return nil, bad
		}
		ms = append(ms, genMember{key, data[start:end]})
		switch i = genSpace(data, end); {
		case i < len(data) && data[i] == ',':
			i = genSpace(data, i+1)
		case i < len(data) && data[i] == '}':
			return ms, nil
		default:
			return nil, bad
		}
	}
}

// genSpace returns the index of the first non-space byte of data at or after i.
func genSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// genStringEnd returns the index after the JSON string starting at data[i],
// or -1 when there is none.
func genStringEnd(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	for i++; i < len(data); i += 2 {
		n := bytes.IndexAny(data[i:], "\"\\")
		if n < 0 {
			return -1
		}
		if i += n; data[i] == '"' {
			return i + 1
		}
	}
	return -1
}

// genValueEnd returns the index after the JSON value starting at data[i]
// (scalars end at the next delimiter), or -1 for an unterminated value.
func genValueEnd(data []byte, i int) int {
	depth := 0
	for i < len(data) {
		switch data[i] {
		case '"':
			if i = genStringEnd(data, i); i < 0 || depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth <= 0 {
				return i + 1 + depth // a scalar ends before the bracket
			}
		case ',', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	if depth == 0 {
		return i
	}
	return -1
}

// genIsNull reports whether raw is the JSON null literal.
func genIsNull(raw []byte) bool { return string(raw) == "null" }

// genCheckObject fails unless ms has every key of required (non-null) and of nullOK.
func genCheckObject(typ string, ms genMembers, required, nullOK []string) error {
	for _, k := range required {
		if v, ok := ms.get(k); !ok || genIsNull(v) {
			return fmt.Errorf("acp: %s: missing required property %q", typ, k)
		}
	}
	for _, k := range nullOK {
		if _, ok := ms.get(k); !ok {
			return fmt.Errorf("acp: %s: missing required property %q", typ, k)
		}
	}
	return nil
}

// genLenient decodes raw (nil: absent) into a T, or returns T's zero value
// when it does not decode: the schema's x-deserialize-default-on-error,
// which the generated code applies to the UNSTABLE additions of stable
// definitions, so that a peer's draft field never fails a whole message.
func genLenient[T any](raw json.RawMessage) T {
	var v T
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		var zero T
		return zero
	}
	return v
}

// genCheckRequired is genCheckObject for undecoded data.
func genCheckRequired(typ string, data []byte, required, nullOK []string) error {
	ms, err := genObject(typ, data)
	if err != nil {
		return err
	}
	return genCheckObject(typ, ms, required, nullOK)
}

// genTag returns the string value of the discriminator prop, if present.
func genTag(typ string, ms genMembers, prop string) (string, bool, error) {
	raw, ok := ms.get(prop)
	if !ok {
		return "", false, nil
	}
	var tag string
	if genIsNull(raw) || json.Unmarshal(raw, &tag) != nil {
		return "", false, fmt.Errorf("acp: %s: %q must be a string", typ, prop)
	}
	return tag, true, nil
}

// genHasKeys reports whether ms has all keys.
func genHasKeys(ms genMembers, keys ...string) bool {
	for _, k := range keys {
		if _, ok := ms.get(k); !ok {
			return false
		}
	}
	return true
}

// genDecode decodes data into the variant v of union typ.
func genDecode(typ, variant string, data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("acp: %s %s: %w", typ, variant, err)
	}
	return nil
}

// genRemainder validates data, then re-encodes its members ms in canonical
// form without those named by drop (matched case-insensitively, as
// encoding/json matches fields).
func genRemainder(typ string, data []byte, ms genMembers, drop ...string) (json.RawMessage, error) {
	if !json.Valid(data) {
		return nil, fmt.Errorf("acp: %s: invalid JSON", typ)
	}
	rest := make(map[string]json.RawMessage, len(ms))
next:
	for _, m := range ms {
		for _, d := range drop {
			if strings.EqualFold(m.key, d) {
				continue next
			}
		}
		rest[m.key] = m.val
	}
	return json.Marshal(rest)
}

// genBuf is a buffer with an encoder writing to it, pooled for genJoin.
type genBuf struct {
	b   bytes.Buffer
	enc *json.Encoder
}

var genBufs = sync.Pool{New: func() any {
	g := &genBuf{}
	g.enc = json.NewEncoder(&g.b)
	return g
}}

// genBufKeep bounds the buffers genBufs keeps: a longer chunk's is left to
// the collector rather than held by the pool.
const genBufKeep = 64 << 10

// genJoin encodes parts, which must encode as JSON objects, and merges their
// members after tag (a "key":"value" member, or empty) into one object.
func genJoin(tag string, parts ...any) ([]byte, error) {
	// The parts are encoded into a pooled buffer (an encoder writes what
	// json.Marshal returns, and a newline) and the result is allocated at
	// its size: a union holding a long text (a streamed chunk) is copied
	// once more, not through a growing buffer, and the parts' encodings
	// are not allocated each.
	g := genBufs.Get().(*genBuf)
	defer func() {
		if g.b.Cap() <= genBufKeep {
			genBufs.Put(g)
		}
	}()
	g.b.Reset()
	var one [1][2]int
	bodies := one[:0] // each part's members: g.b.Bytes()[start:end]
	if len(parts) > 1 {
		bodies = make([][2]int, 0, len(parts))
	}
	n := 2 + len(tag)
	for _, p := range parts {
		start := g.b.Len()
		if err := g.enc.Encode(p); err != nil {
			return nil, err
		}
		b := g.b.Bytes()[start : g.b.Len()-1] // without the newline
		if len(b) < 2 || b[0] != '{' {
			return nil, fmt.Errorf("acp: union variant encoded as %.20s, not as a JSON object", b)
		}
		bodies = append(bodies, [2]int{start + 1, start + len(b) - 1})
		n += len(b) - 1
	}
	all := g.b.Bytes()
	out := make([]byte, 0, n)
	out = append(append(out, '{'), tag...)
	for _, se := range bodies {
		if body := all[se[0]:se[1]]; len(body) > 0 {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(out, body...)
		}
	}
	return append(out, '}'), nil
}

// genCountError reports a union value with n != 1 variants set.
func genCountError(typ string, n int) error {
	return fmt.Errorf("acp: %s: exactly one variant must be set, found %d", typ, n)
}

// genKind names the JSON type of data: null, boolean, string, integer (a
// number literal without fraction or exponent), number, array, object or invalid.
func genKind(data []byte) string {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return "invalid"
	}
	switch c := data[0]; {
	case c == 'n':
		if string(data) != "null" {
			return "invalid"
		}
		return "null"
	case c == 't' || c == 'f':
		return "boolean"
	case c == '"':
		return "string"
	case c == '[':
		return "array"
	case c == '{':
		return "object"
	case c == '-' || (c >= '0' && c <= '9'):
		if bytes.ContainsAny(data, ".eE") {
			return "number"
		}
		return "integer"
	}
	return "invalid"
}

// genFirstElement returns the members of the first element of a JSON array
// of objects, or nil for an empty array.
func genFirstElement(typ string, data []byte) (genMembers, error) {
	i := genSpace(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, fmt.Errorf("acp: %s: expected a JSON array", typ)
	}
	start := genSpace(data, i+1)
	if start < len(data) && data[start] == ']' {
		return nil, nil
	}
	end := genValueEnd(data, start)
	if end <= start {
		return nil, fmt.Errorf("acp: %s: malformed JSON array", typ)
	}
	return genObject(typ, data[start:end])
}
`
