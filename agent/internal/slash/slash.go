// Package slash holds acpd's own slash commands: the list the editor is
// offered, recognising one in a prompt, and what /init asks the model.
// (The servers' prompt commands, "/server:prompt", are tools/mcptools'.)
package slash

import (
	"slices"
	"strings"

	"acpd/acp"
)

// commands are the slash commands acpd offers.
var commands = []acp.AvailableCommand{
	{Name: "compact", Description: "Summarise older turns to free the context window"},
	{Name: "init", Description: "Write an AGENTS.md describing this project for coding agents"},
	{Name: "plan", Description: "Switch to plan mode (read-only)"},
	{Name: "review", Description: "Review the uncommitted changes, a branch against its base, or a commit",
		Input: &acp.AvailableCommandInput{Unstructured: &acp.UnstructuredCommandInput{Hint: "nothing, base BRANCH, or commit SHA (then what to focus on)"}}},
	{Name: "undo", Description: "Restore the files the last turn changed"},
	{Name: "rewind", Description: "List the turns, or go back to one: its files and the conversation",
		Input: &acp.AvailableCommandInput{Unstructured: &acp.UnstructuredCommandInput{Hint: "nothing to list the turns, or a turn's number"}}},
	{Name: "fork", Description: "Copy this session (up to a turn) into a new one",
		Input: &acp.AvailableCommandInput{Unstructured: &acp.UnstructuredCommandInput{Hint: "nothing for the whole session, or a turn's number"}}},
}

// ModelTurn reports whether command name is a model turn (which may
// change files, so it gets a checkpoint) rather than one of acpd's own
// actions.
func ModelTurn(name string) bool { return name == "init" || name == "review" }

// Commands returns the slash commands acpd offers (a copy).
func Commands() []acp.AvailableCommand { return slices.Clone(commands) }

// Parse reports whether the prompt is one of acpd's slash commands (a
// single text block starting with "/name") and returns its name.
func Parse(prompt []acp.ContentBlock) (string, bool) {
	if len(prompt) != 1 || prompt[0].Text == nil {
		return "", false
	}
	t := strings.TrimSpace(prompt[0].Text.Text)
	if !strings.HasPrefix(t, "/") {
		return "", false
	}
	name, _, _ := strings.Cut(t[1:], " ")
	for _, c := range commands {
		if c.Name == name {
			return name, true
		}
	}
	return "", false
}

// Args returns the text after a slash command's name ("" when none).
func Args(prompt []acp.ContentBlock) string {
	if len(prompt) == 0 || prompt[0].Text == nil {
		return ""
	}
	_, args, _ := strings.Cut(strings.TrimSpace(prompt[0].Text.Text), " ")
	return strings.TrimSpace(args)
}

// InitPrompt is what /init asks the model to do.
const InitPrompt = `Analyse this project and write an AGENTS.md file at its root for coding agents: what the project is, how to build it, how to run the tests, the layout of the code, conventions to follow, and anything surprising. Read the existing README, build files and a few representative source files first. If AGENTS.md already exists, improve it instead of replacing useful content. Keep it short and factual.`
