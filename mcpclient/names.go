package mcpclient

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// maxNameLen is the longest tool name model APIs accept (Anthropic and OpenAI
// both cap function names at 64 characters of [A-Za-z0-9_-]).
const maxNameLen = 64

// toolKey identifies a tool by its server's name and its own.
type toolKey struct{ server, tool string }

// qualifiedNames assigns each key its model-facing name, in order. Plain
// names ("mcp__<server>__<tool>", sanitized) are kept when they fit and are
// unique; the others are shortened to leave room for '_' and 8 hex digits of
// a hash of the exact server and tool names. Keys earlier in the slice win a
// plain name, so existing tools keep their names when later ones are added.
func qualifiedNames(keys []toolKey) []string {
	return uniqueNames(keys, maxNameLen, func(k toolKey) string {
		return "mcp__" + serverPart(k.server) + "__" + sanitize(k.tool)
	})
}

// uniqueNames gives each key plain(key) when it is at most max bytes and not
// taken by an earlier key, and otherwise a name shortened to make room for
// '_' and 8 hex digits of a hash of the exact server and tool names (with a
// counter in the unlikely case that collides too).
func uniqueNames(keys []toolKey, max int, plain func(toolKey) string) []string {
	out := make([]string, len(keys))
	plains := make([]string, len(keys))
	taken := make(map[string]bool, len(keys))
	// First pass: plain names that fit; of identical plain names only the
	// first keeps it.
	for i, k := range keys {
		plains[i] = plain(k)
		if len(plains[i]) <= max && !taken[plains[i]] {
			out[i] = plains[i]
			taken[plains[i]] = true
		}
	}
	// Second pass: everything else gets a hashed suffix.
	for i, k := range keys {
		if out[i] != "" {
			continue
		}
		sum := sha256.Sum256([]byte(k.server + "\x00" + k.tool))
		suffix := "_" + hex.EncodeToString(sum[:4])
		base := plains[i]
		if len(base) > max-len(suffix) {
			base = base[:max-len(suffix)]
		}
		name := base + suffix
		for n := 2; taken[name]; n++ {
			tag := "_" + strconv.Itoa(n)
			b := base
			if len(b) > max-len(suffix)-len(tag) {
				b = b[:max-len(suffix)-len(tag)]
			}
			name = b + suffix + tag
		}
		out[i] = name
		taken[name] = true
	}
	return out
}

// sanitize replaces every byte outside [A-Za-z0-9_-] with '_'. Multi-byte
// characters become one '_' per byte, so the result's length is predictable.
func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
			b.WriteByte(c)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// serverPart is the server's name in qualified names: sanitized, with runs
// of '_' collapsed, so it never contains the "__" separator and
// "mcp__<server>__<tool>" splits at its first "__" after the prefix (server
// "a__b" with tool "c" and server "a" with tool "b__c" get different names,
// and a remembered permission for one can never apply to the other).
func serverPart(server string) string {
	s := sanitize(server)
	for strings.Contains(s, "__") {
		s = strings.ReplaceAll(s, "__", "_")
	}
	// A trailing '_' would join the separator into "___".
	if s = strings.TrimRight(s, "_"); s == "" {
		s = "x"
	}
	return s
}
