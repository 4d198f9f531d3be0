package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// nextResponse reads until the next response (notifications are kept in the
// backlog for later).
func (p *proc) nextResponse() wireMsg {
	p.tb.Helper()
	for i, l := range p.backlog {
		if m := decodeMsg(p.tb, l); m.isResponse() {
			p.backlog = append(p.backlog[:i:i], p.backlog[i+1:]...)
			return m
		}
	}
	for {
		l := p.read()
		if m := decodeMsg(p.tb, l); m.isResponse() {
			return m
		}
		p.backlog = append(p.backlog, l)
	}
}

// TestBadInputThroughTheBinary sends malformed and invalid messages to the
// real binary (with a 4 KiB line cap from the user config) and checks each
// gets the right JSON-RPC error while the connection keeps serving.
func TestBadInputThroughTheBinary(t *testing.T) {
	t.Parallel()
	schema := loadSchema(t, true)
	iso := newIsolation(t)
	iso.writeUserConfig(t, "[protocol]\nmax_line_bytes = 4096\n")
	project := t.TempDir()
	file := writeFile(t, filepath.Join(project, "file.txt"), "not a directory\n")
	p := startProc(t, iso.Env())
	p.initialize()

	// alive proves the connection still serves a valid request, and that no
	// stray response came before its own.
	aliveSeq := 0
	alive := func(t *testing.T) {
		t.Helper()
		aliveSeq++
		id := fmt.Sprintf(`"alive-%d"`, aliveSeq)
		p.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"session/list","params":{}}`)
		m := p.nextResponse()
		if string(m.ID) != id || m.Error != nil {
			t.Fatalf("after the bad input, got %s, want the result of request %s", m.raw, id)
		}
	}
	huge := `{"jsonrpc":"2.0","id":99,"method":"session/list","params":{"_meta":{"pad":"` + strings.Repeat("x", 5000) + `"}}}`
	cases := []struct {
		name   string
		line   string
		wantID string // raw JSON id of the response; "" = no response at all
		code   int    // 0 = a result
		msg    string // the error message contains this
	}{
		{"malformed JSON", `{"jsonrpc":"2.0","id":1,"method":`, "null", -32700, ""},
		{"garbage", `hello acpd`, "null", -32700, ""},
		{"line over the cap", huge, "null", -32600, "too large"},
		{"JSON array", `[{"jsonrpc":"2.0","id":3,"method":"session/list","params":{}}]`, "null", -32600, ""},
		{"JSON scalar", `42`, "null", -32600, ""},
		{"missing jsonrpc", `{"id":4,"method":"session/list","params":{}}`, "4", -32600, ""},
		{"unknown method", `{"jsonrpc":"2.0","id":5,"method":"frobnicate/now","params":{}}`, "5", -32601, "frobnicate/now"},
		{"wrong param type", `{"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":5,"mcpServers":[]}}`, "6", -32602, ""},
		{"params not an object", `{"jsonrpc":"2.0","id":7,"method":"session/new","params":"x"}`, "7", -32600, ""},
		{"unknown field (ignored: ACP is extensible)", `{"jsonrpc":"2.0","id":8,"method":"session/list","params":{"futureField":"/"}}`, "8", 0, ""},
		{"relative cwd", `{"jsonrpc":"2.0","id":9,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}`, "9", -32602, "absolute"},
		{"missing cwd", `{"jsonrpc":"2.0","id":20,"method":"session/new","params":{"cwd":"` + project + `/missing","mcpServers":[]}}`, "20", -32602, "not an existing directory"},
		{"cwd is a file", `{"jsonrpc":"2.0","id":21,"method":"session/new","params":{"cwd":"` + file + `","mcpServers":[]}}`, "21", -32602, "is not a directory"},
		{"prompt for an unknown session", `{"jsonrpc":"2.0","id":10,"method":"session/prompt","params":{"sessionId":"s_nope","prompt":[{"type":"text","text":"hi"}]}}`, "10", -32002, "s_nope"},
		{"load of an unknown session", `{"jsonrpc":"2.0","id":11,"method":"session/load","params":{"sessionId":"s_0000000000000000","cwd":"` + project + `","mcpServers":[]}}`, "11", -32002, "not found"},
		{"string id", `{"jsonrpc":"2.0","id":"req-α","method":"session/list","params":{}}`, `"req-α"`, 0, ""},
		{"negative id", `{"jsonrpc":"2.0","id":-42,"method":"session/list","params":{}}`, "-42", 0, ""},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"session/list","params":{}}`, "null", 0, ""},
		{"unknown notification", `{"jsonrpc":"2.0","method":"frobnicate/later","params":{}}`, "", 0, ""},
		{"cancel for an unknown session", `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s_nope"}}`, "", 0, ""},
		{"malformed cancel", `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":5}}`, "", 0, ""},
		{"unknown response", `{"jsonrpc":"2.0","id":12345,"result":{}}`, "", 0, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p.tb = t // subtests run one after the other on the same process
			p.send(tc.line)
			if tc.wantID == "" {
				alive(t) // the next response must be alive's own
				return
			}
			m := p.nextResponse()
			if string(m.ID) != tc.wantID {
				t.Fatalf("response id = %s, want %s: %s", m.ID, tc.wantID, m.raw)
			}
			switch {
			case tc.code == 0 && m.Error != nil:
				t.Fatalf("got error %v, want a result", m.Error)
			case tc.code == 0 && m.Result == nil:
				t.Fatalf("no result: %s", m.raw)
			case tc.code != 0 && m.Error == nil:
				t.Fatalf("got %s, want error %d", m.raw, tc.code)
			case tc.code != 0 && m.Error.Code != tc.code:
				t.Fatalf("error code = %d, want %d: %s", m.Error.Code, tc.code, m.raw)
			case tc.code != 0 && m.Error.Message == "":
				t.Fatalf("error without a message: %s", m.raw)
			case tc.msg != "" && !strings.Contains(m.Error.Message, tc.msg):
				t.Fatalf("error message %q does not mention %q", m.Error.Message, tc.msg)
			}
			alive(t)
		})
		p.tb = t
	}
	// A valid session still works after all that.
	if sid := p.newSession(project); sid == "" {
		t.Fatal("session/new returned no session id")
	}
	p.close()
	p.validate(schema, false)
}

// TestStdinClosedMidMessage closes acpd's stdin in the middle of a message:
// acpd exits 0 promptly, without a panic.
func TestStdinClosedMidMessage(t *testing.T) {
	t.Parallel()
	schema := loadSchema(t, true)
	iso := newIsolation(t)
	p := startProc(t, iso.Env())
	p.initialize()
	if _, err := p.stdin.Write([]byte(`{"jsonrpc":"2.0","id":9,"method":"session/li`)); err != nil {
		t.Fatal(err)
	}
	p.close() // fails unless acpd exits 0 within the reply wait, with a clean log
	for _, l := range p.got[1:] {
		var m wireMsg
		if err := json.Unmarshal(l, &m); err != nil || (m.isResponse() && m.Error == nil) {
			t.Errorf("after the truncated message acpd sent %s", l)
		}
	}
	p.validate(schema, false)
}
