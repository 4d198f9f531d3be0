package acp

import (
	"reflect"

	"acpd/acp/internal/strict"
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
}

func init() { strict.Unions = closedUnionOf }

// closedUnionOf describes t's variants for package strict when t is one of
// this package's closed unions.
func closedUnionOf(t reflect.Type) *strict.Union {
	if !t.Implements(closedUnionType) {
		return nil
	}
	u := reflect.Zero(t).Interface().(closedUnion).acpUnion()
	return &strict.Union{Name: u.name, Disc: u.disc, Tags: u.tags, Keys: u.keys}
}

// unmarshalStrict is strict.Unmarshal (see there for allowNull and
// variants).
func unmarshalStrict(data []byte, v any, allowNull, variants bool) error {
	return strict.Unmarshal(data, v, allowNull, variants)
}
