package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/format"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// optionalMethods are the methods a peer need not handle, with the
// capability that announces them. Every other method of the schema is
// required: a schema upgrade that adds one makes the generated Agent or
// Client interface grow, which breaks the build of an implementation that
// does not handle it (the compile-time assertions in acpd's agent and client
// packages) until it does, or until the method is added here.
var optionalMethods = map[string]string{
	"session/load":           "AgentCapabilities.loadSession",
	"session/list":           "SessionCapabilities.list",
	"session/resume":         "SessionCapabilities.resume",
	"session/close":          "SessionCapabilities.close",
	"session/delete":         "SessionCapabilities.delete",
	"logout":                 "AgentAuthCapabilities.logout",
	"fs/read_text_file":      "FileSystemCapabilities.readTextFile",
	"fs/write_text_file":     "FileSystemCapabilities.writeTextFile",
	"terminal/create":        "ClientCapabilities.terminal",
	"terminal/output":        "ClientCapabilities.terminal",
	"terminal/wait_for_exit": "ClientCapabilities.terminal",
	"terminal/kill":          "ClientCapabilities.terminal",
	"terminal/release":       "ClientCapabilities.terminal",
	"elicitation/create":     "ClientCapabilities.elicitation",
	"elicitation/complete":   "ClientCapabilities.elicitation",
}

// legacyMethods are methods the pinned schema no longer defines that acpd
// still serves and calls; their types are written by hand (acp/methods.go).
// They are always optional.
var legacyMethods = []method{{
	Name: "session/set_model", Side: "agent", Const: "AgentMethodSessionSetModel", Go: "SetSessionModel",
	Req: "SetSessionModelRequest", Resp: "SetSessionModelResponse",
	Doc: "Legacy, unstable: switch the session to another model (replaced by session\nconfiguration options in the stable schema).",
}}

// goMethodNames overrides the Go method name derived from the params type.
var goMethodNames = map[string]string{"SessionNotification": "SessionUpdate"}

// method is one ACP method as seen by the dispatchers and callers.
type method struct {
	Name       string // the JSON-RPC method
	Side       string // "agent" or "client": who handles it
	Const      string // its method-name constant
	Go         string // Go method name
	Req        string // Go type of params
	Resp       string // Go type of the result; "" for a notification
	Doc        string // description of the params definition
	Capability string // non-empty: optional, announced by this capability
	Legacy     bool
}

func (m method) optional() bool { return m.Capability != "" || m.Legacy }

// collectMethods gathers the agent and client methods of the schema (the
// protocol-level $/cancel_request is the connection's), sorted by Go name.
func collectMethods(defs map[string]*schema, optional map[string]string, legacy []method) ([]method, error) {
	byName := map[string]*method{}
	var errs []error
	for _, n := range slices.Sorted(maps.Keys(defs)) {
		s := defs[n]
		if s.XMethod == "" || s.XSide == "protocol" {
			continue
		}
		prefix := map[string]string{"agent": "AgentMethod", "client": "ClientMethod"}[s.XSide]
		if prefix == "" {
			errs = append(errs, fmt.Errorf("%s: unknown x-side %q", n, s.XSide))
			continue
		}
		m := byName[s.XMethod]
		if m == nil {
			m = &method{Name: s.XMethod, Side: s.XSide, Const: prefix + goName(s.XMethod), Capability: optional[s.XMethod]}
			byName[s.XMethod] = m
		}
		if m.Side != s.XSide {
			errs = append(errs, fmt.Errorf("method %s: definitions disagree on x-side", s.XMethod))
		}
		gn := goName(n)
		switch {
		case strings.HasSuffix(n, "Response"):
			if m.Resp != "" {
				errs = append(errs, fmt.Errorf("method %s: two result definitions", s.XMethod))
			}
			m.Resp = gn
		default:
			if m.Req != "" {
				errs = append(errs, fmt.Errorf("method %s: two params definitions", s.XMethod))
			}
			m.Req, m.Doc = gn, s.Description
			m.Go = goMethodNames[n]
			if m.Go == "" {
				m.Go = strings.TrimSuffix(strings.TrimSuffix(gn, "Request"), "Notification")
			}
		}
	}
	for name, capability := range optional {
		if byName[name] == nil {
			errs = append(errs, fmt.Errorf("optional method %s is not in the schema", name))
		} else if err := checkCapability(defs, capability); err != nil {
			errs = append(errs, fmt.Errorf("optional method %s: %w", name, err))
		}
	}
	for _, l := range legacy {
		if byName[l.Name] != nil {
			errs = append(errs, fmt.Errorf("legacy method %s is now in the schema: drop it from legacyMethods and acp/methods.go", l.Name))
			continue
		}
		l.Legacy = true
		byName[l.Name] = &l
	}
	var out []method
	seen := map[string]string{}
	for _, m := range byName {
		if m.Req == "" {
			errs = append(errs, fmt.Errorf("method %s has no params definition", m.Name))
			continue
		}
		key := m.Side + "." + m.Go
		if other, dup := seen[key]; dup {
			errs = append(errs, fmt.Errorf("methods %s and %s map to the same Go name %s", other, m.Name, m.Go))
		}
		seen[key] = m.Name
		out = append(out, *m)
	}
	slices.SortFunc(out, func(a, b method) int { return strings.Compare(a.Side+"."+a.Go, b.Side+"."+b.Go) })
	return out, errors.Join(errs...)
}

// checkCapability resolves "Def.prop" in the schema.
func checkCapability(defs map[string]*schema, path string) error {
	def, prop, ok := strings.Cut(path, ".")
	if !ok || defs[def] == nil || defs[def].Properties[prop] == nil {
		return fmt.Errorf("capability %s is not in the schema", path)
	}
	return nil
}

// GenerateMethods returns the gofmt'd Go source of the typed ACP surface:
// the Agent and Client interfaces, one interface per optional method, their
// dispatchers and the typed outbound callers.
func GenerateMethods(data []byte, source string) ([]byte, error) {
	return generateMethods(data, source, optionalMethods, legacyMethods)
}

func generateMethods(data []byte, source string, optional map[string]string, legacy []method) ([]byte, error) {
	var root struct {
		Defs map[string]*schema `json:"$defs"`
	}
	if err := json.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("parsing schema: %w", err)
	}
	ms, err := collectMethods(root.Defs, optional, legacy)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by schemagen from %s; DO NOT EDIT.\n\npackage %s\n\nimport (\n\"context\"\n\"encoding/json\"\n\n\"acpd/acp/jsonrpc\"\n)\n\n", source, pkgName)
	for _, side := range []string{"agent", "client"} {
		var own []method
		for _, m := range ms {
			if m.Side == side {
				own = append(own, m)
			}
		}
		writeSide(&b, side, own)
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("formatting generated methods: %w", err)
	}
	return src, nil
}

func writeDoc(b *bytes.Buffer, indent, text string) {
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		b.WriteString(strings.TrimRight(indent+"// "+l, " ") + "\n")
	}
}

func (m method) signature() string {
	if m.Resp == "" {
		return fmt.Sprintf("%s(ctx context.Context, params *%s) error", m.Go, m.Req)
	}
	return fmt.Sprintf("%s(ctx context.Context, params *%s) (*%s, error)", m.Go, m.Req, m.Resp)
}

func (m method) kind() string {
	if m.Resp == "" {
		return "notification"
	}
	return "request"
}

func writeSide(b *bytes.Buffer, side string, ms []method) {
	Side := map[string]string{"agent": "Agent", "client": "Client"}[side]

	// The interface of required methods.
	fmt.Fprintf(b, "// %s is what every ACP %s handles: the methods of the schema that no\n", Side, side)
	fmt.Fprintf(b, "// capability makes optional. The optional ones are the %s* interfaces\n", Side)
	fmt.Fprintf(b, "// below, found by %sHandler through type assertion.\n", Side)
	fmt.Fprintf(b, "//\n// A schema upgrade that adds a required method adds it here, so that\n")
	fmt.Fprintf(b, "// implementations asserting var _ acp.%s = ... stop compiling until they handle it.\n", Side)
	fmt.Fprintf(b, "type %s interface {\n", Side)
	for _, m := range ms {
		if m.optional() {
			continue
		}
		fmt.Fprintf(b, "// %s handles the %q %s.\n//\n", m.Go, m.Name, m.kind())
		writeDoc(b, "", m.Doc)
		b.WriteString(m.signature() + "\n")
	}
	b.WriteString("}\n\n")

	// One interface per optional method.
	for _, m := range ms {
		if !m.optional() {
			continue
		}
		fmt.Fprintf(b, "// %s%s is implemented by %ss that handle the optional %q %s", Side, m.Go, side, m.Name, m.kind())
		if m.Legacy {
			b.WriteString(".\n")
		} else {
			fmt.Fprintf(b, "\n// (announced by %s).\n", m.Capability)
		}
		b.WriteString("//\n")
		writeDoc(b, "", m.Doc)
		fmt.Fprintf(b, "type %s%s interface {\n%s\n}\n\n", Side, m.Go, m.signature())
	}

	// The dispatcher.
	fmt.Fprintf(b, "// %sHandler returns the jsonrpc.Handler serving the ACP methods %ss handle with h.\n", Side, side)
	if side == "client" {
		fmt.Fprintf(b, "// Params are decoded with UnmarshalLenient (absent or null params as {}): a\n// variant of a union this schema does not define is kept in its Other field.\n// Params that do not decode are answered jsonrpc.ErrInvalidParams. The optional\n// methods h does not implement (see the %s* interfaces) and unknown methods\n// are answered jsonrpc.ErrMethodNotFound (-32601); for notifications the connection\n// then only logs at debug level.\n", Side)
	} else {
		fmt.Fprintf(b, "// Params are decoded with Unmarshal (absent or null params as {}); params that\n")
		fmt.Fprintf(b, "// do not decode are answered jsonrpc.ErrInvalidParams. The optional methods h does not\n")
		fmt.Fprintf(b, "// implement (see the %s* interfaces) and unknown methods are answered\n", Side)
		fmt.Fprintf(b, "// jsonrpc.ErrMethodNotFound (-32601).\n")
	}
	fmt.Fprintf(b, "func %sHandler(h %s) jsonrpc.Handler {\n", Side, Side)
	for _, m := range ms {
		if m.optional() {
			fmt.Fprintf(b, "opt%s, _ := h.(%s%s)\n", m.Go, Side, m.Go)
		}
	}
	// What an agent handles is validated strictly; a client only consumes
	// what it receives, so unknown union variants are kept, not refused.
	lenient := strconv.FormatBool(side == "client")
	b.WriteString("return func(ctx context.Context, method string, params json.RawMessage) (any, error) {\nswitch method {\n")
	for _, m := range ms {
		fmt.Fprintf(b, "case %s:\n", m.Const)
		recv := "h"
		if m.optional() {
			recv = "opt" + m.Go
			fmt.Fprintf(b, "if %s == nil {\nbreak\n}\n", recv)
		}
		if m.Resp == "" {
			fmt.Fprintf(b, "return nil, serveNotification(ctx, params, %s, %s.%s)\n", lenient, recv, m.Go)
		} else {
			fmt.Fprintf(b, "return serveRequest(ctx, params, %s, %s.%s)\n", lenient, recv, m.Go)
		}
	}
	b.WriteString("}\nreturn nil, jsonrpc.ErrMethodNotFound(method)\n}\n}\n\n")

	// The typed callers of the peer's methods live on <Side>Conn, the
	// connection to that side.
	for _, m := range ms {
		if m.Resp == "" {
			fmt.Fprintf(b, "// %s sends the %q notification to the %s.\n", m.Go, m.Name, side)
			fmt.Fprintf(b, "func (c %sConn) %s(ctx context.Context, params *%s) error {\nreturn c.conn.Notify(ctx, %s, params)\n}\n\n", Side, m.Go, m.Req, m.Const)
			continue
		}
		fmt.Fprintf(b, "// %s calls the %s's %q method.\n", m.Go, side, m.Name)
		fmt.Fprintf(b, "func (c %sConn) %s(ctx context.Context, params *%s) (*%s, error) {\n", Side, m.Go, m.Req, m.Resp)
		fmt.Fprintf(b, "var result %s\nif err := c.call(ctx, %s, params, &result); err != nil {\nreturn nil, err\n}\nreturn &result, nil\n}\n\n", m.Resp, m.Const)
	}
}
