package permissions

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"acpd/internal/glob"
	"acpd/internal/lazy"
)

// commandPattern is a compiled run_command rule Match.
type commandPattern struct {
	any   bool           // empty Match: every simple command
	words []glob.Pattern // one per word
	rest  bool           // a trailing bare * matches any remaining words
}

// compileCommandPattern compiles a command pattern written as a single shell
// simple command made of literal words (see the package documentation).
func compileCommandPattern(s string) (commandPattern, error) {
	if strings.TrimSpace(s) == "" {
		return commandPattern{any: true}, nil
	}
	f, err := parseBashChecked(s)
	if err != nil {
		return commandPattern{}, fmt.Errorf("command pattern %q %w", s, err)
	}
	if len(f.Stmts) != 1 {
		return commandPattern{}, fmt.Errorf("command pattern %q must be a single simple command (no ;, &&, ||, | or newlines)", s)
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || st.Disown || len(st.Redirs) > 0 ||
		len(call.Assigns) > 0 || len(call.Args) == 0 {
		return commandPattern{}, fmt.Errorf("command pattern %q must be a single simple command made of words (no assignments, redirections or compound commands)", s)
	}
	var p commandPattern
	for i, w := range call.Args {
		if i == len(call.Args)-1 && isBareStar(w) {
			p.rest = true
			break
		}
		g, err := wordGlob(w)
		if err != nil {
			return commandPattern{}, fmt.Errorf("command pattern %q: %w", s, err)
		}
		pat, err := glob.Compile(g)
		if err != nil {
			return commandPattern{}, fmt.Errorf("command pattern %q: word %q is not a valid glob: %w", s, g, err)
		}
		p.words = append(p.words, pat)
	}
	return p, nil
}

func isBareStar(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	lit, ok := w.Parts[0].(*syntax.Lit)
	return ok && lit.Value == "*"
}

// wordGlob converts one pattern word into a glob: unquoted text
// keeps its glob meaning (backslash escapes included), quoted text is literal.
func wordGlob(w *syntax.Word) (string, error) {
	var b strings.Builder
	for _, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", errors.New("$'...' strings are not supported in patterns")
			}
			b.WriteString(globEscape(p.Value))
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", errors.New(`$"..." strings are not supported in patterns`)
			}
			for _, dp := range p.Parts {
				lit, ok := dp.(*syntax.Lit)
				if !ok {
					return "", errors.New("pattern words must be literal (no $, ` or other expansions)")
				}
				b.WriteString(globEscape(unescapeDouble(lit.Value)))
			}
		default:
			return "", errors.New("pattern words must be literal (no $, ` or other expansions)")
		}
	}
	return b.String(), nil
}

// matchExact reports whether an allow rule's pattern matches a simple command.
// Only fully literal commands match; words are compared as written.
func (p commandPattern) matchExact(words []cmdWord) bool {
	for _, w := range words {
		if w.unknown {
			return false
		}
	}
	if p.any {
		return len(words) > 0
	}
	for i, g := range p.words {
		if i >= len(words) {
			return false
		}
		if !g.Match(words[i].text) {
			return false
		}
	}
	return p.rest || len(words) == len(p.words)
}

// matchBroad reports whether a deny or ask pattern could apply to a simple
// command. It errs on the side of matching: the first pattern word also
// matches a command name's base name (/bin/rm as rm); when the command is a
// wrapper (sudo, xargs, find, ...) the pattern is tried against every suffix
// of its words; and when unknownAbsorbs is set a non-literal word matches any
// number of pattern words.
func (p commandPattern) matchBroad(words []cmdWord, unknownAbsorbs bool) bool {
	if len(words) == 0 {
		return false
	}
	if p.any {
		return true
	}
	starts := 1
	if !words[0].unknown && wrapperLike(words[0].text) {
		starts = len(words)
	}
	for k := 0; k < starts; k++ {
		if p.matchFrom(words[k:], unknownAbsorbs) {
			return true
		}
	}
	return false
}

// matchFrom matches the whole pattern against words with a memoised search;
// its cost is O(len(p.words) * len(words)).
func (p commandPattern) matchFrom(words []cmdWord, unknownAbsorbs bool) bool {
	np, nw := len(p.words), len(words)
	// memo[i*(nw+1)+j]: 0 unknown, 1 false, 2 true.
	memo := make([]uint8, (np+1)*(nw+1))
	var m func(i, j int) bool
	m = func(i, j int) bool {
		idx := i*(nw+1) + j
		if memo[idx] != 0 {
			return memo[idx] == 2
		}
		var r bool
		switch {
		case i == np:
			r = p.rest || j == nw || (unknownAbsorbs && allUnknown(words[j:]))
		case j == nw:
			r = false
		case words[j].unknown:
			// A non-literal word expands to zero or more words.
			r = unknownAbsorbs && (m(i, j+1) || m(i+1, j))
		default:
			ok := p.words[i].Match(words[j].text)
			if !ok && i == 0 && !strings.Contains(p.words[i].String(), "/") && strings.Contains(words[j].text, "/") {
				ok = p.words[i].Match(path.Base(words[j].text))
			}
			r = ok && m(i+1, j+1)
		}
		if r {
			memo[idx] = 2
		} else {
			memo[idx] = 1
		}
		return r
	}
	return m(0, 0)
}

func allUnknown(ws []cmdWord) bool {
	for _, w := range ws {
		if !w.unknown {
			return false
		}
	}
	return true
}

// formatCommandPattern renders literal words as a command pattern that
// matches exactly these words: every word that is not made of plain
// characters is single-quoted, so no glob character keeps its meaning and a
// final "*" word is never the match-the-rest wildcard.
func formatCommandPattern(words []string) string {
	quoted := make([]string, len(words))
	for i, w := range words {
		quoted[i] = shellQuote(w)
	}
	return strings.Join(quoted, " ")
}

// shellKeywords are words the parser treats specially in command position
// when unquoted.
var shellKeywords = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{
		"if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true, "done": true,
		"case": true, "esac": true, "while": true, "until": true, "for": true, "in": true,
		"select": true, "function": true, "time": true, "coproc": true, "declare": true,
		"export": true, "local": true, "readonly": true, "typeset": true, "nameref": true, "let": true,
	}
}}

// shellQuote quotes s so that bash (and the pattern parser) reads it back as
// exactly one literal word. Plain words stay unquoted; "=" is not plain, so
// that a first word is never read as an assignment.
func shellQuote(s string) string {
	if s != "" && !shellKeywords.Get()[s] && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+:,./-", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// globEscape returns a glob matching exactly s.
func globEscape(s string) string { return glob.Escape(s) }

// pathGlob is a compiled file-tool rule Match.
type pathGlob struct {
	any  bool
	abs  bool         // matched against the absolute path
	glob glob.Pattern // matched against the path without a leading "/"
	// root reports that the glob matches the root itself (Rel "."): it is
	// made of "**" segments only.
	root bool
}

func compilePathGlob(s string) (pathGlob, error) {
	if s == "" {
		return pathGlob{any: true}, nil
	}
	s = windowsAbsPattern(s)
	g := pathGlob{abs: strings.HasPrefix(s, "/"), root: true}
	body := strings.TrimPrefix(s, "/")
	if body == "" {
		return pathGlob{}, fmt.Errorf("path pattern %q matches nothing; use \"/**\" for every absolute path", s)
	}
	for _, seg := range strings.Split(body, "/") {
		switch seg {
		case "":
			return pathGlob{}, fmt.Errorf("path pattern %q has an empty segment (use dir/** for a directory's contents)", s)
		case ".", "..":
			return pathGlob{}, fmt.Errorf("path pattern %q may not contain %q segments", s, seg)
		}
		if seg != "**" {
			g.root = false
		}
	}
	var err error
	if g.glob, err = glob.Compile(body); err != nil {
		return pathGlob{}, fmt.Errorf("path pattern %q is not a valid glob: %w", s, err)
	}
	return g, nil
}

// match reports whether the glob matches a slash-separated path: rel (relative,
// "." for the root itself) or abs (absolute, starting with "/").
func (g pathGlob) match(rel, abs string) bool {
	if g.any {
		return true
	}
	target := rel
	if g.abs {
		target = abs
	}
	if target == "" {
		return false
	}
	target = strings.TrimPrefix(target, "/")
	if target == "." || target == "" {
		return g.root
	}
	return g.glob.Match(target)
}

// formatPathPattern renders a slash path (relative, or absolute with a
// leading "/") as a glob matching exactly that path.
func formatPathPattern(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = globEscape(s)
	}
	return strings.Join(segs, "/")
}

// windowsAbsPattern puts a pattern written as a Windows absolute path
// ("C:/Users/me/**" or `C:\Users\me\**`) in the form absolute paths are
// matched in (slashAbs: "/C:/Users/me/**"), whatever OS reads the rules:
// read as a relative pattern it would match nothing, and a deny rule would
// fail open. Backslashes are separators only in a pattern that starts with
// a drive letter and a backslash. Drive letters are compared upper-case.
func windowsAbsPattern(s string) string {
	if !hasDrive(s) || (s[2] != '/' && s[2] != '\\') {
		return s
	}
	if s[2] == '\\' {
		s = strings.ReplaceAll(s, `\`, "/")
	}
	return "/" + strings.ToUpper(s[:1]) + s[1:]
}

// hasDrive reports whether s starts with a drive letter and a colon
// followed by more.
func hasDrive(s string) bool {
	return len(s) >= 3 && s[1] == ':' && 'a' <= s[0]|0x20 && s[0]|0x20 <= 'z'
}

// slashAbs renders an absolute OS path in the form absolute path globs match:
// slash-separated with a leading "/".
func slashAbs(abs string) string {
	s := filepath.ToSlash(filepath.Clean(abs))
	if hasDrive(s) {
		s = strings.ToUpper(s[:1]) + s[1:]
	}
	if !strings.HasPrefix(s, "/") {
		s = "/" + s
	}
	return s
}
