package acp

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"acpd/acp/jsonrpc"
)

// newOf maps a $defs name to a constructor of the Go value it decodes into.
var newOf = map[string]func() any{
	"AuthMethod":                    func() any { return new(AuthMethod) },
	"AvailableCommandInput":         func() any { return new(AvailableCommandInput) },
	"AvailableCommandsUpdate":       func() any { return new(AvailableCommandsUpdate) },
	"CancelRequestNotification":     func() any { return new(CancelRequestNotification) },
	"ContentBlock":                  func() any { return new(ContentBlock) },
	"CreateElicitationRequest":      func() any { return new(CreateElicitationRequest) },
	"CreateElicitationResponse":     func() any { return new(CreateElicitationResponse) },
	"CreateTerminalRequest":         func() any { return new(CreateTerminalRequest) },
	"ElicitationContentValue":       func() any { return new(ElicitationContentValue) },
	"ElicitationFormMode":           func() any { return new(ElicitationFormMode) },
	"ElicitationPropertySchema":     func() any { return new(ElicitationPropertySchema) },
	"ElicitationUrlMode":            func() any { return new(ElicitationURLMode) },
	"EmbeddedResourceResource":      func() any { return new(EmbeddedResourceResource) },
	"Error":                         func() any { return new(jsonrpc.Error) },
	"InitializeRequest":             func() any { return new(InitializeRequest) },
	"InitializeResponse":            func() any { return new(InitializeResponse) },
	"McpServer":                     func() any { return new(McpServer) },
	"MultiSelectItems":              func() any { return new(MultiSelectItems) },
	"NewSessionRequest":             func() any { return new(NewSessionRequest) },
	"NewSessionResponse":            func() any { return new(NewSessionResponse) },
	"PromptRequest":                 func() any { return new(PromptRequest) },
	"PromptResponse":                func() any { return new(PromptResponse) },
	"RequestId":                     func() any { return new(RequestID) },
	"RequestPermissionOutcome":      func() any { return new(RequestPermissionOutcome) },
	"RequestPermissionRequest":      func() any { return new(RequestPermissionRequest) },
	"RequestPermissionResponse":     func() any { return new(RequestPermissionResponse) },
	"SessionConfigOption":           func() any { return new(SessionConfigOption) },
	"SessionConfigSelectOptions":    func() any { return new(SessionConfigSelectOptions) },
	"SessionNotification":           func() any { return new(SessionNotification) },
	"SessionUpdate":                 func() any { return new(SessionUpdate) },
	"SetSessionConfigOptionRequest": func() any { return new(SetSessionConfigOptionRequest) },
	"ToolCallContent":               func() any { return new(ToolCallContent) },
}

type sample struct {
	name string // test name
	def  string // $defs key
	json string
}

// samples are schema-valid JSON documents that must survive a decode/encode
// round trip unchanged (modulo member order and whitespace).
var samples = []sample{
	// SessionNotification with every sessionUpdate variant.
	{"update/user_message_chunk", "SessionNotification", `{"sessionId":"s1","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hi"},"messageId":"m1"}}`},
	{"update/agent_message_chunk", "SessionNotification", `{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello <b>&</b>"}},"_meta":{"k":[1,"x",null]}}`},
	{"update/agent_thought_chunk", "SessionNotification", `{"sessionId":"s1","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}}}`},
	{"update/tool_call", "SessionNotification", `{"sessionId":"s1","update":{"sessionUpdate":"tool_call","toolCallId":"t1","title":"Read file","kind":"read","status":"pending","locations":[{"path":"/a.go","line":3}],"rawInput":{"path":"/a.go"},"content":[{"type":"content","content":{"type":"text","text":"x"}},{"type":"diff","path":"/a.go","newText":"package a"},{"type":"terminal","terminalId":"term1"}]}}`},
	{"update/tool_call_update", "SessionNotification", `{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"t1","status":"completed","content":[],"rawOutput":"ok"}}`},
	{"update/plan", "SessionNotification", `{"sessionId":"s1","update":{"sessionUpdate":"plan","entries":[{"content":"step","priority":"high","status":"in_progress"}]}}`},
	{"update/available_commands_update", "SessionNotification", `{"sessionId":"s1","update":{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"plan","description":"make a plan","input":{"hint":"what to plan"}},{"name":"go","description":"run"}]}}`},
	{"update/current_mode_update", "SessionNotification", `{"sessionId":"s1","update":{"sessionUpdate":"current_mode_update","currentModeId":"code"}}`},
	{"update/config_option_update", "SessionNotification", `{"sessionId":"s1","update":{"sessionUpdate":"config_option_update","configOptions":[{"type":"boolean","id":"fast","name":"Fast","currentValue":true}]}}`},
	{"update/session_info_update", "SessionNotification", `{"sessionId":"s1","update":{"sessionUpdate":"session_info_update","title":"New title","updatedAt":"2025-01-01T00:00:00Z"}}`},
	{"update/usage_update", "SessionNotification", `{"sessionId":"s1","update":{"sessionUpdate":"usage_update","used":1200,"size":200000,"cost":{"amount":0.25,"currency":"USD"}}}`},
	{"update/notice", "SessionNotification", `{"sessionId":"s1","update":{"sessionUpdate":"notice","severity":"warning","title":"Careful"}}`},
	{"update/notice_open_severity", "SessionNotification", `{"sessionId":"s1","update":{"sessionUpdate":"notice","severity":"critical","title":"Unknown severity kept"}}`},
	{"update/compaction_update", "SessionNotification", `{"sessionId":"s1","update":{"sessionUpdate":"compaction_update","compactionId":"c1","status":"completed","summary":[{"type":"text","text":"sum"}]}}`},
	{"update/compaction_update_open_status", "SessionNotification", `{"sessionId":"s1","update":{"sessionUpdate":"compaction_update","compactionId":"c1","status":"paused"}}`},
	{"update/compaction_summary_chunk", "SessionNotification", `{"sessionId":"s1","update":{"sessionUpdate":"compaction_summary_chunk","compactionId":"c1","content":{"type":"text","text":"part"}}}`},
	{"session_update/bare", "SessionUpdate", `{"sessionUpdate":"plan","entries":[]}`},

	// ContentBlock variants.
	{"content/text", "ContentBlock", `{"type":"text","text":"t","annotations":{"audience":["user","assistant"],"priority":0.5,"lastModified":"2025-01-01"}}`},
	{"content/image", "ContentBlock", `{"type":"image","data":"aGk=","mimeType":"image/png","uri":"file:///x.png"}`},
	{"content/audio", "ContentBlock", `{"type":"audio","data":"aGk=","mimeType":"audio/wav"}`},
	{"content/resource_link", "ContentBlock", `{"type":"resource_link","uri":"file:///a","name":"a","mimeType":"text/plain","size":12,"title":"A","description":"d"}`},
	{"content/resource_text", "ContentBlock", `{"type":"resource","resource":{"uri":"file:///a","text":"body","mimeType":"text/plain"}}`},
	{"content/resource_blob", "ContentBlock", `{"type":"resource","resource":{"uri":"file:///b","blob":"AAEC"}}`},
	{"embedded/text", "EmbeddedResourceResource", `{"uri":"file:///a","text":"body"}`},
	{"embedded/blob", "EmbeddedResourceResource", `{"uri":"file:///a","blob":"AAEC","mimeType":"application/octet-stream"}`},
	{"prompt_request", "PromptRequest", `{"sessionId":"s1","prompt":[{"type":"text","text":"fix it"},{"type":"resource_link","uri":"file:///a","name":"a"}]}`},
	{"prompt_response", "PromptResponse", `{"stopReason":"end_turn"}`},

	// ToolCallContent variants.
	{"tool_content/content", "ToolCallContent", `{"type":"content","content":{"type":"text","text":"x"}}`},
	{"tool_content/diff", "ToolCallContent", `{"type":"diff","path":"/a","oldText":"a","newText":"b"}`},
	{"tool_content/terminal", "ToolCallContent", `{"type":"terminal","terminalId":"t"}`},

	// Permission requests and outcomes.
	{"permission_request", "RequestPermissionRequest", `{"sessionId":"s1","toolCall":{"toolCallId":"t1","title":"rm -rf"},"options":[{"optionId":"a","name":"Allow","kind":"allow_once"},{"optionId":"r","name":"Reject","kind":"reject_always"}]}`},
	{"outcome/cancelled", "RequestPermissionOutcome", `{"outcome":"cancelled"}`},
	{"outcome/selected", "RequestPermissionOutcome", `{"outcome":"selected","optionId":"a"}`},
	{"permission_response", "RequestPermissionResponse", `{"outcome":{"outcome":"selected","optionId":"a"}}`},

	// MCP servers: stdio has no type.
	{"mcp/stdio", "McpServer", `{"name":"fs","command":"/bin/fs","args":["--root","/"],"env":[{"name":"K","value":"V"}]}`},
	{"mcp/http", "McpServer", `{"type":"http","name":"web","url":"https://x","headers":[{"name":"Authorization","value":"t"}]}`},
	{"mcp/sse", "McpServer", `{"type":"sse","name":"ev","url":"https://y","headers":[]}`},
	{"new_session", "NewSessionRequest", `{"cwd":"/w","mcpServers":[{"name":"fs","command":"fs","args":[],"env":[]},{"type":"http","name":"h","url":"u","headers":[]}]}`},
	{"new_session_response", "NewSessionResponse", `{"sessionId":"s1","modes":{"currentModeId":"code","availableModes":[{"id":"code","name":"Code"}]},"configOptions":[{"type":"select","id":"model","name":"Model","category":"model","currentValue":"m1","options":[{"value":"m1","name":"M1"}]}]}`},

	// Auth methods: agent has no type.
	{"auth/agent", "AuthMethod", `{"id":"login","name":"Log in","description":"browser"}`},
	{"auth/terminal", "AuthMethod", `{"type":"terminal","id":"tui","name":"TUI","args":["--login"],"env":{"A":"1"}}`},
	{"initialize_request", "InitializeRequest", `{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":true},"clientInfo":{"name":"zed","version":"1.0"}}`},
	{"initialize_response", "InitializeResponse", `{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"embeddedContext":true},"mcpCapabilities":{"http":true}},"authMethods":[{"id":"a","name":"A"},{"type":"terminal","id":"t","name":"T"}],"agentInfo":{"name":"acpd","version":"0.1"}}`},

	// Request ids.
	{"request_id/null", "RequestId", `null`},
	{"request_id/number", "RequestId", `42`},
	{"request_id/negative", "RequestId", `-7`},
	{"request_id/string", "RequestId", `"req-1"`},
	{"cancel_request/number", "CancelRequestNotification", `{"requestId":3}`},
	{"cancel_request/null", "CancelRequestNotification", `{"requestId":null}`},

	// Session config options.
	{"set_config/boolean", "SetSessionConfigOptionRequest", `{"sessionId":"s1","configId":"fast","type":"boolean","value":true}`},
	{"set_config/value_id", "SetSessionConfigOptionRequest", `{"sessionId":"s1","configId":"model","value":"m2"}`},
	{"config/boolean", "SessionConfigOption", `{"type":"boolean","id":"fast","name":"Fast","currentValue":false,"description":"d"}`},
	{"config/select_ungrouped", "SessionConfigOption", `{"type":"select","id":"mode","name":"Mode","category":"mode","currentValue":"a","options":[{"value":"a","name":"A"},{"value":"b","name":"B","description":"bee"}]}`},
	{"config/select_grouped", "SessionConfigOption", `{"type":"select","id":"model","name":"Model","category":"_custom","currentValue":"x","options":[{"group":"g1","name":"G1","options":[{"value":"x","name":"X"}]}]}`},
	{"select_options/ungrouped", "SessionConfigSelectOptions", `[{"value":"a","name":"A"}]`},
	{"select_options/empty", "SessionConfigSelectOptions", `[]`},
	{"select_options/grouped", "SessionConfigSelectOptions", `[{"group":"g","name":"G","options":[]}]`},

	// Commands.
	{"command_input", "AvailableCommandInput", `{"hint":"args"}`},
	{"commands_update", "AvailableCommandsUpdate", `{"availableCommands":[]}`},

	// Elicitation.
	{"elicit/form_session", "CreateElicitationRequest", `{"mode":"form","message":"Need input","sessionId":"s1","toolCallId":"t1","requestedSchema":{"type":"object","properties":{"name":{"type":"string","minLength":1,"format":"email"},"n":{"type":"number","minimum":0.5},"i":{"type":"integer","maximum":9},"b":{"type":"boolean","default":true},"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}},"pick":{"type":"array","items":{"anyOf":[{"const":"x","title":"X"}]}}},"required":["name"]}}`},
	{"elicit/url_request", "CreateElicitationRequest", `{"mode":"url","message":"Open","requestId":7,"elicitationId":"e1","url":"https://example.com/auth"}`},
	{"elicit/other_mode", "CreateElicitationRequest", `{"mode":"voice","message":"Say it","sessionId":"s1","pitch":3}`},
	{"form_mode/request_scope", "ElicitationFormMode", `{"requestId":"r1","requestedSchema":{}}`},
	{"url_mode/session_scope", "ElicitationUrlMode", `{"sessionId":"s1","elicitationId":"e","url":"https://x"}`},
	{"elicit_response/accept", "CreateElicitationResponse", `{"action":"accept","content":{"s":"x","i":3,"f":2.5,"b":true,"arr":["a","b"]}}`},
	{"elicit_response/decline", "CreateElicitationResponse", `{"action":"decline"}`},
	{"elicit_response/cancel", "CreateElicitationResponse", `{"action":"cancel","_meta":{"why":"closed"}}`},
	{"elicit_response/other", "CreateElicitationResponse", `{"action":"defer","until":"later"}`},
	{"property/string", "ElicitationPropertySchema", `{"type":"string","oneOf":[{"const":"a","title":"A"}]}`},
	{"property/other", "ElicitationPropertySchema", `{"type":"date","title":"When","x":{"y":[1,2]}}`},
	{"multiselect/string", "MultiSelectItems", `{"type":"string","enum":["a"]}`},
	{"multiselect/titled", "MultiSelectItems", `{"anyOf":[{"const":"a","title":"A"}]}`},
	{"multiselect/other", "MultiSelectItems", `{"type":"integer","enum":[1]}`},
	{"content_value/string", "ElicitationContentValue", `"x"`},
	{"content_value/integer", "ElicitationContentValue", `-3`},
	{"content_value/number", "ElicitationContentValue", `3.25`},
	{"content_value/boolean", "ElicitationContentValue", `false`},
	{"content_value/array", "ElicitationContentValue", `["a","b"]`},

	// Misc.
	{"error/known_code", "Error", `{"code":-32602,"message":"bad params","data":{"field":"x"}}`},
	{"error/open_code", "Error", `{"code":-1,"message":"custom"}`},
	{"create_terminal", "CreateTerminalRequest", `{"sessionId":"s1","command":"ls","args":["-l"],"env":[],"cwd":"/","outputByteLimit":1024}`},
}

// jsonEqual reports whether a and b encode the same JSON value.
func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("invalid JSON %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

// reencode decodes doc into a new value v of the type of the schema
// definition def and encodes v again.
func reencode(t *testing.T, def, doc string) (v any, out []byte) {
	t.Helper()
	v = newOf[def]()
	if err := json.Unmarshal([]byte(doc), v); err != nil {
		t.Fatalf("decode: %v", err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return v, out
}

func TestTypesRoundTrip(t *testing.T) {
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			v, out := reencode(t, s.def, s.json)
			if !jsonEqual(t, []byte(s.json), out) {
				t.Errorf("round trip changed the document\n in: %s\nout: %s", s.json, out)
			}
			again := newOf[s.def]()
			if err := json.Unmarshal(out, again); err != nil {
				t.Fatalf("decode of re-encoded JSON: %v", err)
			}
			if !reflect.DeepEqual(v, again) {
				t.Errorf("second decode differs:\n%#v\n%#v", v, again)
			}
		})
	}
}

// compileSchema compiles the installed ACP schema.
func compileSchema(t *testing.T) *jsonschema.Compiler {
	t.Helper()
	data, err := os.ReadFile(schemaFile(t))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("acp.json", doc); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestSchemaValidatesEncodedSamples validates what the Go types encode
// against the definition in the JSON Schema.
func TestSchemaValidatesEncodedSamples(t *testing.T) {
	c := compileSchema(t)
	// The validator must reject what the schema rejects.
	sch, err := c.Compile("acp.json#/$defs/ContentBlock")
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(map[string]any{"type": "text"}); err == nil {
		t.Fatal("schema accepted a text block without text")
	}
	for _, s := range samples {
		t.Run(s.name, func(t *testing.T) {
			sch, err := c.Compile("acp.json#/$defs/" + s.def)
			if err != nil {
				t.Fatal(err)
			}
			_, out := reencode(t, s.def, s.json)
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
			if err != nil {
				t.Fatal(err)
			}
			if err := sch.Validate(inst); err != nil {
				t.Errorf("%s does not validate against #/$defs/%s: %v", out, s.def, err)
			}
		})
	}
}

// TestSchemaSamplesCoverEveryUnion fails when a union definition of the
// schema has no sample of its own.
func TestSchemaSamplesCoverEveryUnion(t *testing.T) {
	data, err := os.ReadFile(schemaFile(t))
	if err != nil {
		t.Fatal(err)
	}
	var root struct {
		Defs map[string]struct {
			AnyOf, OneOf []struct {
				Const any `json:"const"`
			}
			DocsIgnore bool `json:"x-docs-ignore"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	covered := map[string]bool{}
	for _, s := range samples {
		covered[s.def] = true
	}
	for name, d := range root.Defs {
		vs := append(d.AnyOf, d.OneOf...)
		enum := len(vs) > 0
		for i, v := range vs {
			// An enum: constants, optionally followed by one open "other" branch.
			enum = enum && (v.Const != nil || i > 0 && i == len(vs)-1)
		}
		if len(vs) > 0 && !enum && !d.DocsIgnore && !covered[name] {
			t.Errorf("union %s has no round-trip sample", name)
		}
	}
}

func TestTypesUnionVariantSelection(t *testing.T) {
	var n SessionNotification
	mustDecode(t, `{"sessionId":"s","update":{"sessionUpdate":"agent_thought_chunk","content":{"type":"image","data":"d","mimeType":"image/png"}}}`, &n)
	if n.Update.AgentThoughtChunk == nil || n.Update.AgentThoughtChunk.Content.Image == nil || n.Update.AgentMessageChunk != nil {
		t.Fatalf("wrong variant: %+v", n.Update)
	}

	var m McpServer
	mustDecode(t, `{"name":"a","command":"c","args":[],"env":[]}`, &m)
	if m.Stdio == nil || m.Stdio.Command != "c" {
		t.Fatalf("stdio without type: %+v", m)
	}
	mustDecode(t, `{"type":"stdio","name":"a","command":"c","args":[],"env":[]}`, &m)
	if m.Stdio == nil {
		t.Fatalf(`"type":"stdio" must select the stdio variant: %+v`, m)
	}
	if out := mustEncode(t, m); strings.Contains(out, `"type"`) {
		t.Errorf("stdio encodes without type, got %s", out)
	}

	var a AuthMethod
	mustDecode(t, `{"id":"x","name":"X"}`, &a)
	if a.Agent == nil || a.Agent.ID != "x" {
		t.Fatalf("agent auth without type: %+v", a)
	}

	var r EmbeddedResourceResource
	mustDecode(t, `{"uri":"u","blob":"AA=="}`, &r)
	if r.Blob == nil || r.Text != nil {
		t.Fatalf("blob resource: %+v", r)
	}

	var set SetSessionConfigOptionRequest
	mustDecode(t, `{"sessionId":"s","configId":"c","type":"boolean","value":true}`, &set)
	if set.Boolean == nil || !set.Boolean.Value || set.ConfigID != "c" {
		t.Fatalf("boolean config value: %+v", set)
	}
	mustDecode(t, `{"sessionId":"s","configId":"c","value":"v"}`, &set)
	if set.ValueID == nil || set.ValueID.Value != "v" || set.Boolean != nil {
		t.Fatalf("value_id config value: %+v", set)
	}

	var opts SessionConfigSelectOptions
	mustDecode(t, `[{"group":"g","name":"G","options":[{"value":"v","name":"V"}]}]`, &opts)
	if len(opts.Grouped) != 1 || opts.Ungrouped != nil || opts.Grouped[0].Options[0].Value != "v" {
		t.Fatalf("grouped options: %+v", opts)
	}
	mustDecode(t, `[]`, &opts)
	if opts.Ungrouped == nil || opts.Grouped != nil {
		t.Fatalf("empty options decode as ungrouped: %+v", opts)
	}

	var o RequestPermissionOutcome
	mustDecode(t, `{"outcome":"cancelled"}`, &o)
	if o.Cancelled == nil || o.Selected != nil {
		t.Fatalf("cancelled outcome: %+v", o)
	}

	var cv ElicitationContentValue
	for in, want := range map[string]string{`3`: "Integer", `3.0`: "Number", `1e2`: "Number", `"3"`: "String", `true`: "Boolean", `[]`: "StringArray"} {
		mustDecode(t, in, &cv)
		rv := reflect.ValueOf(cv)
		for i := range rv.NumField() {
			if set := !rv.Field(i).IsNil(); set != (rv.Type().Field(i).Name == want) {
				t.Errorf("%s: field %s set=%v, want only %s", in, rv.Type().Field(i).Name, set, want)
			}
		}
	}
}

func TestTypesOpenEnumsAndOther(t *testing.T) {
	var n SessionNotification
	mustDecode(t, `{"sessionId":"s","update":{"sessionUpdate":"compaction_update","compactionId":"c","status":"paused"}}`, &n)
	if got := n.Update.CompactionUpdate.Status; got != CompactionStatus("paused") {
		t.Errorf("open enum value lost: %q", got)
	}
	var e jsonrpc.Error
	mustDecode(t, `{"code":-31999,"message":"x"}`, &e)
	if e.Code != -31999 {
		t.Errorf("open error code lost: %d", e.Code)
	}
	if ErrorCodeParseError != -32700 || ErrorCodeInvalidRequest != -32600 || ErrorCodeMethodNotFound != -32601 ||
		ErrorCodeInvalidParams != -32602 || ErrorCodeInternalError != -32603 || ErrorCodeRequestCancelled != -32800 ||
		ErrorCodeAuthenticationRequired != -32000 || ErrorCodeResourceNotFound != -32002 {
		t.Error("error code constants do not match JSON-RPC / ACP values")
	}

	var p ElicitationPropertySchema
	mustDecode(t, `{"type":"date", "title":"When"}`, &p)
	if p.Other == nil || p.String != nil {
		t.Fatalf("unknown property type must be kept in Other: %+v", p)
	}
	if got := mustEncode(t, p); got != `{"title":"When","type":"date"}` {
		t.Errorf("Other re-encodes as %s", got)
	}

	var req CreateElicitationRequest
	mustDecode(t, `{"mode":"voice","message":"m","requestId":1}`, &req)
	if req.Other == nil || req.Message != "m" {
		t.Fatalf("unknown mode: %+v", req)
	}
	if strings.Contains(string(req.Other), "message") {
		t.Errorf("Other must not duplicate the common fields: %s", req.Other)
	}
	req.Message = "changed"
	if got := mustEncode(t, req); !jsonEqual(t, []byte(got), []byte(`{"mode":"voice","message":"changed","requestId":1}`)) {
		t.Errorf("edited Other union encodes as %s", got)
	}
}

func TestTypesDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		def, json, want string
	}{
		{"SessionUpdate", `{"content":{"type":"text","text":"x"}}`, `missing "sessionUpdate"`},
		{"SessionUpdate", `{"sessionUpdate":7}`, `"sessionUpdate" must be a string`},
		{"SessionUpdate", `null`, `expected a JSON object`},
		{"SessionUpdate", `[]`, `expected a JSON object`},
		{"SessionUpdate", `{"sessionUpdate":"plan","entries":tru}`, `invalid character`},
		{"ElicitationPropertySchema", `{"type":"date","x":nul}`, `invalid JSON`},
		{"SessionUpdate", `{"sessionUpdate":"plan",}`, `malformed JSON object`},
		{"SessionNotification", `{"sessionId":"s","update":null}`, `missing required property "update"`},
		{"SessionNotification", `{"sessionId":"s"}`, `missing required property "update"`},
		{"ContentBlock", `{"type":"text"}`, `missing required property "text"`},
		{"PromptRequest", `{"sessionId":"s","prompt":[null]}`, `expected a JSON object`},
		{"PromptRequest", `{"sessionId":"s","prompt":null}`, `missing required property "prompt"`},
		{"McpServer", `{"name":"a","args":[],"env":[]}`, `missing required property "command"`},
		{"RequestId", `1.5`, `not a valid request id`},
		{"RequestId", `true`, `not a valid request id`},
		{"RequestId", `{}`, `not a valid request id`},
		{"RequestId", `nope`, `not a valid request id`},
		{"RequestId", `99999999999999999999`, `RequestID`},
		{"SessionConfigSelectOptions", `[{"x":1}]`, `cannot tell the variant`},
		{"SessionConfigSelectOptions", `{}`, `a JSON object is not a valid value`},
		{"ElicitationContentValue", `null`, `a JSON null is not a valid value`},
		{"RequestPermissionOutcome", `{"outcome":"selected"}`, `missing required property "optionId"`},
		{"SetSessionConfigOptionRequest", `{"sessionId":"s","configId":"c","type":"boolean"}`, `missing required property "value"`},
		{"CancelRequestNotification", `{}`, `missing required property "requestId"`},
	} {
		if err := json.Unmarshal([]byte(tc.json), newOf[tc.def]()); err == nil {
			t.Errorf("%s %s: json.Unmarshal succeeded", tc.def, tc.json)
		}
		// Called directly, UnmarshalJSON also sees input json.Unmarshal would
		// reject before calling it.
		err := newOf[tc.def]().(json.Unmarshaler).UnmarshalJSON([]byte(tc.json))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: got error %v, want one containing %q", tc.def, tc.json, err, tc.want)
		}
	}
}

// TestTypesUnknownVariants: a variant a closed union does not define is
// refused by the strict Unmarshal (what acpd handles as an agent) with the
// error decoding used to give, and kept in Other by json.Unmarshal and
// UnmarshalLenient (what acpd receives as a client), re-encoded unchanged.
func TestTypesUnknownVariants(t *testing.T) {
	for _, tc := range []struct {
		def, json, want string
	}{
		{"SessionUpdate", `{"sessionUpdate":"bogus"}`, `unknown sessionUpdate "bogus"`},
		{"ContentBlock", `{"type":"video","data":"x"}`, `unknown type "video"`},
		{"McpServer", `{"type":"ws","name":"a"}`, `unknown type "ws"`},
		{"EmbeddedResourceResource", `{"uri":"u"}`, `cannot tell the variant`},
		{"ElicitationFormMode", `{"requestedSchema":{}}`, `cannot tell the variant`},
		{"AuthMethod", `{"type":"env_var","id":"k","name":"Key","vars":[{"name":"K"}]}`, `unknown type "env_var"`},
	} {
		if err := Unmarshal([]byte(tc.json), newOf[tc.def]()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: Unmarshal error %v, want one containing %q", tc.def, tc.json, err, tc.want)
		}
		for name, decode := range map[string]func([]byte, any) error{"json.Unmarshal": json.Unmarshal, "UnmarshalLenient": UnmarshalLenient} {
			v := newOf[tc.def]()
			if err := decode([]byte(tc.json), v); err != nil {
				t.Errorf("%s %s: %s: %v", tc.def, tc.json, name, err)
				continue
			}
			// Other holds the object without the union's common members.
			if other := reflect.ValueOf(v).Elem().FieldByName("Other").Bytes(); other == nil {
				t.Errorf("%s %s: %s left Other nil", tc.def, tc.json, name)
			}
			if got := mustEncode(t, v); !jsonEqual(t, []byte(got), []byte(tc.json)) {
				t.Errorf("%s %s: re-encoded as %s", tc.def, tc.json, got)
			}
		}
	}
	// Nested: the strict walk finds the unknown variant inside a message and
	// names its path; the lenient decoding keeps the rest of the message.
	msg := `{"sessionId":"s","prompt":[{"type":"text","text":"hi"},{"type":"video","data":"x"}]}`
	var p PromptRequest
	if err := Unmarshal([]byte(msg), &p); err == nil || !strings.Contains(err.Error(), `unknown type "video" at $.prompt[1]`) {
		t.Errorf("strict PromptRequest: %v", err)
	}
	if err := UnmarshalLenient([]byte(msg), &p); err != nil || len(p.Prompt) != 2 || p.Prompt[0].Text == nil || p.Prompt[1].Other == nil {
		t.Errorf("lenient PromptRequest: %v, %+v", err, p)
	}
}

func TestTypesEncodeErrorsAndDefaults(t *testing.T) {
	for name, v := range map[string]any{
		"no variant":        SessionUpdate{},
		"two variants":      ContentBlock{Text: &TextContent{Text: "a"}, Image: &ImageContent{}},
		"nested no variant": SessionNotification{SessionID: "s"},
		"no options":        SessionConfigSelectOptions{},
		"non-object other":  ElicitationPropertySchema{Other: json.RawMessage(`[1]`)},
	} {
		if _, err := json.Marshal(v); err == nil {
			t.Errorf("%s: encoding must fail", name)
		}
	}
	// Required arrays encode as [] even when nil.
	for v, want := range map[any]string{
		&PromptRequest{SessionID: "s"}:     `{"prompt":[],"sessionId":"s"}`,
		&McpServerStdio{Name: "n"}:         `{"args":[],"command":"","env":[],"name":"n"}`,
		&Plan{}:                            `{"entries":[]}`,
		&McpServer{HTTP: &McpServerHTTP{}}: `{"type":"http","headers":[],"name":"","url":""}`,
	} {
		if got := mustEncode(t, v); got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	}
	// Required arrays marked default-on-null decode null as empty.
	var r NewSessionRequest
	mustDecode(t, `{"cwd":"/","mcpServers":null}`, &r)
	if r.McpServers == nil || len(r.McpServers) != 0 {
		t.Errorf("null mcpServers must decode as empty, got %#v", r.McpServers)
	}
	// Optional nullable arrays keep [] distinct from absent.
	var u ToolCallUpdate
	mustDecode(t, `{"toolCallId":"t","content":[]}`, &u)
	if got := mustEncode(t, u); got != `{"content":[],"toolCallId":"t"}` {
		t.Errorf("empty content must survive: %s", got)
	}
	var absent ToolCallUpdate
	mustDecode(t, `{"toolCallId":"t"}`, &absent)
	if got := mustEncode(t, absent); got != `{"toolCallId":"t"}` {
		t.Errorf("absent content must stay absent: %s", got)
	}
}

func TestTypesRequestID(t *testing.T) {
	var zero RequestID
	if !zero.IsNull() || zero.String() != "null" {
		t.Errorf("zero id: null=%v %s", zero.IsNull(), zero)
	}
	n, s := NewNumberID(1), NewStringID("1")
	if n == s || n.IsNull() || s.IsNull() {
		t.Error("number 1 and string \"1\" must differ and be non-null")
	}
	if v, ok := n.Number(); !ok || v != 1 {
		t.Errorf("Number() = %d, %v", v, ok)
	}
	if _, ok := n.Str(); ok {
		t.Error("a number id has no string")
	}
	if v, ok := s.Str(); !ok || v != "1" {
		t.Errorf("Str() = %q, %v", v, ok)
	}
	if n.String() != "1" || s.String() != `"1"` {
		t.Errorf("String(): %s %s", n, s)
	}
	pending := map[RequestID]int{n: 1, s: 2, zero: 3}
	for _, in := range []string{`1`, `"1"`, `null`} {
		var id RequestID
		mustDecode(t, in, &id)
		if mustEncode(t, id) != in {
			t.Errorf("%s re-encodes as %s", in, mustEncode(t, id))
		}
		if _, ok := pending[id]; !ok {
			t.Errorf("decoded id %s does not find its map entry", id)
		}
	}
}

func TestTypesMethodNames(t *testing.T) {
	for got, want := range map[string]string{
		AgentMethodInitialize:                "initialize",
		AgentMethodAuthenticate:              "authenticate",
		AgentMethodSessionNew:                "session/new",
		AgentMethodSessionLoad:               "session/load",
		AgentMethodSessionPrompt:             "session/prompt",
		AgentMethodSessionCancel:             "session/cancel",
		AgentMethodSessionSetMode:            "session/set_mode",
		AgentMethodSessionSetConfigOption:    "session/set_config_option",
		AgentMethodSessionSetModel:           "session/set_model",
		ClientMethodFsReadTextFile:           "fs/read_text_file",
		ClientMethodFsWriteTextFile:          "fs/write_text_file",
		ClientMethodSessionRequestPermission: "session/request_permission",
		ClientMethodSessionUpdate:            "session/update",
		ClientMethodTerminalCreate:           "terminal/create",
		ClientMethodTerminalWaitForExit:      "terminal/wait_for_exit",
		MethodCancelRequest:                  "$/cancel_request",
	} {
		if got != want {
			t.Errorf("method constant %q, want %q", got, want)
		}
	}
	var req SetSessionModelRequest
	mustDecode(t, `{"sessionId":"s","modelId":"m","_meta":{"a":1}}`, &req)
	if req.SessionID != "s" || req.ModelID != "m" || req.Meta["a"] != 1.0 {
		t.Errorf("set_model request: %+v", req)
	}
	if err := json.Unmarshal([]byte(`{"sessionId":"s"}`), &req); err == nil {
		t.Error("set_model request without modelId must fail")
	}
}

func mustDecode(t *testing.T, in string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(in), v); err != nil {
		t.Fatalf("decode %s: %v", in, err)
	}
}

func mustEncode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %#v: %v", v, err)
	}
	return string(b)
}

// fuzzRoundTrip checks that decoding never panics and that whatever decodes
// re-encodes and decodes again to the same value.
func fuzzRoundTrip[T any](t *testing.T, data []byte) {
	// Called directly, UnmarshalJSON sees bytes json.Unmarshal would reject
	// up front; it must fail cleanly, not panic.
	var direct T
	_ = any(&direct).(json.Unmarshaler).UnmarshalJSON(data)

	var v T
	if json.Unmarshal(data, &v) != nil {
		return
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("decoded value does not encode: %v\ninput: %s", err, data)
	}
	var again T
	if err := json.Unmarshal(out, &again); err != nil {
		t.Fatalf("re-encoded value does not decode: %v\nencoded: %s", err, out)
	}
	if !reflect.DeepEqual(v, again) {
		t.Fatalf("round trip changed the value\ninput:   %s\nencoded: %s\nfirst:  %#v\nsecond: %#v", data, out, v, again)
	}
}

func FuzzUnmarshalSessionUpdate(f *testing.F) {
	for _, s := range samples {
		switch s.def {
		case "SessionUpdate":
			f.Add([]byte(s.json))
		case "SessionNotification":
			var n struct{ Update json.RawMessage }
			if json.Unmarshal([]byte(s.json), &n) == nil {
				f.Add([]byte(n.Update))
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRoundTrip[SessionUpdate](t, data) })
}

func FuzzUnmarshalContentBlock(f *testing.F) {
	for _, s := range samples {
		if s.def == "ContentBlock" {
			f.Add([]byte(s.json))
		}
	}
	f.Add([]byte(`{"type":"resource","resource":{"uri":"u","text":"t","blob":"b"}}`))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzRoundTrip[ContentBlock](t, data) })
}

func BenchmarkTypesSessionNotificationRoundTrip(b *testing.B) {
	in := []byte(`{"sessionId":"s1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Hello, here is the next token of the answer."}}}`)
	b.ReportAllocs()
	for b.Loop() {
		var n SessionNotification
		if err := json.Unmarshal(in, &n); err != nil {
			b.Fatal(err)
		}
		if _, err := json.Marshal(n); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTypesPromptRequestLargeResourceDecode(b *testing.B) {
	text, _ := json.Marshal(strings.Repeat("line of source code\n", 1<<16))
	in := []byte(`{"sessionId":"s1","prompt":[{"type":"resource","resource":{"uri":"file:///big.go","text":` + string(text) + `}}]}`)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		var r PromptRequest
		if err := json.Unmarshal(in, &r); err != nil {
			b.Fatal(err)
		}
	}
}

func TestTypesObjectScanner(t *testing.T) {
	ms, err := genObject("T", []byte(` { "a\u0062" : 1 , "s":"}{\"\\","n":[{"x":"]"},[]], "d":1,"d":{"e":null} } `))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ab": `1`, "s": `"}{\"\\"`, "n": `[{"x":"]"},[]]`, "d": `{"e":null}`}
	for k, w := range want {
		if got, ok := ms.get(k); !ok || string(got) != w {
			t.Errorf("member %q = %s (%v), want %s", k, got, ok, w)
		}
	}
	for _, bad := range []string{``, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":"x}`, `{"a":1 "b":2}`, `{a:1}`, `[1]`, `"x"`} {
		if _, err := genObject("T", []byte(bad)); err == nil {
			t.Errorf("genObject(%s) succeeded", bad)
		}
	}
	// Escaped member names match like encoding/json matches them.
	var b ContentBlock
	mustDecode(t, `{"\u0074ype":"text","text":"x"}`, &b)
	if b.Text == nil || b.Text.Text != "x" {
		t.Errorf("escaped discriminator name: %+v", b)
	}
}

// FuzzUnmarshalLenient: the lenient decoding accepts everything the strict
// one does, with the same value; and what it accepts beyond that differs
// only by kept unknown variants, which re-encode unchanged.
func FuzzUnmarshalLenient(f *testing.F) {
	for _, s := range samples {
		if s.def == "PromptRequest" || s.def == "InitializeResponse" || s.def == "SessionNotification" {
			f.Add(s.def, []byte(s.json))
		}
	}
	f.Add("InitializeResponse", []byte(`{"protocolVersion":1,"authMethods":[{"type":"env_var","id":"k","name":"K"}]}`))
	f.Add("PromptRequest", []byte(`{"sessionId":"s","prompt":[{"type":"video"},{"type":"resource","resource":{"uri":"u"}}]}`))
	f.Add("SessionNotification", []byte(`{"sessionId":"s","update":{"sessionUpdate":"new_kind","x":[1]}}`))
	f.Fuzz(func(t *testing.T, def string, data []byte) {
		mk, ok := newOf[def]
		if !ok || (def != "PromptRequest" && def != "InitializeResponse" && def != "SessionNotification") {
			return
		}
		strict, lenient := mk(), mk()
		serr := Unmarshal(data, strict)
		lerr := UnmarshalLenient(data, lenient)
		if serr == nil {
			if lerr != nil {
				t.Fatalf("%s %q: strict accepted, lenient: %v", def, data, lerr)
			}
			if !reflect.DeepEqual(strict, lenient) {
				t.Fatalf("%s %q: strict %+v, lenient %+v", def, data, strict, lenient)
			}
		}
		if lerr != nil {
			return
		}
		enc, err := json.Marshal(lenient)
		if err != nil {
			return // e.g. a union left empty by a null member
		}
		again := mk()
		if err := UnmarshalLenient(enc, again); err != nil {
			t.Fatalf("%s: re-encoding %s of %q does not decode: %v", def, enc, data, err)
		}
		enc2, err := json.Marshal(again)
		var a, b any
		if err != nil || json.Unmarshal(enc, &a) != nil || json.Unmarshal(enc2, &b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("%s: re-encoding is not stable: %s then %s (%v)", def, enc, enc2, err)
		}
	})
}
