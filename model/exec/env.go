package exec

import (
	"slices"
	"strings"

	"acpd/internal/childenv"
)

// pluginEnv returns parent without credentials (see childenv.Filter; allow
// brings secret-looking names back) and without the names in hide (which
// go whatever allow says), followed by extra (which wins over parent for
// duplicate names, as os/exec keeps the last value).
func pluginEnv(parent, extra, allow, hide []string) []string {
	out := make([]string, 0, len(parent)+len(extra))
	for _, kv := range childenv.Filter(parent, allow) {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(hide, name) {
			continue
		}
		out = append(out, kv)
	}
	return append(out, extra...)
}
