package permissions

import "slices"

// Mode is a session's permission mode.
type Mode string

// The permission modes. An unknown or empty Mode behaves as ModeAsk.
const (
	ModeAsk      Mode = "ask"       // reads inside the roots are free; edits and commands ask
	ModeAutoEdit Mode = "auto-edit" // edits inside the roots are allowed too; commands ask
	ModePlan     Mode = "plan"      // read-only: mutating tools are denied
	ModeFull     Mode = "full"      // the default becomes allow
)

// ModeInfo describes a mode as it is offered to users.
type ModeInfo struct {
	Mode        Mode
	Name        string
	Description string
}

// modes is the one list of modes, in the order offered to clients.
var modes = []ModeInfo{
	{ModeAsk, "Ask", "Reads inside the project are free; edits and commands ask first."},
	{ModeAutoEdit, "Auto-edit", "Edits inside the project are allowed; commands ask first."},
	{ModePlan, "Plan", "Read-only: no edits and no commands."},
	{ModeFull, "Full access", "Everything is allowed by default; protected paths and paths outside the project still ask."},
}

// Modes returns every mode, in the order offered to clients.
func Modes() []ModeInfo { return slices.Clone(modes) }

// Valid reports whether m is one of the modes.
func (m Mode) Valid() bool {
	return slices.ContainsFunc(modes, func(i ModeInfo) bool { return i.Mode == m })
}
