package tools

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"unicode/utf8"

	"acpd/internal/tailbuf"
	"acpd/terminal"
	"acpd/tools/clip"
)

// savedOutputCap bounds the file a command's whole output is saved to; the
// note says so when the output was longer.
const savedOutputCap = 64 << 20

// outputCollector takes a local command's whole output as it is read (it
// is the terminal's Spec.Tee), renders it, and keeps what the model is
// shown: the first clip.OutputBytes of the text, its last half of that,
// and its size and line count. Once the text outgrows what the model is
// shown, all of it goes to a file in the session's output directory, up
// to savedOutputCap (whole lines). It is safe for concurrent use.
type outputCollector struct {
	jobs *Jobs
	cap  int64 // savedOutputCap but in tests

	mu     sync.Mutex
	render *terminal.Renderer
	closed bool
	// The rendered text, as text keeps it:
	head  []byte          // the first clip.OutputBytes bytes
	tail  *tailbuf.Buffer // the last clip.OutputBytes/2 bytes
	size  int64           // bytes of text
	lines int64           // line feeds in the text
	last  byte            // the text's last byte
	// The saved file: f while being written, name once made; savedSize
	// and savedLines (whole lines) are what it holds. full: the cap was
	// reached. saveErr: the file could not be made or written (removed).
	f                     *os.File
	name                  string
	savedSize, savedLines int64
	full                  bool
	saveErr               error
}

func newOutputCollector(jobs *Jobs) *outputCollector {
	c := &outputCollector{jobs: jobs, cap: savedOutputCap, tail: tailbuf.New(clip.OutputBytes / 2)}
	c.render = terminal.NewRenderer(textWriter{c})
	return c
}

// Write takes raw terminal output.
func (c *outputCollector) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		_, _ = c.render.Write(p)
	}
	return len(p), nil
}

// textWriter receives the rendered text; c.mu is held.
type textWriter struct{ c *outputCollector }

func (w textWriter) Write(p []byte) (int, error) {
	w.c.text(p)
	return len(p), nil
}

func (c *outputCollector) text(p []byte) {
	if len(p) == 0 {
		return
	}
	if n := clip.OutputBytes - len(c.head); n > 0 {
		c.head = append(c.head, p[:min(n, len(p))]...)
	}
	_, _ = c.tail.Write(p)
	c.size += int64(len(p))
	c.lines += int64(bytes.Count(p, []byte{'\n'}))
	c.last = p[len(p)-1]
	if c.size <= clip.OutputBytes || c.saveErr != nil || c.full {
		return
	}
	if c.f == nil {
		f, err := c.jobs.outputFile()
		if err != nil {
			c.saveErr = err
			return
		}
		c.f, c.name = f, f.Name()
		c.jobs.addSaved(c.name)
		// What came before p is all in head (size was within it).
		c.save(c.head[:c.size-int64(len(p))])
	}
	c.save(p)
}

// save appends p to the file, up to the cap in whole lines.
func (c *outputCollector) save(p []byte) {
	if c.saveErr != nil || c.full {
		return
	}
	if room := c.cap - c.savedSize; int64(len(p)) > room {
		p = p[:room]
		i := bytes.LastIndexByte(p, '\n')
		p = p[:i+1] // nothing when no line ends within the room
		c.full = true
	}
	if _, err := c.f.Write(p); err != nil {
		c.saveErr = err
		return
	}
	c.savedSize += int64(len(p))
	c.savedLines += int64(bytes.Count(p, []byte{'\n'}))
}

// finish renders what the renderer held back, closes the file (removing it
// when it could not be written) and makes later output ignored.
func (c *outputCollector) finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return
	}
	_ = c.render.Close()
	c.closed = true
	if c.f != nil {
		if err := c.f.Close(); err != nil && c.saveErr == nil {
			c.saveErr = err
		}
		if c.saveErr != nil {
			_ = os.Remove(c.name)
		}
		c.f = nil
	}
}

// lineCount is the number of lines of a text of size bytes with lf line
// feeds ending in last.
func lineCount(size, lf int64, last byte) int64 {
	if size > 0 && last != '\n' {
		lf++
	}
	return lf
}

// report is the output as the model reads it: the whole text when short,
// else its first and last lines with one note between them saying which
// lines were cut and where the whole output is. running: the command still
// runs (a background job), so the text so far is shown, its open row too,
// else finish was called. cut reports that lines were left out.
func (c *outputCollector) report(running bool) (text string, cut bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	open := ""
	if running && !c.closed {
		open = c.render.Row()
	}
	size, last := c.size+int64(len(open)), c.last
	if open != "" {
		last = open[len(open)-1]
	}
	if size <= clip.OutputBytes {
		return string(c.head) + open, false
	}
	half := clip.OutputBytes / 2
	head := string(c.head[:half])
	partial := false // the head or the tail is part of a longer line
	if i := strings.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i+1]
	} else {
		head, partial = cutRune(head), true
	}
	tail, _ := c.tail.Snapshot(true)
	tail += open
	tailWhole := true
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)-1 {
		tail = tail[i+1:]
	} else {
		tailWhole, partial = false, true
	}
	total := lineCount(size, c.lines, last)
	// from and to are the first and the last line not shown whole.
	from := int64(strings.Count(head, "\n")) + 1
	tailLines := lineCount(int64(len(tail)), int64(strings.Count(tail, "\n")), last)
	if !tailWhole {
		tailLines--
	}
	to := total - tailLines
	cutBytes := size - int64(len(head)) - int64(len(tail))
	var b strings.Builder
	b.WriteString(head)
	if !strings.HasSuffix(head, "\n") {
		b.WriteByte('\n')
	}
	inPart := ""
	if partial {
		inPart = " (a long line in part)"
	}
	fmt.Fprintf(&b, "[… %s (%d bytes) cut from the middle of the output, lines %d-%d of %d%s …", plural(to-from+1, "line"), cutBytes, from, to, total, inPart)
	whole := "The whole output"
	if running {
		whole = "The output so far"
	}
	switch {
	case running && c.name != "" && c.saveErr == nil && !c.full:
		fmt.Fprintf(&b, " %s is saved in %s: read it with read_file (offset %d) or search it with grep; it has %s (%d bytes) and grows while the job runs.]\n", whole, c.name, from, plural(total, "line"), size)
	case c.saveErr == nil && c.name == "": // only the open row took it past the bound
		fmt.Fprintf(&b, " %s has %s (%d bytes); it is saved to a file once it grows.]\n", whole, plural(total, "line"), size)
	case c.saveErr != nil:
		fmt.Fprintf(&b, " %s could not be saved (%v); it has %s (%d bytes).]\n", whole, c.saveErr, plural(total, "line"), size)
	case c.full:
		fmt.Fprintf(&b, " The first %d lines of the output are saved in %s: read them with read_file (offset %d) or search them with grep; the output has %s (%d bytes), more than the %d MiB a saved output holds, so the rest is lost.]\n",
			c.savedLines, c.name, from, plural(total, "line"), size, c.cap>>20)
	default:
		fmt.Fprintf(&b, " The whole output is saved in %s: read it with read_file (offset %d) or search it with grep; it has %s (%d bytes).]\n", c.name, from, plural(total, "line"), size)
	}
	b.WriteString(tail)
	return b.String(), true
}

// cutRune drops an incomplete UTF-8 character at the end of s.
func cutRune(s string) string {
	for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			if !utf8.FullRuneInString(s[i:]) {
				return s[:i]
			}
			break
		}
	}
	return s
}

// plural is "1 line", "2 lines".
func plural(n int64, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
