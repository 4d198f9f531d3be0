// Package permissions is acpd's tool-call permission policy.
//
// A [Policy] decides, for every tool call the model asks for, whether it runs
// ([Allow]), needs the user's approval ([Ask]) or is refused ([Deny]). It
// combines the session's [Mode], rules from the configuration ([Rule]),
// choices the user asked to remember ([Store]) and fixed safety checks. The
// first step that applies wins:
//
// The policy judges a call by its [Call].Kind (file read, file change,
// command, network fetch, no side effects, or other: MCP and unknown
// tools), never by a
// list of tool names; [PolicyOptions].Tools names the tools a rule's Match
// applies to.
//
//  0. A call of kind think (update_plan) is always allowed: it has no side
//     effects.
//  1. In plan mode every mutating tool is denied ("plan mode is read-only"):
//     edits, commands, fetches, and MCP or unknown tools not marked
//     [Call].ReadOnly.
//  2. A deny rule that matches the call denies it.
//  3. A path outside the workspace roots, or a protected path (a ".git"
//     or ".acpd" component anywhere, or inside acpd's configuration or state directory,
//     see [PolicyOptions].Protected), asks in every mode, even full, even when
//     an allow rule or a remembered choice would allow it. Existing symbolic
//     links, dangling ones included, are resolved for this check: a path that
//     resolves out of its root or into a protected place asks too.
//  4. A remembered rejection denies; a command line that might (but cannot
//     be shown to) run a denied or rejected command asks; an ask rule asks;
//     an allow rule or a remembered approval allows.
//  5. The mode's default: reads inside the roots are free in every mode; edits
//     ask in "ask" mode and are allowed in "auto-edit" and "full"; commands,
//     MCP and unknown tools ask except in "full", which allows everything;
//     MCP and unknown tool calls marked [Call].NoApproval are allowed.
//     A fetch asks except in "full"; there too it asks, naming the URL,
//     when the session's sandbox keeps commands off the network
//     ([Call].Offline): acpd's own network tools obey the commands'
//     network policy.
//
// An unknown mode behaves as "ask". When the [Store] cannot be read nothing is
// allowed without asking.
//
// # Commands
//
// run_command lines are parsed as bash (mvdan.cc/sh/v3/syntax). Every simple
// command anywhere in the line (after &&, ||, ;, |, inside $(...), backticks,
// subshells, process substitutions, if/while/case bodies) must be allowed for
// the line to be allowed by rules or remembered choices. A line is never
// allowed by rules or remembered choices when it contains any of:
//
//   - a word that is not a plain literal: parameter, arithmetic or command
//     expansion anywhere in the line, brace expansion, extended globs,
//     $'...' and $"..." strings (unquoted globs and ~ are matched as written);
//   - output redirection (>, >>, >|, &>, &>>, <>, >&file) to anything other
//     than /dev/null, here-documents, {var}> redirections, background jobs
//     (&), coprocesses;
//   - variable assignments (X=1, X=1 cmd, export, declare, local, readonly,
//     typeset, unset, for loops, read, mapfile, printf -v, getopts), function
//     definitions, arithmetic ((( )), let), [[ ]] tests;
//   - commands that run other commands or code given as arguments: eval,
//     source, ., exec, shells (sh, bash, zsh, ...), xargs, find with
//     -exec/-execdir/-ok/-okdir/-delete/-fprint*, and the wrappers env,
//     command, builtin, sudo, doas, su, nohup, time, nice, timeout, stdbuf,
//     ionice, setsid, chroot, watch, strace, flock, parallel and similar.
//     Wrappers are not unwrapped for allow rules: they always ask;
//   - alias, unalias, trap, hash, enable, which change later commands;
//   - anything that does not parse, including lines with NUL or carriage
//     return characters (which bash and the parser read differently) and
//     lines over 64 KiB.
//
// Such lines ask in "ask" and "auto-edit" mode and are allowed in "full" mode
// (the user opted out of prompts), but deny and ask rules are still checked
// against every simple command, including the commands behind wrappers (every
// suffix of a wrapper's words is tried), commands given to shells and eval as
// literal strings (parsed recursively), and command names given as paths
// (/bin/rm is matched as rm). A word that is not literal could expand to
// anything and a line that does not parse could be anything: when such a part
// is all that makes a deny rule match, the call asks (in every mode) instead
// of being denied, and an ask rule it might match asks too. Deny rules remain
// a best-effort block list: the shell is too expressive for any list to be
// complete, which is why constructs that hide what runs never auto-allow. An
// allow rule with a trailing "*" grants whatever the allowed program can do
// with arbitrary arguments (find *, git *, python * run code).
//
// # Patterns
//
// Globs are acpd's one glob dialect, the search tools' too (doublestar's, see
// package acpd/internal/glob: *, ?, [...], {a,b}, ** as a whole segment,
// \ escapes). A rule's Tool is a glob on the tool name. A rule's Match is,
// for run_command, a command pattern written like a shell command: its words
// are globs matched against the command's literal words (so "*" does not
// cross "/"), quoting makes glob characters literal, and an unquoted
// "*" as the last word matches any number (zero included) of remaining words:
// "go test *" matches "go test" and "go test -run X ./...". For file tools
// Match is a slash-separated glob relative to the root ("docs/**", where "**"
// matches any number of directories), or an absolute glob when it starts with
// "/". Path rules match the path given to the tool: a rule on "secrets/**"
// does not stop grep or glob from searching the root that contains it. For
// fetch tools (web_fetch) Match is an origin, "scheme://host[:port]", matched
// against the origin of the fetched URL (see [Origin]): the host may be "*"
// or start with "*." (any subdomain), the port may be "*", and without a port
// the scheme's default port is meant. An empty Match matches every call of
// the tool. Other tools take no Match.
//
// # Remembering
//
// "Always" answers are stored per project ([ProjectKey]) as the narrowest rules
// covering the call (see [Decision].Remember): one rule per distinct simple
// command not yet allowed, with its exact words, quoted so that no word acts
// as a glob; the exact file (relative to the project directory when inside
// it, absolute otherwise); for a fetch, the URL's origin (so a redirect to
// another origin is decided again); or the exact tool name. A remembered
// approval of a fetch tool without an origin allows nothing. A rejection is stored the
// same way, so "always reject" of a line rejects each of its listed commands.
// Calls that ask for a reason a remembered rule could not lift (protected or
// outside paths, paths behind symbolic links, ask rules, lines that always
// ask) cannot be remembered.
package permissions
