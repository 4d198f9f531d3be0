package acp

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

type strictInner struct {
	Path  string `json:"path"`
	Lines *int   `json:"lines,omitempty"`
}

type StrictEmbedded struct {
	Cwd string `json:"cwd"`
}

type strictParams struct {
	StrictEmbedded
	SessionID string                  `json:"sessionId"`
	Inner     strictInner             `json:"inner"`
	Ptr       *strictInner            `json:"ptr"`
	List      []strictInner           `json:"list"`
	Array     [2]strictInner          `json:"array"`
	ByName    map[string]*strictInner `json:"byName"`
	Nested    [][]strictInner         `json:"nested"`
	Any       any                     `json:"any"`
	Raw       json.RawMessage         `json:"raw"`
	Meta      map[string]any          `json:"_meta"`
	Bytes     []byte                  `json:"bytes"`
	Untagged  string
	Skipped   string      `json:"-"`
	Union     strictUnion `json:"union"`
}

// strictUnion mimics a generated union: tagged discriminator, variants held
// in untagged (or "-") pointer fields, custom UnmarshalJSON.
type strictUnion struct {
	Kind string        `json:"kind"`
	Text *strictText   `json:"-"`
	File *strictInner  `json:"-"`
	Opt  *strictCustom // nested custom type: its named fields count
}

type strictText struct {
	Text string `json:"text"`
}

func (u *strictUnion) UnmarshalJSON(data []byte) error {
	var probe struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		return err
	}
	u.Kind = probe.Kind
	switch probe.Kind {
	case "text":
		u.Text = new(strictText)
		return json.Unmarshal(data, u.Text)
	case "file":
		u.File = new(strictInner)
		return json.Unmarshal(data, u.File)
	}
	return fmt.Errorf("unknown kind %q", probe.Kind)
}

// strictCustom is a struct with a custom decoder and tagged fields, like the
// generated types that check required members.
type strictCustom struct {
	Mode  string      `json:"mode"`
	Child strictInner `json:"child"`
}

func (c *strictCustom) UnmarshalJSON(data []byte) error {
	type alias strictCustom
	return json.Unmarshal(data, (*alias)(c))
}

// strictEnum is a non-struct type with a custom decoder: not inspected.
type strictEnum string

func (e *strictEnum) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	*e = strictEnum(s)
	return nil
}

func TestUnmarshalRejectsCaseVariants(t *testing.T) {
	cases := []struct {
		json, key, path string
	}{
		{`{"SessionId":"x"}`, "SessionId", "$"},
		{`{"sessionID":"x"}`, "sessionID", "$"},
		{`{"ſessionId":"x"}`, "ſessionId", "$"}, // Unicode fold, as encoding/json matches
		{`{"CWD":"x"}`, "CWD", "$"},             // promoted from an embedded struct
		{`{"untagged":"x"}`, "untagged", "$"},
		{`{"inner":{"Path":"x"}}`, "Path", "$.inner"},
		{`{"ptr":{"PATH":"x"}}`, "PATH", "$.ptr"},
		{`{"list":[{"path":"a"},{"Lines":1}]}`, "Lines", "$.list[1]"},
		{`{"array":[{},{"pAth":"a"}]}`, "pAth", "$.array[1]"},
		{`{"byName":{"a":{"Path":"x"}}}`, "Path", "$.byName.a"},
		{`{"nested":[[],[{"Path":"x"}]]}`, "Path", "$.nested[1][0]"},
		{`{"union":{"kind":"text","Text":"x"}}`, "Text", "$.union"},
		{`{"union":{"Kind":"text"}}`, "Kind", "$.union"},
		{`{"union":{"kind":"file","Path":"x"}}`, "Path", "$.union"},
		{`{"union":{"kind":"x","Mode":"m"}}`, "Mode", "$.union"},
		{`{"union":{"kind":"x","child":{"Path":"p"}}}`, "Path", "$.union.child"},
		{"{\"sessionId\":\"x\", \"Session\\u0049d\":\"y\"}", "SessionId", "$"},
	}
	for _, tc := range cases {
		var p strictParams
		err := Unmarshal([]byte(tc.json), &p)
		if err == nil {
			t.Errorf("Unmarshal(%s) accepted a case variant", tc.json)
			continue
		}
		if !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.key)) || !strings.Contains(err.Error(), tc.path+" ") {
			t.Errorf("Unmarshal(%s) error %q does not name key %q at %s", tc.json, err, tc.key, tc.path)
		}
	}
}

func TestUnmarshalAccepts(t *testing.T) {
	in := `{
		"sessionId": "s", "cwd": "/w", "Untagged": "u", "unknown": {"SessionId": 1},
		"inner": {"path": "p", "lines": 3, "Extra": true},
		"ptr": null, "list": [{"path": "a"}], "array": [{"path": "b"}, {"path": "c"}],
		"byName": {"Path": {"path": "d"}, "x": null}, "nested": [[{"path": "e"}]],
		"any": {"SessionId": "opaque"}, "raw": {"SessionId": "raw"},
		"_meta": {"Trace": 1}, "bytes": "aGk=", "Skipped": "ignored",
		"union": {"kind": "text", "text": "hello"}
	}`
	var got strictParams
	if err := Unmarshal([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	var want strictParams
	if err := json.Unmarshal([]byte(in), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Unmarshal = %+v, json.Unmarshal = %+v", got, want)
	}
	if got.Union.Text == nil || got.Union.Text.Text != "hello" || got.ByName["Path"].Path != "d" || string(got.Bytes) != "hi" {
		t.Fatalf("decoded %+v", got)
	}
	var e strictEnum
	if err := Unmarshal([]byte(`"x"`), &e); err != nil || e != "x" {
		t.Fatalf("enum: %v %q", err, e)
	}
	var a any
	if err := Unmarshal([]byte(`[1,{"A":2}]`), &a); err != nil {
		t.Fatalf("any: %v", err)
	}
	var m map[string]strictInner
	if err := Unmarshal([]byte(`{"k":{"path":"p"}}`), &m); err != nil || m["k"].Path != "p" {
		t.Fatalf("map: %v %v", err, m)
	}
	var s []strictInner
	if err := Unmarshal([]byte(`[{"path":"p"}]`), &s); err != nil || len(s) != 1 {
		t.Fatalf("slice: %v %v", err, s)
	}
}

func TestUnmarshalRejectsNonObjects(t *testing.T) {
	for _, in := range []string{``, `  `, `null`, `[]`, `"s"`, `1`, `true`} {
		var p strictParams
		if err := Unmarshal([]byte(in), &p); err == nil {
			t.Errorf("Unmarshal(%q) into a struct succeeded", in)
		}
		var m map[string]any
		if err := Unmarshal([]byte(in), &m); err == nil {
			t.Errorf("Unmarshal(%q) into a map succeeded", in)
		}
	}
	for _, in := range []string{`{"inner":[1]}`, `{"list":{}}`, `{"sessionId":1}`, `{"union":{"kind":"nope"}}`, `{"a":`} {
		var p strictParams
		if err := Unmarshal([]byte(in), &p); err == nil {
			t.Errorf("Unmarshal(%s) succeeded", in)
		}
	}
	var p strictParams
	if err := Unmarshal([]byte(`{}`), p); err == nil {
		t.Error("Unmarshal into a non-pointer succeeded")
	}
	if err := Unmarshal([]byte(`{}`), (*strictParams)(nil)); err == nil {
		t.Error("Unmarshal into a nil pointer succeeded")
	}
	// Results may be null.
	if err := unmarshalStrict([]byte(`null`), &p, true, true); err != nil {
		t.Errorf("null result: %v", err)
	}
}

func TestUnmarshalRejectsDuplicateKeys(t *testing.T) {
	for _, in := range []string{
		`{"sessionId":"a","sessionId":"b"}`,
		`{"inner":{"path":"a","path":"b"}}`,
		`{"byName":{"k":null,"k":null}}`,
		`{"unknown":1,"unknown":2}`,
	} {
		var p strictParams
		if err := Unmarshal([]byte(in), &p); err == nil || !strings.Contains(err.Error(), "duplicate") {
			t.Errorf("Unmarshal(%s) = %v, want duplicate-key error", in, err)
		}
	}
}

// FuzzUnmarshal checks that Unmarshal never panics and only ever accepts
// input that encoding/json decodes to the same value.
func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{
		`{"sessionId":"s","inner":{"path":"p"},"list":[{"path":"a"}],"union":{"kind":"file","path":"x"}}`,
		`{"SessionId":"s"}`, `{"byName":{"a":{"Path":1}}}`, `null`, `[{"path":"x"}]`,
		`{"nested":[[{"path":"\u0050"}]],"_meta":{"x":[{"y":"}"}]}}`, `{"a":"\xff"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got strictParams
		err := Unmarshal(data, &got)
		var want strictParams
		wantErr := json.Unmarshal(data, &want)
		if err == nil {
			if wantErr != nil {
				t.Fatalf("Unmarshal accepted %q, encoding/json: %v", data, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("decoded %+v, encoding/json %+v", got, want)
			}
		}
		var anyV any
		_ = Unmarshal(data, &anyV)
	})
}

// TestUnmarshalChecksTheTaggedVariant: a tagged variant's members are
// checked against that variant's fields, so variants giving one key
// different types (SessionUpdate's "content") do not reject each other,
// while a misspelt key inside the variant still fails.
func TestUnmarshalChecksTheTaggedVariant(t *testing.T) {
	for _, ok := range []string{
		`{"sessionUpdate":"tool_call_update","toolCallId":"t","content":[{"type":"content","content":{"type":"text","text":"x"}}]}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}`,
		`{"sessionUpdate":"session_message","messageId":"m","content":[{"type":"text","text":"x"}]}`,
	} {
		var u SessionUpdate
		if err := Unmarshal([]byte(ok), &u); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{
		`{"sessionUpdate":"tool_call_update","toolCallId":"t","content":[{"type":"content","content":{"type":"text","Text":"x"}}]}`,
		`{"sessionUpdate":"session_message","messageId":"m","content":[{"type":"content","content":{"type":"text","text":"x"}}]}`,
	} {
		var u SessionUpdate
		if err := Unmarshal([]byte(bad), &u); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

// TestUnstableAdditionsDecodeLeniently: an UNSTABLE property of a stable
// definition that does not decode is taken as absent, as the schema's
// x-deserialize-default-on-error says, and the rest of the message stands;
// stable properties stay strict.
func TestUnstableAdditionsDecodeLeniently(t *testing.T) {
	var r PromptResponse
	if err := Unmarshal([]byte(`{"stopReason":"end_turn","usage":{"inputTokens":5}}`), &r); err != nil || r.StopReason != StopReasonEndTurn || r.Usage != nil {
		t.Errorf("usage without its required totals: %+v, %v", r, err)
	}
	if err := Unmarshal([]byte(`{"stopReason":"end_turn","usage":{"inputTokens":5,"outputTokens":1,"totalTokens":6}}`), &r); err != nil || r.Usage == nil || r.Usage.TotalTokens != 6 {
		t.Errorf("valid usage: %+v, %v", r, err)
	}
	var c ClientCapabilities
	if err := Unmarshal([]byte(`{"plan":true,"subagents":{},"terminal":true}`), &c); err != nil || c.Plan != nil || c.Subagents == nil || !c.Terminal {
		t.Errorf("capabilities: %+v, %v", c, err)
	}
	if err := Unmarshal([]byte(`{"terminal":"yes"}`), &c); err == nil {
		t.Error("a stable property of the wrong type was accepted")
	}
}
