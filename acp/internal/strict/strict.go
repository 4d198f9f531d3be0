// Package strict implements the strict JSON decoding that package acp
// documents as [acpd/acp.Unmarshal] and the JSON-RPC transport
// (acpd/acp/jsonrpc) applies to results and error objects: object keys
// checked against the Go type (exact spelling, no duplicates), objects
// required where the type is a struct or a map, and, through [Unions], the
// closed unions of package acp held to their variants.
package strict

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

// Union describes the variants of a closed union: an object is one of them
// when its discriminator Disc (if any) holds one of Tags, or, without the
// discriminator, when it has every key of one of Keys (when the union has
// several untagged variants).
type Union struct {
	Name string
	Disc string
	Tags []string
	Keys [][]string

	bits map[string]uint // Keys member -> bit, built by fieldsOf
}

// Unions returns the variants of t when t is a closed union (a union whose
// schema lists its variants exhaustively), else nil. Package acp sets it
// in its init, before any decoding; it is read-only afterwards.
var Unions func(t reflect.Type) *Union

// check reports a variant the union does not define, given the raw
// discriminator value (nil when absent) and the bits of the keys present.
// Input that does not decode is left for decoding to report.
func (u *Union) check(tag []byte, present uint64) error {
	if tag != nil {
		if tag[0] != '"' {
			return nil
		}
		end, complex := jsonscan.StringEnd(tag, 0)
		t := Unquote(tag[:end], complex)
		if slices.Contains(u.Tags, t) {
			return nil
		}
		return fmt.Errorf("acp: %s: unknown %s %s", u.Name, u.Disc, QuoteKey(t))
	}
	if len(u.Keys) == 0 {
		return nil
	}
next:
	for _, set := range u.Keys {
		for _, k := range set {
			if present&(1<<u.bits[k]) == 0 {
				continue next
			}
		}
		return nil
	}
	return fmt.Errorf("acp: %s: cannot tell the variant: none of its distinguishing properties is present", u.Name)
}

// Unmarshal decodes data into v like json.Unmarshal after the strict checks
// of [acpd/acp.Unmarshal]. allowNull accepts JSON null (or empty input) for an
// object-typed target, leaving it unchanged; the transport's Call uses it
// for results, where peers commonly answer "null" for empty results.
// variants rejects unknown variants of closed unions (see [Unions]).
func Unmarshal(data []byte, v any, allowNull, variants bool) error {
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
		return Members(data, func(key string, val []byte) error {
			if _, dup := seen[key]; dup {
				return fmt.Errorf("acp: duplicate key %s at %s", QuoteKey(key), path)
			}
			seen[key] = struct{}{}
			return checkStrict(val, elem, path+"."+Clip(key), variants)
		})
	case reflect.Slice, reflect.Array:
		if c != '[' {
			return nil // includes []byte as a base64 string
		}
		elem := t.Elem()
		i := 0
		return elements(data, func(val []byte) error {
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
	if fs.byTag != nil {
		// A tagged variant's members are checked against its own fields
		// (and the union's common ones) only: variants may give one key
		// different types (SessionUpdate's "content" is a ContentBlock in
		// a chunk, a list of ToolCallContent in a tool call update and of
		// ContentBlock in a session message).
		_ = Members(data, func(key string, val []byte) error {
			if key == fs.disc && len(val) > 0 && val[0] == '"' {
				end, complex := jsonscan.StringEnd(val, 0)
				if v := fs.byTag[Unquote(val[:end], complex)]; v != nil {
					fs = v
				}
				return errStop
			}
			return nil
		})
	}
	err := Members(data, func(key string, val []byte) error {
		if _, dup := seen[key]; dup {
			return fmt.Errorf("acp: duplicate key %s at %s", QuoteKey(key), path)
		}
		seen[key] = struct{}{}
		if u != nil {
			if key == u.Disc {
				tag = val
			} else if bit, ok := u.bits[key]; ok {
				present |= 1 << bit
			}
		}
		types, ok := fs.byName[key]
		if !ok {
			for _, name := range fs.names {
				if strings.EqualFold(name, key) {
					return fmt.Errorf("acp: key %s at %s must be spelled %q", QuoteKey(key), path, name)
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

func unionOf(t reflect.Type) *Union {
	if Unions == nil {
		return nil
	}
	return Unions(t)
}

// fieldSet is the set of JSON member names a struct type decodes, with the
// Go types a member's value is decoded into.
type fieldSet struct {
	byName map[string][]reflect.Type
	names  []string
	union  *Union // closed unions: their variants
	// byTag holds, for a closed union with a discriminator disc, the
	// members of each tagged variant with the union's common ones.
	disc  string
	byTag map[string]*fieldSet
}

// errStop ends a Members walk early.
var errStop = errors.New("stop")

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
		common, variants := collectCustomFields(fs, t)
		if u := unionOf(t); u != nil {
			if u.Disc != "" && len(u.Tags) == len(variants) {
				fs.disc, fs.byTag = u.Disc, map[string]*fieldSet{}
				for i, v := range variants {
					one := &fieldSet{byName: make(map[string][]reflect.Type), union: u}
					for _, set := range []*fieldSet{common, v} {
						for _, name := range set.names {
							for _, ft := range set.byName[name] {
								one.add(name, ft)
							}
						}
					}
					fs.byTag[u.Tags[i]] = one
				}
			}
			u.bits = map[string]uint{}
			for _, set := range u.Keys {
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
// It also returns the named fields alone and each variant's members, in the
// order of the fields.
func collectCustomFields(fs *fieldSet, t reflect.Type) (common *fieldSet, variants []*fieldSet) {
	common = &fieldSet{byName: make(map[string][]reflect.Type)}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if tag != "-" && name != "" {
			fs.add(name, f.Type)
			common.add(name, f.Type)
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
		variants = append(variants, variant)
	}
	return common, variants
}

// QuoteKey quotes a (possibly huge) peer-supplied key for an error message.
func QuoteKey(key string) string {
	return strconv.Quote(Clip(key))
}

// Clip shortens peer-supplied text for messages and logs.
func Clip(s string) string {
	const limit = 64
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "..."
}

// Unquote decodes a JSON string token (including its quotes).
func Unquote(tok []byte, complex bool) string {
	if !complex && len(tok) >= 2 {
		return string(tok[1 : len(tok)-1])
	}
	var s string
	if err := json.Unmarshal(tok, &s); err != nil {
		return ""
	}
	return s
}

// Members calls fn for every member of the validated JSON object obj,
// in document order. val is a sub-slice of obj.
func Members(obj []byte, fn func(key string, val []byte) error) error {
	i := jsonscan.Space(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil
	}
	i = jsonscan.Space(obj, i+1)
	for i < len(obj) && obj[i] == '"' {
		end, complex := jsonscan.StringEnd(obj, i)
		key := Unquote(obj[i:end], complex)
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

// elements calls fn for every element of the validated JSON array arr.
func elements(arr []byte, fn func(val []byte) error) error {
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
