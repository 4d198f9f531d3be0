package permissions

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"acpd/internal/lazy"
)

const (
	// maxCommandLen bounds the command lines the parser is asked to analyse;
	// longer lines are treated as unparseable (they always ask).
	maxCommandLen = 64 << 10
	// maxNestedParse bounds how deep literal strings given to shells and eval
	// are re-parsed when looking for denied commands.
	maxNestedParse = 4
)

// cmdWord is one word of a simple command.
type cmdWord struct {
	// text is the word's value after quote removal when literal; for an
	// unknown word, an optional description used only for display.
	text    string
	unknown bool // contains expansions: may become any number of words
}

// simpleCommand is one simple command found in a line.
type simpleCommand struct {
	words []cmdWord
}

func (c simpleCommand) literalWords() ([]string, bool) {
	out := make([]string, len(c.words))
	for i, w := range c.words {
		if w.unknown {
			return nil, false
		}
		out[i] = w.text
	}
	return out, true
}

func (c simpleCommand) String() string {
	parts := make([]string, len(c.words))
	for i, w := range c.words {
		if w.unknown {
			parts[i] = cmp.Or(w.text, "<expansion>")
		} else {
			parts[i] = shellQuote(w.text)
		}
	}
	return strings.Join(parts, " ")
}

// unknownCommand stands for commands that could not be analysed: deny and ask
// rules treat it as possibly matching, so a call containing it asks.
var unknownCommand = simpleCommand{words: []cmdWord{{unknown: true, text: "<command that cannot be parsed>"}}}

// analysis is what a command line contains, as far as the policy cares.
type analysis struct {
	// cmds are the simple commands of the line, anywhere in it, in source
	// order. When the line does not parse it holds unknownCommand.
	cmds []simpleCommand
	// nested are commands found only by re-parsing literal strings handed to
	// shells and eval; they are checked against deny and ask rules only.
	nested []simpleCommand
	// alwaysAsk lists why the line can never be allowed by a rule or a
	// remembered choice; empty when every simple command can be judged alone.
	alwaysAsk []string
}

// analyze returns the analysis of c.Command (see Call.WholeLine).
func (c Call) analyze() analysis {
	if c.WholeLine {
		return analyzeWholeLine(c.Command)
	}
	return analyzeCommand(c.Command)
}

// analyzeWholeLine is the analysis of a line the policy cannot split into
// commands: one command whose only word is the whole line, which only a
// rule naming exactly that line allows, and an unknown nested command that
// every deny or ask rule might hide.
func analyzeWholeLine(line string) analysis {
	return analysis{
		cmds:   []simpleCommand{{words: []cmdWord{{text: line}}}},
		nested: []simpleCommand{{words: []cmdWord{{unknown: true, text: line}}}},
	}
}

// wrappers run another command taken from their arguments, or re-interpret
// their arguments as shell code. They always ask, and deny rules are tried on
// every suffix of their words.
var wrappers = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{
		// shell code interpreters
		"eval": true, "source": true, ".": true, "exec": true,
		"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true,
		"ash": true, "fish": true, "csh": true, "tcsh": true, "busybox": true,
		// command runners and wrappers
		"xargs": true, "env": true, "command": true, "builtin": true, "sudo": true,
		"doas": true, "su": true, "runuser": true, "pkexec": true, "nohup": true,
		"time": true, "nice": true, "timeout": true, "stdbuf": true, "ionice": true,
		"setsid": true, "chroot": true, "watch": true, "strace": true, "ltrace": true,
		"unbuffer": true, "parallel": true, "flock": true, "script": true,
		"chrt": true, "taskset": true, "numactl": true, "firejail": true,
		"systemd-run": true, "nsenter": true, "unshare": true, "caffeinate": true,
	}
}}

// stringInterpreters parse their literal arguments as shell code; those are
// re-parsed so deny rules see the commands inside.
var stringInterpreters = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{
		"eval": true, "sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true,
		"mksh": true, "ash": true, "su": true, "busybox": true,
	}
}}

// stateChangers alter how later commands of the same line run.
var stateChangers = lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"alias":     "defines an alias",
		"unalias":   "changes aliases",
		"trap":      "sets a trap that runs a command",
		"hash":      "changes where commands are looked up",
		"enable":    "changes shell builtins",
		"read":      "assigns shell variables",
		"mapfile":   "assigns shell variables",
		"readarray": "assigns shell variables",
		"getopts":   "assigns shell variables",
		// Declaration builtins are parsed as such unless quoted ('export' X=1).
		"export":   "assigns shell variables",
		"declare":  "assigns shell variables",
		"typeset":  "assigns shell variables",
		"local":    "assigns shell variables",
		"readonly": "assigns shell variables",
		"nameref":  "assigns shell variables",
		"let":      "evaluates arithmetic",
		"unset":    "changes shell variables",
	}
}}

// findExec are find primaries that run commands, delete or write files.
var findExec = []string{"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}

func wrapperLike(name string) bool {
	base := path.Base(name)
	return wrappers.Get()[base] || base == "find"
}

// analyzeCommand parses a run_command line. It never panics and never fails:
// whatever cannot be understood ends up in alwaysAsk and as unknownCommand.
func analyzeCommand(line string) analysis {
	var a analysis
	f, err := parseBashChecked(line)
	if err != nil {
		a.cmds = []simpleCommand{unknownCommand}
		a.alwaysAsk = []string{"the command line " + err.Error()}
		return a
	}
	w := walker{a: &a}
	w.walk(f)
	if len(a.cmds) == 0 {
		a.alwaysAsk = append(a.alwaysAsk, "the line runs no command")
	}
	w.nestedFrom(a.cmds, 1)
	a.alwaysAsk = dedupe(a.alwaysAsk)
	return a
}

func dedupe(s []string) []string {
	out := s[:0]
	seen := make(map[string]bool, len(s))
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// parseBashChecked parses a command line as bash, refusing input the shell
// would read differently from the parser and input too large to analyse:
// NUL bytes truncate bash's -c string but are skipped by the parser, and the
// parser reads "\r\n" as "\n" and a lone "\r" as a blank where bash keeps
// the "\r" (so "a\\\r\nrm x" would hide a second command).
func parseBashChecked(line string) (f *syntax.File, err error) {
	if len(line) > maxCommandLen {
		return nil, fmt.Errorf("is longer than %d bytes", maxCommandLen)
	}
	if strings.IndexByte(line, 0) >= 0 {
		return nil, errors.New("contains a NUL byte")
	}
	if strings.IndexByte(line, '\r') >= 0 {
		return nil, errors.New("contains a carriage return")
	}
	f, err = parseBash(line)
	if err != nil {
		return nil, fmt.Errorf("does not parse: %w", err)
	}
	return f, nil
}

// parseBash parses s in bash syntax. A panic inside the parser is reported as
// an error so that it fails closed.
func parseBash(s string) (f *syntax.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("parser failure: %v", r)
		}
	}()
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
}

type walker struct {
	a *analysis
}

func (w walker) ask(format string, args ...any) {
	w.a.alwaysAsk = append(w.a.alwaysAsk, fmt.Sprintf(format, args...))
}

func (w walker) walk(root syntax.Node) {
	syntax.Walk(root, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			if n.Background || n.Coprocess || n.Disown {
				w.ask("it starts a background job")
			}
		case *syntax.CallExpr:
			w.call(n)
		case *syntax.Word:
			if wordValue(n).unknown {
				w.ask("it contains expansions ($..., `...`, {a,b}, $'...')")
			}
		case *syntax.Redirect:
			w.redirect(n)
		case *syntax.FuncDecl:
			w.ask("it defines a function")
		case *syntax.ForClause:
			w.ask("a for loop assigns a variable")
		case *syntax.DeclClause:
			w.ask("it declares variables")
		case *syntax.ArithmCmd, *syntax.LetClause:
			w.ask("it evaluates arithmetic")
		case *syntax.TestClause:
			w.ask("[[ ]] tests evaluate arithmetic")
		case *syntax.TimeClause:
			w.ask("time runs another command")
		case *syntax.CoprocClause:
			w.ask("it starts a coprocess")
		case *syntax.TestDecl:
			w.ask("it declares a test")
		}
		return true
	})
}

func (w walker) call(c *syntax.CallExpr) {
	if len(c.Assigns) > 0 {
		w.ask("it assigns variables")
	}
	if len(c.Args) == 0 {
		return
	}
	sc := simpleCommand{words: make([]cmdWord, len(c.Args))}
	for i, arg := range c.Args {
		sc.words[i] = wordValue(arg)
	}
	w.a.cmds = append(w.a.cmds, sc)
	head := sc.words[0]
	if head.unknown {
		w.ask("the command name is not a literal word")
		return
	}
	base := path.Base(head.text)
	switch {
	case wrappers.Get()[base]:
		w.ask("%s runs another command or shell code", base)
	case base == "find":
		for _, arg := range sc.words[1:] {
			if !arg.unknown && slices.Contains(findExec, arg.text) {
				w.ask("find %s runs commands or changes files", arg.text)
			}
		}
	case base == "printf":
		for _, arg := range sc.words[1:] {
			if !arg.unknown && strings.HasPrefix(arg.text, "-") && strings.Contains(arg.text, "v") && !strings.HasPrefix(arg.text, "--") {
				w.ask("printf -v assigns a variable")
			}
		}
	case stateChangers.Get()[base] != "":
		w.ask("%s %s", base, stateChangers.Get()[base])
	}
}

func (w walker) redirect(r *syntax.Redirect) {
	if r.N != nil && strings.HasPrefix(r.N.Value, "{") {
		w.ask("{var}> redirections assign variables")
	}
	target := ""
	literal := false
	if r.Word != nil {
		v := wordValue(r.Word)
		target, literal = v.text, !v.unknown
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
		syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.RdrInOut:
		if !literal || target != "/dev/null" {
			w.ask("it redirects output to a file (%s)", describeTarget(target, literal))
		}
	case syntax.DplOut:
		if !literal || !isFD(target) {
			w.ask("it redirects output to a file (%s)", describeTarget(target, literal))
		}
	case syntax.DplIn:
		if !literal || !isFD(target) {
			w.ask("it has an unusual input redirection")
		}
	case syntax.Hdoc, syntax.DashHdoc:
		w.ask("it contains a here-document")
	case syntax.RdrIn, syntax.WordHdoc:
		// Reading a file or a here-string does not change anything.
	default:
		w.ask("it has an unsupported redirection %s", r.Op)
	}
}

func describeTarget(t string, literal bool) string {
	if !literal {
		return "an expanded name"
	}
	return shellQuote(t)
}

// isFD reports whether a >& or <& target is a file descriptor or "-".
func isFD(s string) bool {
	if s == "-" {
		return true
	}
	s = strings.TrimSuffix(s, "-") // n>&m- moves a descriptor
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// nestedFrom re-parses the literal arguments given to shells and eval, so
// that deny rules also see the commands inside. A string that cannot be
// analysed adds unknownCommand.
func (w walker) nestedFrom(cmds []simpleCommand, depth int) {
	for _, c := range cmds {
		for k, word := range c.words {
			if word.unknown {
				break
			}
			base := path.Base(word.text)
			if !stringInterpreters.Get()[base] {
				if wrapperLike(c.words[0].text) {
					continue // look behind sudo, env, xargs, find, ...
				}
				break
			}
			args := c.words[k+1:]
			var texts []string
			for _, arg := range args {
				if arg.unknown {
					w.a.nested = append(w.a.nested, unknownCommand)
					continue
				}
				texts = append(texts, arg.text)
			}
			if base == "eval" && len(texts) > 1 {
				texts = append(texts, strings.Join(texts, " "))
			}
			for _, t := range texts {
				w.parseNested(t, depth)
			}
			break
		}
	}
}

func (w walker) parseNested(s string, depth int) {
	if depth > maxNestedParse {
		w.a.nested = append(w.a.nested, unknownCommand)
		return
	}
	f, err := parseBashChecked(s)
	if err != nil {
		w.a.nested = append(w.a.nested, unknownCommand)
		return
	}
	var inner analysis
	iw := walker{a: &inner}
	iw.walk(f)
	iw.nestedFrom(inner.cmds, depth+1)
	w.a.nested = append(w.a.nested, inner.cmds...)
	w.a.nested = append(w.a.nested, inner.nested...)
}

// wordValue evaluates a word's literal value. Unquoted backslash escapes and
// quotes are removed; anything the shell would expand (parameters, command
// and arithmetic substitution, process substitution, extended globs, brace
// expansion, $'...' and $"..." strings) makes the word unknown. Unquoted glob
// characters and a leading ~ are kept as written: patterns are matched
// against what the user sees.
func wordValue(w *syntax.Word) cmdWord {
	var b strings.Builder
	hasBrace := false
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			if strings.Contains(p.Value, "{") {
				hasBrace = true
			}
			b.WriteString(unescapeUnquoted(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return cmdWord{unknown: true}
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return cmdWord{unknown: true}
			}
			for _, dp := range p.Parts {
				lit, ok := dp.(*syntax.Lit)
				if !ok {
					return cmdWord{unknown: true}
				}
				b.WriteString(unescapeDouble(lit.Value))
			}
		default:
			return cmdWord{unknown: true}
		}
	}
	if hasBrace && hasBraceExpansion(w) {
		return cmdWord{unknown: true}
	}
	return cmdWord{text: b.String()}
}

// hasBraceExpansion reports whether bash would brace-expand the word.
func hasBraceExpansion(w *syntax.Word) bool {
	cp := &syntax.Word{Parts: slices.Clone(w.Parts)}
	syntax.SplitBraces(cp)
	return slices.ContainsFunc(cp.Parts, func(p syntax.WordPart) bool {
		_, ok := p.(*syntax.BraceExp)
		return ok
	})
}

// unescapeUnquoted removes the backslashes of an unquoted literal: "\x" is
// "x" and a backslash-newline disappears.
func unescapeUnquoted(s string) string { return unescape(s, "") }

// unescapeDouble removes the backslashes that are special inside double
// quotes: before $, `, ", \ and newline.
func unescapeDouble(s string) string { return unescape(s, "$`\"\\\n") }

// unescape removes the backslashes before the characters of special (before
// any character when special is empty); a backslash-newline disappears.
func unescape(s, special string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (special == "" || strings.IndexByte(special, s[i+1]) >= 0) {
			i++
			if s[i] != '\n' {
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
