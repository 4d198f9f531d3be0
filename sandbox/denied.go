package sandbox

import "strings"

// denialSigns are what commands print when the sandbox refuses them
// something: Landlock's EACCES, the read-only mounts' EROFS, EPERM, and the
// network namespace's missing routes and name servers.
var denialSigns = []string{
	"Permission denied",
	"Read-only file system",
	"Operation not permitted",
	"Network is unreachable",
	"Temporary failure in name resolution",
	"Could not resolve host",
	"Name or service not known",
}

// maxDenialLine bounds the line Denied returns.
const maxDenialLine = 300

// Denied returns the first line of a failed sandboxed command's output that
// looks like a sandbox denial, or "". It is a heuristic (the kernel does not
// tell the parent what was denied) over text the command controls: it
// decides only whether the model is told how to request running the
// command outside the sandbox, never whether anyone is asked.
func Denied(output string) string {
	for line := range strings.Lines(output) {
		for _, s := range denialSigns {
			if strings.Contains(line, s) {
				line = strings.TrimSpace(line)
				if len(line) > maxDenialLine {
					line = line[:maxDenialLine] + "…"
				}
				return line
			}
		}
	}
	return ""
}
