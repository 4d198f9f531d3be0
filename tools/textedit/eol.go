package textedit

import "strings"

// doc is a file's content with its line endings and byte order mark taken
// out, so that matching sees "\n" only.
type doc struct {
	text string
	bom  bool
	// crlf reports that every "\n" of the file was preceded by "\r" and
	// is written back so. A file with mixed endings is matched as it is,
	// "\r" included (the line matchers ignore a trailing "\r").
	crlf bool
}

func decode(content string) doc {
	var d doc
	if strings.HasPrefix(content, "\ufeff") {
		d.bom, content = true, content[len("\ufeff"):]
	}
	if n := strings.Count(content, "\n"); n > 0 && strings.Count(content, "\r\n") == n {
		d.crlf, content = true, strings.ReplaceAll(content, "\r\n", "\n")
	}
	d.text = content
	return d
}

func (d doc) encode(text string) string {
	if d.crlf {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	if d.bom {
		text = "\ufeff" + text
	}
	return text
}

// lf normalises a model-supplied string's line endings.
func lf(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
