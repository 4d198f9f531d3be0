package run

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"acpd/acp"
)

// maxDiffLines bounds the lines of one edit's diff shown; the rest is
// summarised in one line.
const maxDiffLines = 40

// maxDiffLine bounds one shown line of a diff, in bytes.
const maxDiffLine = 200

// diffLine is one line of a shown diff: its text and its kind ('+', '-',
// '@' for hunk headers and file names, ' ' for context, '~' for the
// truncation note).
type diffLine struct {
	kind byte
	text string
}

// diffLines renders an ACP diff as a unified diff, at most max lines (plus a
// note of what was cut). A new file (no old text) is all additions.
func diffLines(d acp.Diff, max int) []diffLine {
	old := ""
	if d.OldText != nil {
		old = *d.OldText
	}
	name := filepath.Base(d.Path)
	u := udiff.Unified("a/"+name, "b/"+name, old, d.NewText)
	var out []diffLine
	lines := strings.Split(strings.TrimSuffix(u, "\n"), "\n")
	added, removed := 0, 0
	for _, l := range lines {
		if l == "" {
			continue
		}
		k := l[0]
		switch {
		case strings.HasPrefix(l, "---"), strings.HasPrefix(l, "+++"):
			continue // the file is named by the tool call's title
		case k == '+':
			added++
		case k == '-':
			removed++
		case k == '@':
		case k == '\\':
			continue // "\ No newline at end of file"
		default:
			k = ' '
		}
		if len(out) < max {
			if len(l) > maxDiffLine {
				l = l[:maxDiffLine] + "…"
			}
			out = append(out, diffLine{kind: k, text: strings.ReplaceAll(l, "\t", "    ")})
		}
	}
	if shown := len(out); shown < countShown(lines) {
		out = append(out, diffLine{kind: '~', text: fmt.Sprintf("… %d more lines (+%d -%d in all)", countShown(lines)-shown, added, removed)})
	}
	return out
}

func countShown(lines []string) int {
	n := 0
	for _, l := range lines {
		if l == "" || strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++") || l[0] == '\\' {
			continue
		}
		n++
	}
	return n
}
