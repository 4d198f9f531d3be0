package permissions

import (
	"path"
	"slices"
	"strings"

	"acpd/internal/lazy"
)

// GitWrite reports whether the bash command line runs a git command that
// writes the repository (its index, objects, refs or configuration: git
// add, commit, checkout, fetch, config x y, ...), anywhere in the line:
// behind wrappers (env, sudo, xargs) and in strings handed to a shell or
// eval too. It returns the first such command as "git <subcommand>". A line
// that does not parse, or a git whose subcommand is not a literal word,
// counts as writing: the caller asks before running it where git cannot
// write. Read-only uses (status, log, diff, show, branch or tag listings,
// config --get) do not.
func GitWrite(line string) (string, bool) {
	a := analyzeCommand(line)
	for _, c := range slices.Concat(a.cmds, a.nested) {
		if len(c.words) == 1 && c.words[0].unknown && c.words[0].text == unknownCommand.words[0].text {
			if strings.Contains(line, "git") {
				return "git (in a command line that cannot be analysed)", true
			}
			continue
		}
		for i, w := range c.words {
			if w.unknown {
				break
			}
			if path.Base(w.text) == "git" {
				if sub, ok := gitWrites(c.words[i+1:]); ok {
					return sub, true
				}
				break
			}
			if i == 0 && !wrapperLike(w.text) {
				break
			}
		}
	}
	return "", false
}

// gitValueOptions are git's global options that take the next word as
// their value.
var gitValueOptions = []string{"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--exec-path"}

// gitAlwaysWrites are the subcommands that write the repository whatever
// their arguments.
var gitAlwaysWrites = []string{
	"add", "am", "commit", "rm", "mv", "reset", "checkout", "switch", "merge", "rebase",
	"cherry-pick", "revert", "pull", "fetch", "push", "gc", "prune", "repack", "pack-refs",
	"maintenance", "update-index", "update-ref", "filter-branch", "filter-repo", "replace",
	"commit-tree", "mktag", "mktree", "read-tree", "write-tree", "fast-import", "sparse-checkout",
	"bisect", "lfs", "annex", "prune-packed", "commit-graph", "multi-pack-index", "index-pack",
	"unpack-objects", "merge-file", "mergetool", "clean", "init",
}

// gitListings are the subcommands that write unless their arguments are a
// read-only form: the words that, first after the subcommand (or anywhere,
// for options), keep them read-only. No argument at all is read-only too.
var gitListings = lazy.Value[map[string][]string]{New: func() map[string][]string {
	return map[string][]string{
		"branch":       {"-l", "--list", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--show-current", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--format", "--sort", "--column", "--no-column", "--color", "--no-color", "-i", "--ignore-case"},
		"tag":          {"-l", "--list", "-n", "--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--format", "--sort", "--column", "--no-column", "-v", "--verify", "-i", "--ignore-case"},
		"stash":        {"list", "show"},
		"worktree":     {"list"},
		"notes":        {"list", "show"},
		"remote":       {"-v", "--verbose", "show", "get-url"},
		"submodule":    {"status", "summary", "foreach"},
		"reflog":       {"show", "exists"},
		"symbolic-ref": {"-q", "--quiet", "--short"},
		"config":       {"get", "list", "-l", "--list", "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "--show-origin", "--show-scope", "--name-only", "-z", "--null", "--includes", "--no-includes", "--global", "--system", "--local", "--file", "-f", "--blob", "--type", "--bool", "--int", "--path", "--expiry-date", "--default"},
		"restore":      nil, // writes the index only with --staged (below)
		"apply":        nil, // writes the index only with --index, --cached or -3
		"hash-object":  nil, // writes objects only with -w
	}
}}

// gitWrites judges the words after "git".
func gitWrites(args []cmdWord) (string, bool) {
	i := 0
	for i < len(args) {
		a := args[i]
		if a.unknown {
			return "git (with a subcommand that is not a literal word)", true
		}
		if !strings.HasPrefix(a.text, "-") {
			break
		}
		if slices.Contains(gitValueOptions, a.text) {
			i++
		}
		i++
	}
	if i >= len(args) {
		return "", false
	}
	sub, rest := args[i].text, args[i+1:]
	name := "git " + sub
	if slices.Contains(gitAlwaysWrites, sub) {
		return name, true
	}
	ro, listing := gitListings.Get()[sub]
	if !listing {
		return "", false // status, log, diff, show, grep, ls-files, blame, clone, ...
	}
	var words []string
	for _, w := range rest {
		if w.unknown {
			return name, true
		}
		words = append(words, w.text)
	}
	switch sub {
	case "restore":
		return name, hasAny(words, "--staged", "-S", "-SW", "-WS")
	case "apply":
		return name, hasAny(words, "--index", "--cached", "-3", "--3way")
	case "hash-object":
		return name, hasAny(words, "-w")
	case "symbolic-ref":
		return name, positional(words) > 1
	case "config":
		// git config NAME (one operand) reads; NAME VALUE, --unset,
		// --add, --replace-all, --rename-section, set, unset, edit write.
		if len(words) > 0 && slices.Contains([]string{"set", "unset", "edit", "rename-section", "remove-section"}, words[0]) {
			return name, true
		}
		for _, w := range words {
			if strings.HasPrefix(w, "-") && !slices.Contains(ro, strings.SplitN(w, "=", 2)[0]) {
				return name, true
			}
		}
		if len(words) > 0 && slices.Contains(ro, words[0]) && !strings.HasPrefix(words[0], "-") {
			return "", false // get, list
		}
		return name, positional(words) > 1
	}
	if len(words) == 0 {
		return name, sub == "stash" // git stash is git stash push
	}
	for _, w := range words {
		flag := strings.SplitN(w, "=", 2)[0]
		if slices.Contains(ro, flag) {
			return "", false
		}
	}
	return name, true
}

func hasAny(words []string, flags ...string) bool {
	for _, w := range words {
		if slices.Contains(flags, strings.SplitN(w, "=", 2)[0]) {
			return true
		}
	}
	return false
}

// positional counts the words that are not options.
func positional(words []string) int {
	n := 0
	for _, w := range words {
		if !strings.HasPrefix(w, "-") {
			n++
		}
	}
	return n
}
