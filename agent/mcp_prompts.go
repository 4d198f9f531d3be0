package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"acpd/acp"
	"acpd/mcpclient"
	"acpd/model"
	"acpd/permissions"
	"acpd/tools"
)

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

// availableCommands returns acpd's slash commands followed by the MCP
// prompts of the session's connected servers.
func (s *sess) availableCommands() []acp.AvailableCommand {
	out := slices.Clone(commands)
	t := s.mcpTools
	if t == nil {
		return out
	}
	select {
	case <-t.ready:
	default:
		return out
	}
	for _, p := range t.m.Prompts() {
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

// announceCommands sends the available commands. The first call (from
// session/new or session/load, after the reply) marks the session as
// announced; later calls from the MCP side (servers connected, prompt list
// changed) send only after that, so no update precedes the reply. The lock
// keeps the updates in the order their lists were computed.
func (s *sess) announceCommands(ctx context.Context, initial bool) {
	t := s.mcpTools
	if t == nil {
		if initial {
			s.send(ctx, acp.SessionUpdate{AvailableCommandsUpdate: &acp.AvailableCommandsUpdate{AvailableCommands: s.availableCommands()}})
		}
		return
	}
	t.cmdMu.Lock()
	defer t.cmdMu.Unlock()
	if initial {
		t.announced = true
	} else if !t.announced {
		return
	}
	s.send(ctx, acp.SessionUpdate{AvailableCommandsUpdate: &acp.AvailableCommandsUpdate{AvailableCommands: s.availableCommands()}})
}

// promptCommand splits a prompt of the form "/server:prompt rest" (a single
// text block).
func promptCommand(prompt []acp.ContentBlock) (name, rest string, ok bool) {
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

// mcpPromptTurn expands an MCP prompt command into the turn's user message.
// ok reports that the prompt was such a command; then either parts is the
// message, or stop is set and the turn is over (the user was told why).
// A "/a:b" naming no prompt is not a command: it goes to the model as text.
func (s *sess) mcpPromptTurn(ctx context.Context, prompt []acp.ContentBlock) (parts []model.Part, stop acp.StopReason, ok bool) {
	t := s.mcpTools
	if t == nil {
		return nil, "", false
	}
	name, rest, ok := promptCommand(prompt)
	if !ok {
		return nil, "", false
	}
	s.awaitMCP(ctx)
	if ctx.Err() != nil {
		return nil, acp.StopReasonCancelled, true
	}
	i := slices.IndexFunc(t.m.Prompts(), func(p mcpclient.Prompt) bool { return p.QualifiedName == name })
	if i < 0 {
		return nil, "", false
	}
	p := t.m.Prompts()[i]
	out := s.a.baseContext()
	tell := func(msg string) (acp.StopReason, bool) {
		s.notify(out, acp.SessionUpdate{AgentMessageChunk: textChunk(msg, newID("m_"))})
		return acp.StopReasonEndTurn, true
	}
	args, err := promptArgs(p, rest)
	if err != nil {
		stop, ok := tell(fmt.Sprintf("/%s: %v.", name, err))
		return nil, stop, ok
	}
	msgs, err := t.m.GetPrompt(ctx, name, args)
	if err != nil {
		if ctx.Err() != nil {
			return nil, acp.StopReasonCancelled, true
		}
		stop, ok := tell(fmt.Sprintf("The MCP prompt /%s failed: %v", name, err))
		return nil, stop, ok
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
	if b.Len() == 0 {
		stop, ok := tell(fmt.Sprintf("The MCP prompt /%s returned no text.", name))
		return nil, stop, ok
	}
	return []model.Part{{Type: model.PartText, Text: b.String()}}, "", true
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

// Built-in MCP resource tools, offered once a session's MCP servers are
// connected. Reading an MCP resource has no side effects by the protocol's
// definition and the servers were configured by the user, so these tools
// need no approval; a deny rule naming them still refuses them.
const (
	toolMCPListResources = "mcp_list_resources"
	toolMCPReadResource  = "mcp_read_resource"
)

// resourceTools returns the resource tools bound to t.
func (s *sess) resourceTools(t *mcpTools) map[string]*tools.Tool {
	list := &tools.Tool{
		Def: model.ToolDef{
			Name:        toolMCPListResources,
			Description: "List the resources (documents, data) the connected MCP servers offer, with their URIs. Read one with mcp_read_resource.",
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
			in, err := tools.DecodeInput[struct {
				Server string `json:"server"`
			}](tc.Input)
			if err != nil {
				return tools.Errorf("invalid %s arguments: %v", toolMCPListResources, err)
			}
			if res, ok := s.allowResourceTool(tc); !ok {
				return res
			}
			rs, err := t.m.Resources(ctx, in.Server)
			if err != nil && len(rs) == 0 {
				if ctx.Err() != nil {
					return tools.Errorf("cancelled by the user")
				}
				return tools.Errorf("listing MCP resources failed: %v", err)
			}
			var b strings.Builder
			for _, r := range rs {
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
			if len(rs) == 0 {
				b.WriteString("No MCP resources.\n")
			}
			if err != nil {
				fmt.Fprintf(&b, "(some servers failed: %v)\n", err)
			}
			return tools.Result{Text: b.String()}
		},
	}
	read := &tools.Tool{
		Def: model.ToolDef{
			Name:        toolMCPReadResource,
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
			in, err := tools.DecodeInput[struct {
				Server string `json:"server"`
				URI    string `json:"uri"`
			}](tc.Input)
			if err != nil || in.Server == "" || in.URI == "" {
				if err == nil {
					err = fmt.Errorf("server and uri are required")
				}
				return tools.Errorf("invalid %s arguments: %v", toolMCPReadResource, err)
			}
			if res, ok := s.allowResourceTool(tc); !ok {
				return res
			}
			text, err := t.m.ReadResource(ctx, in.Server, in.URI)
			if err != nil {
				if ctx.Err() != nil {
					return tools.Errorf("cancelled by the user")
				}
				return tools.Errorf("reading MCP resource %s failed: %v", in.URI, err)
			}
			return tools.Result{Text: text}
		},
	}
	return map[string]*tools.Tool{toolMCPListResources: list, toolMCPReadResource: read}
}

// allowResourceTool applies the user's deny rules to a resource tool call
// and otherwise lets it run without asking.
func (s *sess) allowResourceTool(tc *tools.Call) (tools.Result, bool) {
	d := s.policy.Decide(permissions.Mode(s.settings().Mode), permissions.Call{Tool: tc.Name})
	if d.Action == permissions.Deny {
		return tools.Errorf("Not allowed: %s", d.Reason), false
	}
	s.markRunning(tc)
	return tools.Result{}, true
}
