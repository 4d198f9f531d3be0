package exec

import (
	"slices"
	"strings"
)

// secretWords are the "_"-separated words of variable names that hold
// credentials.
var secretWords = map[string]bool{
	"KEY": true, "KEYS": true, "APIKEY": true, "TOKEN": true, "TOKENS": true,
	"SECRET": true, "SECRETS": true, "PASSWORD": true, "PASSWORDS": true,
	"PASSWD": true, "PASS": true, "CREDENTIAL": true, "CREDENTIALS": true,
	"CREDS": true, "AUTH": true, "COOKIE": true, "COOKIES": true, "PRIVATE": true,
}

// secretName reports whether an environment variable's name looks like it
// holds a credential. It errs on the side of dropping.
func secretName(name string) bool {
	upper := strings.ToUpper(name)
	for _, suffix := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD"} {
		if strings.HasSuffix(upper, suffix) {
			return true
		}
	}
	for _, w := range strings.FieldsFunc(upper, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		if secretWords[w] {
			return true
		}
	}
	return false
}

// pluginEnv returns parent without credentials, followed by extra (which
// wins over parent for duplicate names, as os/exec keeps the last value).
func pluginEnv(parent, extra, hide []string) []string {
	out := make([]string, 0, len(parent)+len(extra))
	for _, kv := range parent {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || secretName(name) || slices.Contains(hide, name) {
			continue
		}
		out = append(out, kv)
	}
	return append(out, extra...)
}
