package terminal

import (
	"fmt"
	"os"
	"strings"

	"acpd/internal/childenv"
)

// FilterEnv returns the entries of env ("NAME=value") that are not secrets,
// in their original order, for use as a child's base environment; a secret
// whose name is in allow (exact, or a path.Match pattern) is kept. It is
// [childenv.Filter], the one filter for every child acpd starts: see
// [childenv.IsSecret] for the names that are removed. env is not modified.
func FilterEnv(env []string, allow []string) []string {
	return childenv.Filter(env, allow)
}

// buildEnv returns the child's environment for spec: base entries (later
// duplicates win), then spec.Env replacing same-named entries, then a
// default TERM if none is set.
func buildEnv(spec Spec) ([]string, error) {
	base := spec.BaseEnv
	if base == nil {
		base = FilterEnv(os.Environ(), nil)
	}
	var (
		names []string
		vals  = make(map[string]string, len(base)+len(spec.Env)+1)
	)
	set := func(name, value string) {
		if _, ok := vals[name]; !ok {
			names = append(names, name)
		}
		vals[name] = value
	}
	for _, kv := range base {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if strings.IndexByte(kv, 0) >= 0 {
			return nil, fmt.Errorf("terminal: base environment variable %q contains NUL", name)
		}
		set(name, value)
	}
	for _, e := range spec.Env {
		if e.Name == "" || strings.ContainsAny(e.Name, "=\x00") {
			return nil, fmt.Errorf("terminal: invalid environment variable name %q", e.Name)
		}
		if strings.IndexByte(e.Value, 0) >= 0 {
			return nil, fmt.Errorf("terminal: environment variable %q: value contains NUL", e.Name)
		}
		set(e.Name, e.Value)
	}
	if _, ok := vals["TERM"]; !ok {
		set("TERM", defaultTerm)
	}
	env := make([]string, len(names))
	for i, n := range names {
		env[i] = n + "=" + vals[n]
	}
	return env, nil
}

// lookPath resolves command like a shell would, but against pathEnv (the
// child's PATH) instead of the daemon's, skipping relative entries (see
// [childenv.LookPath]); without a PATH, [DefaultPath] is searched. A command
// containing a slash is returned unchanged (it is relative to the child's
// working directory).
func lookPath(command, pathEnv string, hasPath bool) (string, error) {
	if !hasPath {
		pathEnv = DefaultPath
	}
	p, err := childenv.LookPath(command, pathEnv)
	if err != nil {
		return "", fmt.Errorf("terminal: %w", err)
	}
	return p, nil
}

// envLookup returns the value of name in env ("NAME=value" entries).
func envLookup(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if n, v, ok := strings.Cut(env[i], "="); ok && n == name {
			return v, true
		}
	}
	return "", false
}
