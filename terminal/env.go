package terminal

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// secretNames are removed by FilterEnv. Most also match the patterns below;
// they are listed so the documentation names them.
var secretNames = map[string]bool{
	"OPENAI_API_KEY":        true,
	"ANTHROPIC_API_KEY":     true,
	"ANTHROPIC_AUTH_TOKEN":  true,
	"GEMINI_API_KEY":        true,
	"GOOGLE_API_KEY":        true,
	"AZURE_OPENAI_API_KEY":  true,
	"AWS_ACCESS_KEY_ID":     true,
	"AWS_SECRET_ACCESS_KEY": true,
	"AWS_SESSION_TOKEN":     true,
	"GITHUB_TOKEN":          true,
	"GH_TOKEN":              true,
	"GITLAB_TOKEN":          true,
	"NPM_TOKEN":             true,
	"HF_TOKEN":              true,
	"MYSQL_PWD":             true,
	"PGPASSWORD":            true,
}

// secretWords make a variable secret when its name equals one of them or
// ends with "_" followed by one of them.
var secretWords = []string{"TOKEN", "SECRET", "KEY", "PASSWORD", "PASSWD"}

// secretParts make a variable secret when its name contains one of them.
var secretParts = []string{"API_KEY", "APIKEY", "ACCESS_KEY", "PRIVATE_KEY", "SECRET", "PASSWORD"}

// FilterEnv returns the entries of env ("NAME=value") that are not secrets,
// in their original order, for use as a child's base environment. env is not
// modified.
//
// A name is a secret when, compared case-insensitively,
//   - it equals TOKEN, SECRET, KEY, PASSWORD or PASSWD, or ends with one of
//     them preceded by "_" (e.g. GITHUB_TOKEN, CLIENT_SECRET, SSH_KEY,
//     OPENAI_API_KEY, DB_PASSWORD);
//   - it contains API_KEY, APIKEY, ACCESS_KEY, PRIVATE_KEY, SECRET or
//     PASSWORD (e.g. AWS_SECRET_ACCESS_KEY, AWS_ACCESS_KEY_ID, PGPASSWORD);
//   - it is one of OPENAI_API_KEY, ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN,
//     GEMINI_API_KEY, GOOGLE_API_KEY, AZURE_OPENAI_API_KEY,
//     AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,
//     GITHUB_TOKEN, GH_TOKEN, GITLAB_TOKEN, NPM_TOKEN, HF_TOKEN, MYSQL_PWD,
//     PGPASSWORD.
//
// A secret is kept anyway when its exact (case-sensitive) name is in allow or
// matches a pattern in allow (path.Match syntax, e.g. "GOOGLE_*"; malformed
// patterns match nothing). Entries without "=" or with an empty name are
// dropped as malformed.
func FilterEnv(env []string, allow []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if isSecretName(name) && !allowed(name, allow) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func isSecretName(name string) bool {
	u := strings.ToUpper(name)
	if secretNames[u] {
		return true
	}
	for _, w := range secretWords {
		if u == w || strings.HasSuffix(u, "_"+w) {
			return true
		}
	}
	for _, p := range secretParts {
		if strings.Contains(u, p) {
			return true
		}
	}
	return false
}

func allowed(name string, allow []string) bool {
	for _, a := range allow {
		if a == name {
			return true
		}
		if ok, err := path.Match(a, name); err == nil && ok {
			return true
		}
	}
	return false
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
// child's PATH) instead of the daemon's, skipping relative entries. A
// command containing a slash is returned unchanged (it is relative to the
// child's working directory).
func lookPath(command, pathEnv string, hasPath bool) (string, error) {
	if strings.Contains(command, "/") {
		return command, nil
	}
	if !hasPath {
		pathEnv = DefaultPath
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, command)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("terminal: %q: %w", command, exec.ErrNotFound)
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
