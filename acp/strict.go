package acp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"acpd/internal/jsonscan"
)

// Unmarshal decodes JSON data into v like json.Unmarshal, but first checks
// the object keys against v's Go type so that peer input cannot rely on
// encoding/json's case-insensitive field matching:
//
//   - A key that is not spelled exactly like a field's JSON name but matches
//     it case-insensitively (for example "SessionId" for "sessionId", or a
//     Unicode fold such as "ſessionId") is rejected, at any depth: through
//     nested structs, pointers, slices, arrays and map values.
//   - A key that appears twice in one object is rejected.
//   - Unknown keys are allowed and ignored.
//   - When v points to a struct or a map, data must be a JSON object; null,
//     empty input and any other JSON value are rejected. Nested values that
//     have the wrong kind are rejected by encoding/json as usual; nested nulls
//     keep their encoding/json meaning (zero value).
//
// For a struct type with its own UnmarshalJSON method (typically a union),
// the keys are checked against the fields that carry an explicit json name
// tag and against the fields of its exported untagged struct (or pointer to
// struct) fields, which are taken to be the union's variants; keys inside
// such values are not checked further unless they match one of those fields.
// Other types with a custom UnmarshalJSON, interfaces and json.RawMessage are
// not inspected.
//
// A union of this package whose schema lists its variants exhaustively
// (one without an "other" branch) must hold one of them: an unknown variant,
// which plain json.Unmarshal keeps in the union's Other field, is rejected.
// Peers' messages that acpd only consumes (what it receives as a client) are
// decoded without that last rule, see [UnmarshalLenient].
//
// The returned error names the offending key and its path ("$.a.b[2]").
// Unmarshal is safe for concurrent use.
func Unmarshal(data []byte, v any) error {
	return unmarshalStrict(data, v, false, true)
}

// UnmarshalLenient is Unmarshal except that unions keep the variants this
// schema version does not define in their Other field instead of failing:
// a peer speaking a newer schema (codex-acp's "env_var" auth method, say)
// must not fail a whole message over a part acpd does not need.
func UnmarshalLenient(data []byte, v any) error {
	return unmarshalStrict(data, v, false, false)
}

// closedUnion is implemented by the unions of this package whose schema
// lists their variants exhaustively (generated).
type closedUnion interface {
	acpUnion() *unionInfo
}

var closedUnionType = reflect.TypeFor[closedUnion]()

// unionInfo describes the variants of a closed union: an object is one of
// them when its discriminator disc (if any) holds one of tags, or, without
// the discriminator, when it has every key of one of keys (when the union
// has several untagged variants).
type unionInfo struct {
	name string
	disc string
	tags []string
	keys [][]string

	bits map[string]uint // keys member -> bit, built by fieldsOf
}

// check reports a variant the union does not define, given the raw
// discriminator value (nil when absent) and the bits of the keys present.
// Input that does not decode is left for decoding to report.
func (u *unionInfo) check(tag []byte, present uint64) error {
	if tag != nil {
		if tag[0] != '"' {
			return nil
		}
		end, complex := jsonscan.StringEnd(tag, 0)
		t := unquote(tag[:end], complex)
		if slices.Contains(u.tags, t) {
			return nil
		}
		return fmt.Errorf("acp: %s: unknown %s %s", u.name, u.disc, quoteKey(t))
	}
	if len(u.keys) == 0 {
		return nil
	}
next:
	for _, set := range u.keys {
		for _, k := range set {
			if present&(1<<u.bits[k]) == 0 {
				continue next
			}
		}
		return nil
	}
	return fmt.Errorf("acp: %s: cannot tell the variant: none of its distinguishing properties is present", u.name)
}

// unmarshalStrict implements Unmarshal. allowNull accepts JSON null (or
// empty input) for an object-typed target, leaving it unchanged; Call uses it
// for results, where peers commonly answer "null" for empty results.
// variants rejects unknown variants of closed unions.
func unmarshalStrict(data []byte, v any, allowNull, variants bool) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &json.InvalidUnmarshalError{Type: reflect.TypeOf(v)}
	}
	trimmed := bytes.TrimSpace(data)
	t := rv.Type().Elem()
	if needsObject(t) {
		switch {
		case len(trimmed) == 0 || string(trimmed) == "null":
			if allowNull {
				return nil
			}
			return errors.New("acp: expected a JSON object, got " + describeJSON(trimmed))
		case !json.Valid(trimmed):
			return json.Unmarshal(trimmed, v) // reports the syntax error
		case trimmed[0] != '{':
			return errors.New("acp: expected a JSON object, got " + describeJSON(trimmed))
		}
	} else if !json.Valid(trimmed) {
		return json.Unmarshal(trimmed, v)
	}
	if err := checkStrict(trimmed, t, "$", variants); err != nil {
		return err
	}
	return json.Unmarshal(trimmed, v)
}

// needsObject reports whether a JSON value for t must be an object.
func needsObject(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if hasCustomUnmarshal(t) {
		return false
	}
	return t.Kind() == reflect.Struct || t.Kind() == reflect.Map
}

// describeJSON names the kind of a JSON value for error messages without
// echoing its content.
func describeJSON(b []byte) string {
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	rawMessageType      = reflect.TypeFor[json.RawMessage]()
)

func hasCustomUnmarshal(t reflect.Type) bool {
	return t.Implements(jsonUnmarshalerType) || reflect.PointerTo(t).Implements(jsonUnmarshalerType)
}

// checkStrict walks the validated JSON value data alongside the Go type t.
func checkStrict(data []byte, t reflect.Type, path string, variants bool) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if len(data) == 0 || t == rawMessageType {
		return nil
	}
	c := data[0]
	if hasCustomUnmarshal(t) {
		if t.Kind() == reflect.Struct && c == '{' {
			return checkObject(data, fieldsOf(t), path, variants)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		if c != '{' {
			return nil // encoding/json reports the type mismatch (null is allowed)
		}
		return checkObject(data, fieldsOf(t), path, variants)
	case reflect.Map:
		if c != '{' {
			return nil
		}
		elem := t.Elem()
		seen := make(map[string]struct{})
		return forEachMember(data, func(key string, val []byte) error {
			if _, dup := seen[key]; dup {
				return fmt.Errorf("acp: duplicate key %s at %s", quoteKey(key), path)
			}
			seen[key] = struct{}{}
			return checkStrict(val, elem, path+"."+clip(key), variants)
		})
	case reflect.Slice, reflect.Array:
		if c != '[' {
			return nil // includes []byte as a base64 string
		}
		elem := t.Elem()
		i := 0
		return forEachElement(data, func(val []byte) error {
			err := checkStrict(val, elem, path+"["+strconv.Itoa(i)+"]", variants)
			i++
			return err
		})
	default:
		return nil
	}
}

// checkObject checks the members of the JSON object data against fs.
func checkObject(data []byte, fs *fieldSet, path string, variants bool) error {
	seen := make(map[string]struct{})
	u := fs.union
	if !variants {
		u = nil
	}
	var (
		tag     []byte
		present uint64
	)
	err := forEachMember(data, func(key string, val []byte) error {
		if _, dup := seen[key]; dup {
			return fmt.Errorf("acp: duplicate key %s at %s", quoteKey(key), path)
		}
		seen[key] = struct{}{}
		if u != nil {
			if key == u.disc {
				tag = val
			} else if bit, ok := u.bits[key]; ok {
				present |= 1 << bit
			}
		}
		types, ok := fs.byName[key]
		if !ok {
			for _, name := range fs.names {
				if strings.EqualFold(name, key) {
					return fmt.Errorf("acp: key %s at %s must be spelled %q", quoteKey(key), path, name)
				}
			}
			return nil // unknown keys are allowed
		}
		for _, ft := range types {
			if err := checkStrict(val, ft, path+"."+key, variants); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && u != nil {
		if err := u.check(tag, present); err != nil {
			return fmt.Errorf("%w at %s", err, path)
		}
	}
	return err
}

// fieldSet is the set of JSON member names a struct type decodes, with the
// Go types a member's value is decoded into.
type fieldSet struct {
	byName map[string][]reflect.Type
	names  []string
	union  *unionInfo // closed unions: their variants
}

func (fs *fieldSet) add(name string, t reflect.Type) {
	if _, ok := fs.byName[name]; !ok {
		fs.names = append(fs.names, name)
	}
	for _, have := range fs.byName[name] {
		if have == t {
			return
		}
	}
	fs.byName[name] = append(fs.byName[name], t)
}

var fieldCache sync.Map // reflect.Type -> *fieldSet

// fieldsOf returns the member names of struct type t (see Unmarshal for the
// rules applied to types with a custom UnmarshalJSON).
func fieldsOf(t reflect.Type) *fieldSet {
	if fs, ok := fieldCache.Load(t); ok {
		return fs.(*fieldSet)
	}
	fs := &fieldSet{byName: make(map[string][]reflect.Type)}
	if hasCustomUnmarshal(t) {
		collectCustomFields(fs, t)
		if t.Implements(closedUnionType) {
			u := reflect.Zero(t).Interface().(closedUnion).acpUnion()
			u.bits = map[string]uint{}
			for _, set := range u.keys {
				for _, k := range set {
					if _, ok := u.bits[k]; !ok && len(u.bits) < 64 {
						u.bits[k] = uint(len(u.bits))
					}
				}
			}
			fs.union = u
		}
	} else {
		collectFields(fs, t, map[reflect.Type]bool{})
	}
	actual, _ := fieldCache.LoadOrStore(t, fs)
	return actual.(*fieldSet)
}

// collectFields follows encoding/json's rules: exported fields, the tag name
// or the Go field name, "-" skipped, untagged embedded structs promoted. A
// name found at a shallower depth shadows deeper ones; among equal depths all
// candidate types are kept, which is conservative for the key check.
func collectFields(fs *fieldSet, t reflect.Type, visiting map[reflect.Type]bool) {
	if visiting[t] {
		return
	}
	visiting[t] = true
	defer delete(visiting, t)
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if name == "" && ft.Kind() == reflect.Struct {
				embedded = append(embedded, ft)
				continue
			}
			if !f.IsExported() {
				continue
			}
		} else if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fs.add(name, f.Type)
	}
	for _, et := range embedded {
		inner := &fieldSet{byName: make(map[string][]reflect.Type)}
		collectFields(inner, et, visiting)
		for _, name := range inner.names {
			if _, shadowed := fs.byName[name]; shadowed {
				continue
			}
			for _, ft := range inner.byName[name] {
				fs.add(name, ft)
			}
		}
	}
}

// collectCustomFields handles a struct with its own UnmarshalJSON: explicitly
// named fields, plus the members of untagged struct-typed fields (variants).
func collectCustomFields(fs *fieldSet, t reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if tag != "-" && name != "" {
			fs.add(name, f.Type)
			continue
		}
		vt := f.Type
		if vt.Kind() == reflect.Pointer {
			vt = vt.Elem()
		}
		if vt.Kind() != reflect.Struct || vt == t {
			continue
		}
		variant := &fieldSet{byName: make(map[string][]reflect.Type)}
		if hasCustomUnmarshal(vt) {
			// One level only: a nested union contributes its named fields.
			for j := range vt.NumField() {
				vf := vt.Field(j)
				vtag := vf.Tag.Get("json")
				vname, _, _ := strings.Cut(vtag, ",")
				if vf.IsExported() && vtag != "-" && vname != "" {
					variant.add(vname, vf.Type)
				}
			}
		} else {
			collectFields(variant, vt, map[reflect.Type]bool{})
		}
		for _, name := range variant.names {
			for _, ft := range variant.byName[name] {
				fs.add(name, ft)
			}
		}
	}
}

// quoteKey quotes a (possibly huge) peer-supplied key for an error message.
func quoteKey(key string) string {
	return strconv.Quote(clip(key))
}

// clip shortens peer-supplied text for messages and logs.
func clip(s string) string {
	const limit = 64
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "..."
}

// unquote decodes a JSON string token (including its quotes).
func unquote(tok []byte, complex bool) string {
	if !complex && len(tok) >= 2 {
		return string(tok[1 : len(tok)-1])
	}
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return ""
	}
	return s
}

// forEachMember calls fn for every member of the validated JSON object obj,
// in document order. val is a sub-slice of obj.
func forEachMember(obj []byte, fn func(key string, val []byte) error) error {
	i := jsonscan.Space(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	i = jsonscan.Space(obj, i+1)
	for i < len(obj) && obj[i] == '"' {
		end, complex := jsonscan.StringEnd(obj, i)
		key := unquote(obj[i:end], complex)
		i = jsonscan.Space(obj, end)
		if i >= len(obj) || obj[i] != ':' {
			return nil
		}
		i = jsonscan.Space(obj, i+1)
		vend := jsonscan.ValueEnd(obj, i)
		if err := fn(key, obj[i:vend]); err != nil {
			return err
		}
		i = jsonscan.Space(obj, vend)
		if i < len(obj) && obj[i] == ',' {
			i = jsonscan.Space(obj, i+1)
		}
	}
	return nil
}

// forEachElement calls fn for every element of the validated JSON array arr.
func forEachElement(arr []byte, fn func(val []byte) error) error {
	i := jsonscan.Space(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return nil
	}
	i = jsonscan.Space(arr, i+1)
	for i < len(arr) && arr[i] != ']' {
		vend := jsonscan.ValueEnd(arr, i)
		if err := fn(arr[i:vend]); err != nil {
			return err
		}
		i = jsonscan.Space(arr, vend)
		if i < len(arr) && arr[i] == ',' {
			i = jsonscan.Space(arr, i+1)
		}
	}
	return nil
}
