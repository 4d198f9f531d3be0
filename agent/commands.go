package agent

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"acpd/acp"
	"acpd/agent/internal/skills"
	"acpd/agent/internal/slash"
	"acpd/agent/internal/subagents"
	"acpd/agent/internal/turnerr"
	"acpd/agent/internal/usercmd"
	"acpd/config"
	"acpd/internal/lazy"
	"acpd/model"
	"acpd/permissions"
	"acpd/tools"
)

// runCommand runs a slash command (other than /init) as the whole turn.
func (s *sess) runCommand(ctx context.Context, name, args string, b model.Backend, info model.ModelInfo) (acp.StopReason, error) {
	out := s.a.baseContext()
	switch name {
	case "compact":
		s.mu.Lock()
		n := len(s.transcript)
		s.mu.Unlock()
		msg := "Nothing to compact yet."
		if n > 2 {
			if err := s.compact(ctx, b, info); err != nil {
				if ctx.Err() != nil {
					return acp.StopReasonCancelled, nil
				}
				return "", turnerr.ModelOf(s.settings().Model, err)
			}
			msg = "Compacted the conversation: older turns are now a summary."
		}
		s.notify(out, acp.SessionUpdate{AgentMessageChunk: textChunk(msg, newID("m_"))})
	case "undo":
		s.notify(out, acp.SessionUpdate{AgentMessageChunk: textChunk(s.undo(ctx), newID("m_"))})
	case "fork":
		s.notify(out, acp.SessionUpdate{AgentMessageChunk: textChunk(s.forkCommand(args), newID("m_"))})
	case "rewind":
		s.notify(out, acp.SessionUpdate{AgentMessageChunk: textChunk(s.rewind(ctx, args), newID("m_"))})
	case "plan":
		before := s.settings().Mode
		s.update(func(st *settings) { st.Mode = string(permissions.ModePlan) })
		s.announce(out, before != string(permissions.ModePlan))
		s.notify(out, acp.SessionUpdate{AgentMessageChunk: textChunk("Switched to plan mode: I will read and plan, but not edit files or run commands.", newID("m_"))})
	}
	return acp.StopReasonEndTurn, nil
}

// extSources are where a session's custom slash commands (package
// usercmd), skills and sub-agents are read from: the project's, acpd's
// user directory's, and those of Claude Code and Codex. They depend on the
// project root and the environment only, so they are found once a session.
type extSources struct {
	cmds   []usercmd.Source
	skills []string
	agents []string
}

// sources returns the session's extension sources. Safe for concurrent use.
func (s *sess) sources() *extSources {
	s.extOnce.Do(func() {
		getenv := s.a.getenv
		home := getenv("HOME")
		if home == "" {
			home = getenv("USERPROFILE")
		}
		cfgDir := config.UserDir(getenv)
		s.extSrc = extSources{
			cmds:   usercmd.Sources(s.root, cfgDir, home, getenv),
			skills: skills.Sources(s.root, cfgDir, home, codexHome(getenv, home)),
			agents: subagents.Sources(s.root, cfgDir, home),
		}
	})
	return &s.extSrc
}

// reservedNames are acpd's own slash commands, which custom ones may not
// take.
var reservedNames = lazy.Value[[]string]{New: func() []string {
	var out []string
	for _, c := range slash.Commands() {
		out = append(out, c.Name)
	}
	return out
}}

// userCommands reads the session's custom slash commands (package
// usercmd), acpd's own names reserved.
func (s *sess) userCommands() []usercmd.Command {
	return usercmd.Load(s.sources().cmds, reservedNames.Get())
}

// userSkills reads the session's skills (package skills).
func (s *sess) userSkills() []skills.Skill {
	return skills.Load(s.sources().skills)
}

// mcpSkills are the skills the session's MCP servers serve, as skills
// named "<server>:<name>" (none of their files read).
func (s *sess) mcpSkills() []skills.Skill {
	var out []skills.Skill
	for _, sk := range s.mcp.Skills() {
		out = append(out, skills.Skill{Name: sk.QualifiedName, Description: sk.Description, Server: sk.Server})
	}
	return out
}

// extensions are the session's custom commands, skills and sub-agents as
// last read: skills holds the local ones and those of the MCP servers
// after them.
type extensions struct {
	cmds   []usercmd.Command
	skills []skills.Skill
	agents []subagents.Agent
}

// userAgents reads the session's custom sub-agents (package subagents).
func (s *sess) userAgents() []subagents.Agent {
	return subagents.Load(s.sources().agents, func(n string) bool { return s.a.builtin[n] != nil })
}

// currentAgents are the custom sub-agents as last read.
func (s *sess) currentAgents() []subagents.Agent {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ext.agents
}

// commandList is every slash command the session offers but the MCP
// servers' prompts: acpd's own, the custom ones, then one per skill (a
// local skill whose name is taken is offered as "skill:name", an MCP
// server's always as "skill:<server>:<name>", which no MCP prompt can be).
func commandList(ext extensions) []acp.AvailableCommand {
	list := append(slash.Commands(), usercmd.Available(ext.cmds)...)
	for _, sk := range ext.skills {
		desc := "Skill: " + sk.Description
		if sk.Server != "" {
			desc = "Skill of MCP server " + sk.Server + ": " + sk.Description
		}
		list = append(list, acp.AvailableCommand{Name: skillCommand(list, sk), Description: desc,
			Input: &acp.AvailableCommandInput{Unstructured: &acp.UnstructuredCommandInput{Hint: "what to use it for (optional)"}}})
	}
	return list
}

// skillCommand is the slash command name of skill sk: its name, or
// "skill:name" when list already has it or sk is an MCP server's.
func skillCommand(list []acp.AvailableCommand, sk skills.Skill) string {
	if sk.Server != "" {
		return "skill:" + sk.Name
	}
	for _, c := range list {
		if c.Name == sk.Name {
			return "skill:" + sk.Name
		}
	}
	return sk.Name
}

// commands is the session's slash commands, read anew; they are what the
// editor is told at the session's start, which later refreshes compare
// with.
func (s *sess) commands() []acp.AvailableCommand {
	list := commandList(s.loadExtensions())
	s.mu.Lock()
	s.cmdKey = list
	s.mu.Unlock()
	return list
}

// loadExtensions reads the custom commands and skills and keeps them as
// the session's current ones.
func (s *sess) loadExtensions() extensions {
	ext := extensions{cmds: s.userCommands(), skills: append(s.userSkills(), s.mcpSkills()...), agents: s.userAgents()}
	s.mu.Lock()
	s.ext = ext
	s.mu.Unlock()
	return ext
}

// currentSkills are the local skills as last read and the MCP servers'
// as they are now (a server that connected since the prompt counts).
func (s *sess) currentSkills() []skills.Skill {
	s.mu.Lock()
	local := slices.DeleteFunc(slices.Clone(s.ext.skills), func(sk skills.Skill) bool { return sk.Server != "" })
	s.mu.Unlock()
	return append(local, s.mcpSkills()...)
}

// refreshCommands reads the custom commands and skills again (at every
// prompt, so an added or edited file counts from the next one) and
// announces the list when it changed since the last announcement.
func (s *sess) refreshCommands(ctx context.Context) extensions {
	ext := s.loadExtensions()
	list := commandList(ext)
	s.mu.Lock()
	changed := s.cmdKey != nil && !reflect.DeepEqual(s.cmdKey, list)
	s.cmdKey = list
	s.mu.Unlock()
	if changed {
		if s.mcp != nil {
			s.mcp.SetCommands(list)
		} else {
			s.send(ctx, acp.SessionUpdate{AvailableCommandsUpdate: &acp.AvailableCommandsUpdate{AvailableCommands: list}})
		}
	}
	return ext
}

// skillInvoked returns the skill a prompt invokes ("/name args" or
// "/skill:name args") and the text after its name.
func skillInvoked(ext extensions, prompt []acp.ContentBlock) (skills.Skill, string, bool) {
	if len(prompt) == 0 || prompt[0].Text == nil {
		return skills.Skill{}, "", false
	}
	t := strings.TrimSpace(prompt[0].Text.Text)
	if !strings.HasPrefix(t, "/") {
		return skills.Skill{}, "", false
	}
	name, args, _ := strings.Cut(t[1:], " ")
	list := commandList(ext)
	for _, sk := range ext.skills {
		if cmd := skillCommand(list[:len(list)-len(ext.skills)], sk); cmd == name {
			return sk, args, true
		}
	}
	return skills.Skill{}, "", false
}

// skillTool is the tool the model uses a skill with: it returns the
// skill's instructions, or the whole list for "list"; for an MCP server's
// skill, with file, one of the skill's files.
func (s *sess) skillTool() *tools.Tool {
	return &tools.Tool{
		Def: model.ToolDef{Name: "skill", Description: "Use one of the skills listed in the system prompt: returns its instructions (follow them) and where its bundled files are. Call it with name \"list\" to see every installed skill. For a skill from an MCP server, also read its files with it: name and file (the file's path in the skill).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"the skill's name, or \"list\""},"file":{"type":"string","description":"only for a skill from an MCP server: the path of one of its files to read"}},"required":["name"],"additionalProperties":false}`)},
		Kind:     acp.ToolKindRead,
		ReadOnly: true,
		Title: func(in json.RawMessage) string {
			var v struct{ Name, File string }
			if json.Unmarshal(in, &v) == nil && v.Name != "" {
				if v.File != "" {
					return "Skill " + v.Name + ": " + v.File
				}
				return "Skill " + v.Name
			}
			return "Skill"
		},
		Run: func(ctx context.Context, env tools.Env, c *tools.Call) tools.Result {
			var in struct {
				Name string `json:"name"`
				File string `json:"file"`
			}
			if err := json.Unmarshal(c.Input, &in); err != nil || in.Name == "" {
				return tools.Errorf("invalid skill arguments: want {\"name\": \"…\"}")
			}
			sks := s.currentSkills()
			if in.Name == "list" {
				return tools.Result{Text: skills.All(sks)}
			}
			sk, ok := skills.Find(sks, in.Name)
			if !ok {
				return tools.Errorf("no skill named %q; installed:\n%s", in.Name, skills.All(sks))
			}
			switch {
			case in.File != "" && sk.Server == "":
				return tools.Errorf("skill %s is on this machine: read its files from %s with the file tools", sk.Name, sk.Dir)
			case in.File != "":
				text, err := s.mcp.SkillFile(ctx, sk.Name, in.File)
				if err != nil {
					return tools.Errorf("reading file %s of skill %s: %v", in.File, sk.Name, err)
				}
				return tools.Result{Text: text}
			}
			text, err := s.useSkill(ctx, sk, "")
			if err != nil {
				return tools.Errorf("reading skill %s: %v", sk.Name, err)
			}
			return tools.Result{Text: text}
		},
	}
}

// useSkill is what the model is given when it uses sk (skills.Use; an MCP
// server's skill is loaded from its server now, verified, and from then
// on the session's commands ask first, see decide).
func (s *sess) useSkill(ctx context.Context, sk skills.Skill, args string) (string, error) {
	if sk.Server != "" {
		text, err := s.mcp.UseSkill(ctx, sk.Name, args)
		if err == nil {
			s.update(func(st *settings) { st.MCPSkill = sk.Name })
		}
		return text, err
	}
	return skills.Use(sk, args)
}

// codexHome is Codex's home directory: $CODEX_HOME, else ~/.codex ("" for
// neither).
func codexHome(getenv func(string) string, home string) string {
	if h := getenv("CODEX_HOME"); h != "" {
		return h
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".codex")
}
