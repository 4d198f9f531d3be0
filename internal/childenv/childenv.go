// Package childenv decides what acpd passes on to the processes it starts:
// which inherited environment variables are credentials and stay behind
// ([Filter]), and where a command is found ([LookPath]). It is the one copy
// of these rules: terminals (run_command and ACP terminals), MCP servers and
// exec model plug-ins all use it, with the same `[env] allow` list.
package childenv

import (
	"path"
	"strings"

	"acpd/internal/lazy"
)

// secretNames are secrets whatever the rules below say; most also match
// them and are listed so the documentation names them.
var secretNames = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{
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
}}

// secretSuffixes make a name secret when it ends with one of them.
var secretSuffixes = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD"}

// secretParts make a name secret when it contains one of them.
var secretParts = []string{"API_KEY", "APIKEY", "ACCESS_KEY", "PRIVATE_KEY", "SECRET", "PASSWORD"}

// secretWords make a name secret when one of its words (separated by "_",
// "-" or ".") is one of them.
var secretWords = lazy.Value[map[string]bool]{New: func() map[string]bool {
	return map[string]bool{
		"KEY": true, "KEYS": true, "APIKEY": true, "TOKEN": true, "TOKENS": true,
		"SECRET": true, "SECRETS": true, "PASSWORD": true, "PASSWORDS": true,
		"PASSWD": true, "PASS": true, "CREDENTIAL": true, "CREDENTIALS": true,
		"CREDS": true, "AUTH": true, "COOKIE": true, "COOKIES": true, "PRIVATE": true,
	}
}}

// IsSecret reports whether an environment variable's name looks like it
// holds a credential. Compared case-insensitively, a name is a secret when
//   - it ends with KEY, TOKEN, SECRET, PASSWORD or PASSWD (GITHUB_TOKEN,
//     SSH_KEY, DB_PASSWORD, PGPASSWORD);
//   - it contains API_KEY, APIKEY, ACCESS_KEY, PRIVATE_KEY, SECRET or
//     PASSWORD (AWS_SECRET_ACCESS_KEY, STRIPE_API_KEY_LIVE);
//   - one of its words (split at "_", "-" and ".") is KEY(S), APIKEY,
//     TOKEN(S), SECRET(S), PASSWORD(S), PASSWD, PASS, CREDENTIAL(S),
//     CREDS, AUTH, COOKIE(S) or PRIVATE (GITHUB_TOKENS, DOCKER_AUTH_CONFIG,
//     REDIS_CREDENTIALS, SESSION_COOKIE, SMTP_PASS, NPM_CONFIG__AUTH,
//     SSH_AUTH_SOCK);
//   - it is one of OPENAI_API_KEY, ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN,
//     GEMINI_API_KEY, GOOGLE_API_KEY, AZURE_OPENAI_API_KEY,
//     AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN,
//     GITHUB_TOKEN, GH_TOKEN, GITLAB_TOKEN, NPM_TOKEN, HF_TOKEN, MYSQL_PWD,
//     PGPASSWORD.
//
// It errs on the side of dropping: `[env] allow` brings a variable back.
func IsSecret(name string) bool {
	u := strings.ToUpper(name)
	if secretNames.Get()[u] {
		return true
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(u, s) {
			return true
		}
	}
	for _, p := range secretParts {
		if strings.Contains(u, p) {
			return true
		}
	}
	for _, w := range strings.FieldsFunc(u, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if secretWords.Get()[w] {
			return true
		}
	}
	return false
}

// Allowed reports whether name is in allow: equal to an entry (exact,
// case-sensitive) or matching one as a path.Match pattern ("GOOGLE_*";
// malformed patterns match nothing).
func Allowed(name string, allow []string) bool {
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

// Filter returns the entries of env ("NAME=value") that a child may
// inherit, in their original order: those whose name is not a secret (see
// [IsSecret]) or is [Allowed] by allow. Entries without "=" or with an
// empty name are dropped as malformed. env is not modified.
func Filter(env, allow []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if IsSecret(name) && !Allowed(name, allow) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Without returns env without the entries named in names (the variables
// the configured providers read their API keys from, whatever they are
// called) except those [Allowed] by allow; env itself when none is left
// out. env is not modified.
func Without(env, names, allow []string) []string {
	drop := map[string]bool{}
	for _, n := range names {
		if n != "" && !Allowed(n, allow) {
			drop[n] = true
		}
	}
	if len(drop) == 0 {
		return env
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); !drop[name] {
			out = append(out, kv)
		}
	}
	return out
}
