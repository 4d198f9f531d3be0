// Package frontmatter reads the YAML-style header of the Markdown files
// agents keep their commands and skills in: a first line "---", lines of
// "key: value" (values optionally quoted), a closing "---", then the body.
// Only flat keys are read (nested or list-continuation lines are skipped),
// which is all the formats acpd reads use. Its functions keep no state.
package frontmatter

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Split cuts text into its header's keys and values and its body (without
// the header and the blank line after it, trimmed). ok is false when text
// has no header; then body is text as it is.
func Split(text string) (keys map[string]string, body string, ok bool) {
	text = strings.TrimPrefix(strings.ReplaceAll(text, "\r\n", "\n"), "\ufeff")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return nil, text, false
	}
	front, after, ok := strings.Cut(rest, "\n---")
	if !ok {
		return nil, text, false
	}
	after = strings.TrimLeft(after, "-")
	if i := strings.IndexByte(after, '\n'); i >= 0 && strings.TrimSpace(after[:i]) == "" {
		after = after[i+1:]
	} else if i < 0 {
		after = ""
	}
	keys = map[string]string{}
	for _, line := range strings.Split(front, "\n") {
		k, v, found := strings.Cut(line, ":")
		if !found || k == "" || k[0] == ' ' || k[0] == '\t' || k[0] == '-' {
			continue
		}
		keys[strings.TrimSpace(k)] = Unquote(strings.TrimSpace(v))
	}
	return keys, strings.TrimSpace(after), true
}

// Unquote removes one pair of matching double or single quotes (double
// quotes with Go's escapes).
func Unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		if s[0] == '"' {
			if u, err := strconv.Unquote(s); err == nil {
				return u
			}
		}
		return s[1 : len(s)-1]
	}
	return s
}

// ReadFile reads the Markdown file path, a regular file of at most max
// bytes with a header, and splits it (see [Split]). Errors name the file.
// It never opens anything but a regular file (a FIFO would block).
func ReadFile(path string, max int64) (keys map[string]string, body string, err error) {
	tooBig := fmt.Errorf("%s: not a regular file of at most %d bytes", path, max)
	st, err := os.Stat(path)
	if err != nil {
		return nil, "", err
	}
	if !st.Mode().IsRegular() || st.Size() > max {
		return nil, "", tooBig
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, "", err
	}
	if int64(len(data)) > max {
		return nil, "", tooBig // it grew
	}
	keys, body, ok := Split(string(data))
	if !ok {
		return nil, "", fmt.Errorf("%s: no frontmatter", path)
	}
	return keys, body, nil
}
