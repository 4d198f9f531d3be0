// Package mcptools offers a session's MCP servers to the model and the
// user: their tools as model tools (with the resource tools
// mcp_list_resources and mcp_read_resource), and their prompts as slash
// commands. It converts ACP's MCP server descriptions into mcpclient's
// (config converts the configuration's); the connections themselves are
// mcpclient's.
package mcptools

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"acpd/acp"
	"acpd/mcpclient"
	"acpd/model"
	"acpd/permissions"
	"acpd/tools"
)

// Servers converts the editor's MCP servers and follows them with the
// configuration's (config.Config.MCPClientServers), leaving out configured
// servers whose name the editor already uses.
func Servers(editor []acp.McpServer, configured []mcpclient.Server) []mcpclient.Server {
	return append(mcpServers(editor), configServers(configured, editor)...)
}

// mcpServers converts the editor's MCP server list.
func mcpServers(in []acp.McpServer) []mcpclient.Server {
	out := make([]mcpclient.Server, 0, len(in))
	for _, s := range in {
		switch {
		case s.Stdio != nil:
			env := make([]string, 0, len(s.Stdio.Env))
			for _, e := range s.Stdio.Env {
				env = append(env, e.Name+"="+e.Value)
			}
			out = append(out, mcpclient.Server{Name: s.Stdio.Name, Command: s.Stdio.Command, Args: s.Stdio.Args, Env: env, Transport: mcpclient.TransportStdio})
		case s.HTTP != nil:
			out = append(out, mcpclient.Server{Name: s.HTTP.Name, URL: s.HTTP.URL, Headers: headers(s.HTTP.Headers), Transport: mcpclient.TransportHTTP})
		case s.Sse != nil:
			out = append(out, mcpclient.Server{Name: s.Sse.Name, URL: s.Sse.URL, Headers: headers(s.Sse.Headers), Transport: mcpclient.TransportSSE})
		}
	}
	return out
}

// configServers returns the configuration's MCP servers, leaving out those
// whose name the editor already uses.
func configServers(configured []mcpclient.Server, editor []acp.McpServer) []mcpclient.Server {
	taken := map[string]bool{}
	for _, s := range mcpServers(editor) {
		taken[s.Name] = true
	}
	var out []mcpclient.Server
	for _, srv := range configured {
		if !taken[srv.Name] {
			out = append(out, srv)
		}
	}
	return out
}

func headers(hs []acp.HTTPHeader) map[string]string {
	m := make(map[string]string, len(hs))
	for _, h := range hs {
		m[h.Name] = h.Value
	}
	return m
}

// Tools returns the tools of m's ready (or restarting) servers followed by
// the resource tools, as model tools. A server's hints decide the ACP kind
// and are passed to the permission policy (plan mode allows read-only
// tools; auto-edit runs those that only read without asking, and ask mode
// too for a server with trust_annotations), but do not make a tool a
// ReadOnly tools.Tool: calls of MCP tools never run in parallel. Progress
// the server reports becomes tool_call_updates of the call's title.
// A tool whose MCP Apps visibility leaves out "model" is not offered (only
// its app may call it); a tool with an app view is offered as a plain tool,
// and with apps set (the client renders views) its call carries the view
// and its complete result (see [Apps]).
func Tools(m *mcpclient.Manager, apps *Apps) []*tools.Tool {
	var out []*tools.Tool
	for _, mt := range m.Tools() {
		if !mt.ForModel() {
			continue
		}
		kind := acp.ToolKindOther
		switch {
		case mt.Read:
			kind = acp.ToolKindRead
		case mt.ReadOnly && mt.OpenWorld:
			kind = acp.ToolKindFetch
		}
		schema := mt.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		title := fmt.Sprintf("%s: %s", mt.Server, mt.Name)
		if mt.Title != "" {
			title = fmt.Sprintf("%s (%s)", mt.Title, mt.Server)
		}
		out = append(out, &tools.Tool{
			Def:   model.ToolDef{Name: mt.QualifiedName, Description: mt.Description, InputSchema: schema},
			Kind:  kind,
			Title: func(json.RawMessage) string { return title },
			Run: func(ctx context.Context, env tools.Env, tc *tools.Call) tools.Result {
				upd := acp.ToolCallUpdate{Title: &title, Kind: &kind, RawInput: tc.Input}
				req := permissions.Call{Tool: mt.QualifiedName, Kind: acp.ToolKindOther, ReadOnly: mt.ReadOnly, HintedRead: mt.Read, TrustHints: mt.TrustHints}
				if ok, why := env.Authorize(ctx, tc, req, upd); !ok {
					return tools.Errorf("%s", why)
				}
				viewOpen := false
				if apps != nil && mt.UIResourceURI != "" {
					if v, err := m.AppView(ctx, mt.Server, mt.UIResourceURI); err == nil {
						apps.bind(tc.ID, mt.Server, mt.Name)
						env.Update(acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(tc.ID), Meta: viewMeta(mt, v, tc.Input)})
						viewOpen = true
					} else if apps.Log != nil {
						apps.Log(tc.ID, "warning", "the tool's MCP App view is unavailable: "+err.Error())
					}
				}
				res, err := m.CallTool(ctx, mt.QualifiedName, tc.Input, mcpclient.CallOptions{OnProgress: func(p mcpclient.Progress) {
					t := progressTitle(title, p)
					env.Update(acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(tc.ID), Title: &t})
				}})
				if err != nil {
					if ctx.Err() != nil {
						r := tools.Errorf("cancelled by the user")
						if viewOpen {
							r.Meta = map[string]any{mcpclient.AppsExtension: map[string]any{"toolCancelled": map[string]any{"reason": "cancelled by the user"}}}
						}
						return r
					}
					r := tools.Errorf("MCP tool %s failed: %v", title, err)
					if viewOpen {
						r.Meta = map[string]any{mcpclient.AppsExtension: map[string]any{"toolCancelled": map[string]any{"reason": r.Text}}}
					}
					return r
				}
				text := res.Text
				if strings.TrimSpace(text) == "" && len(res.Structured) > 0 {
					text = string(res.Structured)
				}
				out := tools.Result{Text: text, IsError: res.IsError, Content: editorContent(res), Images: modelImages(res)}
				if len(res.Structured) > 0 {
					out.Raw = res.Structured
				}
				if viewOpen {
					out.Meta = map[string]any{mcpclient.AppsExtension: map[string]any{"toolResult": res.Raw()}}
				}
				return out
			},
		})
	}
	return append(out, resourceTools(m)...)
}

// maxModelImages bounds the images of one result given to the model.
const maxModelImages = 4

// modelImages are the result's images meant for the model, as model parts
// (the agent turns them into a note for a model without image input).
func modelImages(res mcpclient.Result) []model.Part {
	var out []model.Part
	for _, c := range res.Content {
		if c.Type == mcpclient.ContentImage && c.ForModel() && len(c.Data) > 0 && len(out) < maxModelImages {
			out = append(out, model.Part{Type: model.PartImage, MimeType: c.MIMEType, Data: base64.StdEncoding.EncodeToString(c.Data)})
		}
	}
	return out
}

// editorContent converts the result's blocks meant for the user into ACP
// content: text, image, audio, resource_link and embedded resource blocks
// as they are (with their annotations). Nil when there is nothing but text
// for both, so the client is shown the model's text.
func editorContent(res mcpclient.Result) []acp.ToolCallContent {
	rich := false
	for _, c := range res.Content {
		rich = rich || c.Type != mcpclient.ContentText || !c.ForModel()
	}
	if !rich {
		return nil
	}
	var out []acp.ToolCallContent
	for _, c := range res.Content {
		if !c.ForUser() {
			continue
		}
		var ann *acp.Annotations
		if len(c.Audience) > 0 || c.Priority != 0 {
			ann = &acp.Annotations{}
			for _, a := range c.Audience {
				ann.Audience = append(ann.Audience, acp.Role(a))
			}
			if c.Priority != 0 {
				p := c.Priority
				ann.Priority = &p
			}
		}
		var b acp.ContentBlock
		switch c.Type {
		case mcpclient.ContentText:
			b.Text = &acp.TextContent{Text: c.Text, Annotations: ann}
		case mcpclient.ContentImage:
			b.Image = &acp.ImageContent{Data: base64.StdEncoding.EncodeToString(c.Data), MimeType: c.MIMEType, Annotations: ann}
		case mcpclient.ContentAudio:
			b.Audio = &acp.AudioContent{Data: base64.StdEncoding.EncodeToString(c.Data), MimeType: c.MIMEType, Annotations: ann}
		case mcpclient.ContentResourceLink:
			b.ResourceLink = &acp.ResourceLink{URI: c.URI, Name: c.Name, Title: optional(c.Title), Description: optional(c.Description),
				MimeType: optional(c.MIMEType), Size: c.Size, Annotations: ann}
		case mcpclient.ContentResource:
			var r acp.EmbeddedResourceResource
			if c.Data != nil {
				r.Blob = &acp.BlobResourceContents{URI: c.URI, Blob: base64.StdEncoding.EncodeToString(c.Data), MimeType: optional(c.MIMEType)}
			} else {
				r.Text = &acp.TextResourceContents{URI: c.URI, Text: c.Text, MimeType: optional(c.MIMEType)}
			}
			b.Resource = &acp.EmbeddedResource{Resource: r, Annotations: ann}
		default:
			continue
		}
		out = append(out, acp.ToolCallContent{Content: &acp.Content{Content: b}})
	}
	return out
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// progressTitle is a call's title with the progress message and percent.
func progressTitle(title string, p mcpclient.Progress) string {
	s := title
	if p.Message != "" {
		s += " — " + tools.Truncate(p.Message, 120)
	}
	if p.Total > 0 {
		s += fmt.Sprintf(" (%d%%)", int(min(100, 100*p.Progress/p.Total)))
	}
	return s
}

// Built-in MCP resource tools, offered once a session's MCP servers are
// connected. Reading an MCP resource has no side effects by the protocol's
// definition and the servers were configured by the user, so these tools
// need no approval; a deny rule naming them still refuses them.
const (
	ListResources = "mcp_list_resources"
	ReadResource  = "mcp_read_resource"
)

// listResourcesInput is mcp_list_resources's arguments.
type listResourcesInput struct {
	Server string `json:"server"`
}

// readResourceInput is mcp_read_resource's arguments.
type readResourceInput struct {
	Server string `json:"server"`
	URI    string `json:"uri"`
}

// resourceTools returns the resource tools of m.
func resourceTools(m *mcpclient.Manager) []*tools.Tool {
	list := &tools.Tool{
		Def: model.ToolDef{
			Name:        ListResources,
			Description: "List the resources (documents, data) and resource templates the connected MCP servers offer, with their URIs. Read one with mcp_read_resource.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"server":{"type":"string","description":"Only this MCP server (default: all)"}},"additionalProperties":false}`),
		},
		Kind: acp.ToolKindSearch,
		Title: func(in json.RawMessage) string {
			var v struct {
				Server string `json:"server"`
			}
			if json.Unmarshal(in, &v) == nil && v.Server != "" {
				return "List MCP resources of " + v.Server
			}
			return "List MCP resources"
		},
		Run: func(ctx context.Context, env tools.Env, tc *tools.Call) tools.Result {
			in, err := tools.DecodeInput[listResourcesInput](tc.Input)
			if err != nil {
				return tools.Errorf("invalid %s arguments: %v", ListResources, err)
			}
			if res, ok := allowResourceTool(ctx, env, tc); !ok {
				return res
			}
			rs, err := m.Resources(ctx, in.Server)
			if err != nil && len(rs) == 0 {
				if ctx.Err() != nil {
					return tools.Errorf("cancelled by the user")
				}
				return tools.Errorf("listing MCP resources failed: %v", err)
			}
			var b strings.Builder
			listed, templates := 0, 0
			for _, r := range rs {
				if mcpclient.IsAppResource(r.URI) {
					continue // an MCP App's view is for a host to render
				}
				listed++
				fmt.Fprintf(&b, "server=%s uri=%s", r.Server, r.URI)
				if r.Name != "" {
					fmt.Fprintf(&b, " name=%q", r.Name)
				}
				if r.MimeType != "" {
					b.WriteString(" type=" + r.MimeType)
				}
				if r.Description != "" {
					b.WriteString(" — " + strings.Join(strings.Fields(r.Description), " "))
				}
				b.WriteByte('\n')
			}
			// Templates: the model fills in the URI and reads it.
			tmpls, terr := m.ResourceTemplates(ctx, in.Server)
			for _, rt := range tmpls {
				if mcpclient.IsAppResource(rt.URITemplate) {
					continue
				}
				templates++
				fmt.Fprintf(&b, "server=%s template=%s", rt.Server, rt.URITemplate)
				if rt.Name != "" {
					fmt.Fprintf(&b, " name=%q", rt.Name)
				}
				if rt.Description != "" {
					b.WriteString(" — " + strings.Join(strings.Fields(rt.Description), " "))
				}
				b.WriteByte('\n')
			}
			if listed == 0 && templates == 0 {
				b.WriteString("No MCP resources.\n")
			} else if templates > 0 {
				b.WriteString("(A template is an RFC 6570 URI template: fill in its {variables} and read the URI.)\n")
			}
			if err = errors.Join(err, terr); err != nil {
				fmt.Fprintf(&b, "(some servers failed: %v)\n", err)
			}
			return tools.Result{Text: b.String()}
		},
	}
	read := &tools.Tool{
		Def: model.ToolDef{
			Name:        ReadResource,
			Description: "Read a resource of an MCP server by its URI (see mcp_list_resources). Text is returned as is, binary content as a summary.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"server":{"type":"string","description":"The MCP server's name"},"uri":{"type":"string","description":"The resource's URI"}},"required":["server","uri"],"additionalProperties":false}`),
		},
		Kind: acp.ToolKindRead,
		Title: func(in json.RawMessage) string {
			var v struct {
				URI string `json:"uri"`
			}
			if json.Unmarshal(in, &v) == nil && v.URI != "" {
				return "Read MCP resource " + v.URI
			}
			return "Read MCP resource"
		},
		Run: func(ctx context.Context, env tools.Env, tc *tools.Call) tools.Result {
			in, err := tools.DecodeInput[readResourceInput](tc.Input)
			if err != nil || in.Server == "" || in.URI == "" {
				if err == nil {
					err = fmt.Errorf("server and uri are required")
				}
				return tools.Errorf("invalid %s arguments: %v", ReadResource, err)
			}
			if mcpclient.IsAppResource(in.URI) {
				return tools.Errorf("%s is an MCP App view, rendered by the editor; it is not readable as a resource", in.URI)
			}
			if res, ok := allowResourceTool(ctx, env, tc); !ok {
				return res
			}
			text, err := m.ReadResource(ctx, in.Server, in.URI)
			if err != nil {
				if ctx.Err() != nil {
					return tools.Errorf("cancelled by the user")
				}
				return tools.Errorf("reading MCP resource %s failed: %v", in.URI, err)
			}
			// Keep it fresh: a server that offers subscriptions reports
			// changes, and the model is reminded to read it again.
			_ = m.Subscribe(ctx, in.Server, in.URI)
			return tools.Result{Text: text}
		},
	}
	return []*tools.Tool{list, read}
}

// allowResourceTool applies the user's deny rules to a resource tool call
// and otherwise lets it run without asking.
func allowResourceTool(ctx context.Context, env tools.Env, tc *tools.Call) (tools.Result, bool) {
	if ok, why := env.Authorize(ctx, tc, permissions.Call{Tool: tc.Name, Kind: acp.ToolKindOther, ReadOnly: true, NoApproval: true}, acp.ToolCallUpdate{}); !ok {
		return tools.Errorf("%s", why), false
	}
	return tools.Result{}, true
}

// MCP prompts as slash commands.
//
// Every prompt of a connected MCP server is offered as the slash command
// "/<server>:<prompt>" (mcpclient.Prompt.QualifiedName). The text after the
// command name fills the prompt's arguments:
//   - words of the form name=value, where name is one of the prompt's
//     arguments, set that argument (the value ends at the next space);
//   - all other words, joined by single spaces, set the first required
//     argument not set by name (or, when every required one is, the first
//     argument not set by name).
//
// So "/everything:args-prompt New York state=NY" sets city to "New York" and
// state to "NY". A missing required argument, or text for a prompt without
// arguments, is reported to the user and the turn ends without a model
// request. Otherwise the prompt's messages become the turn's user message
// (non-user messages are marked with their role) and the model answers it
// like any prompt.

// Commands returns the prompts of m's connected servers as slash commands.
func Commands(m *mcpclient.Manager) []acp.AvailableCommand {
	var out []acp.AvailableCommand
	for _, p := range m.Prompts() {
		desc := p.Description
		if desc == "" {
			desc = "MCP prompt " + p.Name + " of " + p.Server
		}
		c := acp.AvailableCommand{Name: p.QualifiedName, Description: desc}
		if hint := promptHint(p); hint != "" {
			c.Input = &acp.AvailableCommandInput{Unstructured: &acp.UnstructuredCommandInput{Hint: hint}}
		}
		out = append(out, c)
	}
	return out
}

// promptHint describes a prompt's arguments: required ones by name,
// optional ones as "[name=…]".
func promptHint(p mcpclient.Prompt) string {
	var parts []string
	for _, a := range p.Arguments {
		if a.Required {
			parts = append(parts, a.Name)
		} else {
			parts = append(parts, "["+a.Name+"=…]")
		}
	}
	return strings.Join(parts, " ")
}

// ParseCommand splits a prompt of the form "/server:prompt rest" (a single
// text block).
func ParseCommand(prompt []acp.ContentBlock) (name, rest string, ok bool) {
	if len(prompt) != 1 || prompt[0].Text == nil {
		return "", "", false
	}
	t := strings.TrimSpace(prompt[0].Text.Text)
	if !strings.HasPrefix(t, "/") {
		return "", "", false
	}
	name, rest, _ = strings.Cut(t[1:], " ")
	if !strings.Contains(name, ":") {
		return "", "", false
	}
	return name, strings.TrimSpace(rest), true
}

// ErrUnknownPrompt means a command names no prompt of the connected
// servers: it is not a command, and goes to the model as text.
var ErrUnknownPrompt = errors.New("no such MCP prompt")

// ArgsError is a command whose text does not fill its prompt's arguments;
// its message tells the user why and how to call the prompt.
type ArgsError struct{ Err error }

func (e *ArgsError) Error() string { return e.Err.Error() }

// Expand fills the arguments of m's prompt name from rest (the text after
// the command) and returns the prompt's messages as one user message, its
// non-user messages marked with their role; "" when they have no text.
// Errors: [ErrUnknownPrompt], an [*ArgsError], or the server's.
func Expand(ctx context.Context, m *mcpclient.Manager, name, rest string) (string, error) {
	var p *mcpclient.Prompt
	for _, q := range m.Prompts() {
		if q.QualifiedName == name {
			p = &q
			break
		}
	}
	if p == nil {
		return "", ErrUnknownPrompt
	}
	args, err := promptArgs(*p, rest)
	if err != nil {
		return "", &ArgsError{err}
	}
	msgs, err := m.GetPrompt(ctx, name, args)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, m := range msgs {
		if strings.TrimSpace(m.Text) == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		if m.Role != "" && m.Role != "user" {
			b.WriteString("[" + m.Role + "] ")
		}
		b.WriteString(m.Text)
	}
	return b.String(), nil
}

// promptArgs fills a prompt's arguments from the text after its command
// (see the rules above).
func promptArgs(p mcpclient.Prompt, rest string) (map[string]string, error) {
	args := map[string]string{}
	known := map[string]bool{}
	for _, a := range p.Arguments {
		known[a.Name] = true
	}
	var free []string
	for _, w := range strings.Fields(rest) {
		if k, v, ok := strings.Cut(w, "="); ok && known[k] {
			args[k] = v
			continue
		}
		free = append(free, w)
	}
	if len(free) > 0 {
		target := ""
		for _, a := range p.Arguments {
			if _, set := args[a.Name]; !set && a.Required {
				target = a.Name
				break
			}
		}
		if target == "" {
			for _, a := range p.Arguments {
				if _, set := args[a.Name]; !set {
					target = a.Name
					break
				}
			}
		}
		if target == "" {
			if len(p.Arguments) == 0 {
				return nil, fmt.Errorf("this prompt takes no arguments")
			}
			return nil, fmt.Errorf("every argument is already set; usage: /%s %s", p.QualifiedName, promptHint(p))
		}
		args[target] = strings.Join(free, " ")
	}
	var missing []string
	for _, a := range p.Arguments {
		if _, set := args[a.Name]; a.Required && !set {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing required argument %s; usage: /%s %s", strings.Join(missing, ", "), p.QualifiedName, promptHint(p))
	}
	return args, nil
}
