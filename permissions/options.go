package permissions

import (
	"strings"
	"unicode/utf8"
)

// OptionKind is the kind of a permission option, as in ACP's
// PermissionOptionKind.
type OptionKind string

// The four option kinds.
const (
	AllowOnce    OptionKind = "allow_once"
	AllowAlways  OptionKind = "allow_always"
	RejectOnce   OptionKind = "reject_once"
	RejectAlways OptionKind = "reject_always"
)

// Label is how an editor's permission request names an option of kind k
// ("Allow once", "Always allow", "Reject", "Always reject"); "" for an
// unknown kind.
func (k OptionKind) Label() string {
	switch k {
	case AllowOnce:
		return "Allow once"
	case AllowAlways:
		return "Always allow"
	case RejectOnce:
		return "Reject"
	case RejectAlways:
		return "Always reject"
	}
	return ""
}

// Option is one choice offered to the user, as in ACP's PermissionOption
// (ID is its optionId).
type Option struct {
	ID   string
	Name string
	Kind OptionKind
}

// maxOptionDetail bounds the list of remembered rules shown in an option name.
const maxOptionDetail = 160

// Options lists the choices to offer for an Ask decision. When d.Remember is
// non-empty it offers all four kinds, in the order allow_once, allow_always,
// reject_once, reject_always, the "always" names listing what would be
// remembered; otherwise only allow_once and reject_once, because an "always"
// answer could not be honoured. Each option's ID is its kind.
func Options(d Decision) []Option {
	if len(d.Remember) == 0 {
		return []Option{
			{ID: string(AllowOnce), Name: "Allow once", Kind: AllowOnce},
			{ID: string(RejectOnce), Name: "Reject", Kind: RejectOnce},
		}
	}
	detail := rememberDetail(d.Remember)
	return []Option{
		{ID: string(AllowOnce), Name: "Allow once", Kind: AllowOnce},
		{ID: string(AllowAlways), Name: "Always allow " + detail, Kind: AllowAlways},
		{ID: string(RejectOnce), Name: "Reject", Kind: RejectOnce},
		{ID: string(RejectAlways), Name: "Always reject " + detail, Kind: RejectAlways},
	}
}

func rememberDetail(rules []Rule) string {
	parts := make([]string, len(rules))
	for i, r := range rules {
		if r.Match != "" {
			parts[i] = r.Match
		} else {
			parts[i] = r.Tool
		}
	}
	s := strings.Join(parts, ", ")
	if utf8.RuneCountInString(s) > maxOptionDetail {
		s = string([]rune(s)[:maxOptionDetail-1]) + "…"
	}
	return "(" + s + ")"
}

// Verdict interprets a client's answer to a permission request that offered
// the given options: outcome is "selected" (with optionID) or "cancelled".
// Only a "selected" outcome naming exactly one offered option of an allow_*
// kind allows; everything else rejects: a cancelled or unknown outcome, an
// empty, unknown or ambiguous option id, an option of unknown kind, and any
// answer that arrives after the turn was cancelled (lateOrCancelled). remember
// reports an allow_always or reject_always choice; kind is the chosen
// option's kind, or "" when no valid option was chosen.
func Verdict(offered []Option, outcome string, optionID string, lateOrCancelled bool) (allowed bool, remember bool, kind OptionKind) {
	if lateOrCancelled || outcome != "selected" || optionID == "" {
		return false, false, ""
	}
	var chosen *Option
	for i := range offered {
		if offered[i].ID != optionID {
			continue
		}
		if chosen != nil {
			return false, false, "" // ambiguous: fail closed
		}
		chosen = &offered[i]
	}
	if chosen == nil {
		return false, false, ""
	}
	switch chosen.Kind {
	case AllowOnce:
		return true, false, AllowOnce
	case AllowAlways:
		return true, true, AllowAlways
	case RejectOnce:
		return false, false, RejectOnce
	case RejectAlways:
		return false, true, RejectAlways
	}
	return false, false, ""
}
