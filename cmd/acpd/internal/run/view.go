package run

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/term"
	"github.com/muesli/termenv"

	"acpd/acp"
)

// liveView is the text output on a terminal (stderr), in the style of the
// agents people watch: the answer streams; below it a live region, redrawn
// in place, holds the running tool calls (a spinner each, and a command's
// last output lines), the plan as a checklist, the thought being thought
// (dimmed, one line) and a status line with a spinner. Finished tool calls
// (✓/✗, with the end of a command's output, or all of it when it failed),
// edits as coloured unified diffs, folded thoughts and the summary are
// printed above the region and stay.
//
// Styling is lipgloss's (told the colour profile by the environment);
// the spinner has bubbles' MiniDot frames; cursor movement is x/ansi's. The view's
// ticker goroutine is owned by start/stop.
//
// When stdout is the same terminal, the answer is written to it a line at
// a time (the line being written is shown in the live region), so the
// region never lands in the middle of the answer.
type liveView struct {
	r         *runner
	stdout    io.Writer
	stderr    io.Writer
	textToTTY bool
	frames    []string
	tick      time.Duration
	st        viewStyles

	mu        sync.Mutex
	frame     int
	live      int // lines of the live region on the screen
	partial   string
	midLine   bool // stdout (not a terminal) does not end with a newline
	lastMsg   acp.MessageID
	sinceText bool
	thinking  bool
	thought   strings.Builder
	running   []*liveTool
	plan      []acp.PlanEntry
	paused    bool // a question is on the screen
	stopped   bool
	began     time.Time

	stopc chan struct{}
	wg    sync.WaitGroup
}

// spinnerFrames are bubbles' spinner.MiniDot frames, at its 12 per second.
// bubbles itself is not imported: it brings bubbletea, whose init asks the
// terminal for its background colour and waits up to 5 s for the answer,
// in every acpd process whose stdout is a terminal, including the commands
// acpd runs on its own PTYs.
var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

// SpinnerFrames are the frames of the live view's spinner.
func SpinnerFrames() []string { return slices.Clone(spinnerFrames) }

// liveTool is a tool call shown in the live region.
type liveTool struct {
	info toolInfo
}

type viewStyles struct {
	dim, ok, fail, add, del, hunk, bold, warn lipgloss.Style
}

func newLiveView(r *runner, stdoutTTY bool) output {
	re := lipgloss.NewRenderer(r.stderr)
	// Set what lipgloss would otherwise ask the terminal (OSC 11 and a
	// cursor report, whose answers would arrive on stdin).
	re.SetColorProfile(ColorProfile())
	re.SetHasDarkBackground(true)
	return &liveView{
		r:         r,
		stdout:    r.stdout,
		stderr:    r.stderr,
		textToTTY: stdoutTTY,
		frames:    spinnerFrames,
		tick:      time.Second / 12,
		st: viewStyles{
			dim:  re.NewStyle().Faint(true),
			ok:   re.NewStyle().Foreground(lipgloss.Color("2")),
			fail: re.NewStyle().Foreground(lipgloss.Color("1")),
			add:  re.NewStyle().Foreground(lipgloss.Color("2")),
			del:  re.NewStyle().Foreground(lipgloss.Color("1")),
			hunk: re.NewStyle().Foreground(lipgloss.Color("6")),
			bold: re.NewStyle().Bold(true),
			warn: re.NewStyle().Foreground(lipgloss.Color("3")),
		},
		began: time.Now(),
		stopc: make(chan struct{}),
	}
}

func (v *liveView) start() {
	v.mu.Lock()
	v.began = time.Now()
	v.mu.Unlock()
	v.wg.Add(1)
	go func() {
		defer v.wg.Done()
		t := time.NewTicker(v.tick)
		defer t.Stop()
		for {
			select {
			case <-v.stopc:
				return
			case <-t.C:
			}
			v.mu.Lock()
			v.frame++
			v.redraw()
			v.mu.Unlock()
		}
	}()
}

func (v *liveView) progressive() bool { return true }

// progress shows a running command's last output lines.
func (v *liveView) progress(_ acp.SessionID, t toolInfo) {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, lt := range v.running {
		if lt.info.id == t.id {
			lt.info = t
			v.redraw()
		}
	}
}

func (v *liveView) width() int {
	if f, ok := v.stderr.(*os.File); ok {
		if w, _, err := term.GetSize(f.Fd()); err == nil && w > 10 {
			return w
		}
	}
	return 80
}

// fit cuts s to one screen line.
func (v *liveView) fit(s string) string {
	s = strings.ReplaceAll(s, "\t", "    ")
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, s)
	return ansi.Truncate(s, v.width()-1, "…")
}

// clear removes the live region (v.mu held).
func (v *liveView) clear() {
	if v.live > 0 {
		io.WriteString(v.stderr, "\r"+ansi.CursorUp(v.live)+ansi.EraseScreenBelow)
		v.live = 0
	}
}

// redraw draws the live region again (v.mu held).
func (v *liveView) redraw() {
	if v.paused || v.stopped {
		return
	}
	var lines []string
	if v.textToTTY && v.partial != "" {
		lines = append(lines, v.fit(v.partial))
	}
	spin := v.frames[v.frame%len(v.frames)]
	for _, t := range v.running {
		lines = append(lines, v.fit(v.st.warn.Render(spin)+" "+t.info.title))
		for _, l := range outputLines(t.info, runningLines, false) {
			lines = append(lines, v.st.dim.Render(v.fit(l)))
		}
	}
	for _, e := range v.plan {
		mark := planMark(e.Status, true)
		line := v.fit("  " + mark + " " + oneLine(e.Content))
		if e.Status == acp.PlanEntryStatusCompleted {
			line = v.st.dim.Render(line)
		}
		lines = append(lines, line)
	}
	status := "working"
	switch {
	case v.thinking:
		th := oneLine(v.thought.String())
		if n := len(th); n > 120 {
			th = "…" + th[n-120:]
		}
		status = "thinking " + th
	case len(v.running) > 0:
		status = fmt.Sprintf("running %d tool call%s", len(v.running), plural(len(v.running)))
	case v.partial != "":
		status = "writing"
	}
	status += " · " + fmtDuration(time.Since(v.began))
	lines = append(lines, v.st.warn.Render(spin)+" "+v.st.dim.Render(v.fit(status)))
	v.clear()
	for _, l := range lines {
		io.WriteString(v.stderr, l+ansi.EraseLineRight+"\n")
	}
	v.live = len(lines)
}

// commit prints lines above the live region (v.mu held).
func (v *liveView) commit(lines ...string) {
	v.clear()
	for _, l := range lines {
		io.WriteString(v.stderr, l+"\n")
	}
}

// flushPartial ends the answer's current line (v.mu held).
func (v *liveView) flushPartial() {
	if v.textToTTY {
		if v.partial != "" {
			v.clear()
			io.WriteString(v.stdout, v.partial+"\n")
			v.partial = ""
		}
		return
	}
	if v.midLine {
		io.WriteString(v.stdout, "\n")
		v.midLine = false
	}
}

// endThought folds a finished thought into one dim line (v.mu held).
func (v *liveView) endThought() {
	if !v.thinking {
		return
	}
	v.thinking = false
	th := oneLine(v.thought.String())
	v.thought.Reset()
	if th != "" {
		v.commit(v.st.dim.Render(v.fit("✻ " + th)))
	}
}

func (v *liveView) update(n acp.SessionNotification, tool toolInfo) {
	u := n.Update
	v.mu.Lock()
	defer v.mu.Unlock()
	if u.AgentThoughtChunk == nil {
		v.endThought()
	}
	if u.AgentMessageChunk == nil && u.AgentThoughtChunk == nil {
		v.sinceText = u.ToolCall != nil || u.ToolCallUpdate != nil || u.Plan != nil || v.sinceText
	}
	switch {
	case u.AgentMessageChunk != nil:
		t := u.AgentMessageChunk.Content.Text
		if t == nil || t.Text == "" {
			break
		}
		var id acp.MessageID
		if m := u.AgentMessageChunk.MessageID; m != nil {
			id = *m
		}
		if v.sinceText || id != v.lastMsg {
			v.flushPartial() // a new message starts on a new line
		}
		v.lastMsg, v.sinceText = id, false
		v.text(t.Text)
	case u.AgentThoughtChunk != nil:
		if t := u.AgentThoughtChunk.Content.Text; t != nil {
			v.thinking = true
			v.thought.WriteString(t.Text)
		}
	case u.ToolCall != nil, u.ToolCallUpdate != nil:
		v.tool(tool)
	case u.Plan != nil:
		v.plan = append(v.plan[:0], u.Plan.Entries...)
	}
	v.redraw()
}

// text writes answer text (v.mu held).
func (v *liveView) text(s string) {
	if !v.textToTTY {
		v.clear() // stdout may still be this terminal's, through a pipe
		io.WriteString(v.stdout, s)
		v.midLine = !strings.HasSuffix(s, "\n")
		return
	}
	v.partial += s
	if i := strings.LastIndexByte(v.partial, '\n'); i >= 0 {
		v.clear()
		io.WriteString(v.stdout, v.partial[:i+1])
		v.partial = v.partial[i+1:]
	}
}

// tool shows a tool call's progress (v.mu held).
func (v *liveView) tool(t toolInfo) {
	idx := -1
	for i, lt := range v.running {
		if lt.info.id == t.id {
			idx = i
		}
	}
	switch t.status {
	case acp.ToolCallStatusCompleted, acp.ToolCallStatusFailed:
		if idx < 0 && t.status == acp.ToolCallStatusFailed && t.title == "" {
			return
		}
		if idx >= 0 {
			v.running = append(v.running[:idx], v.running[idx+1:]...)
		}
		v.flushPartial()
		lines := []string{}
		if t.status == acp.ToolCallStatusCompleted {
			lines = append(lines, v.st.ok.Render("✓")+" "+v.fit(t.title))
		} else {
			lines = append(lines, v.st.fail.Render("✗")+" "+v.fit(t.title))
		}
		if n := v.r.shownLines(t); n > 0 {
			for _, l := range outputLines(t, n, true) {
				lines = append(lines, v.st.dim.Render(v.fit(l)))
			}
		} else {
			// The whole output: lines are not cut to the screen's width.
			for _, l := range outputLines(t, 0, true) {
				lines = append(lines, v.st.dim.Render(l))
			}
		}
		if t.status == acp.ToolCallStatusCompleted && isEdit(t.kind) {
			for _, d := range t.diffs {
				lines = append(lines, v.diff(d)...)
			}
		}
		v.commit(lines...)
	default:
		if idx >= 0 {
			v.running[idx].info = t
		} else if t.status == acp.ToolCallStatusInProgress || t.status == acp.ToolCallStatusPending {
			v.running = append(v.running, &liveTool{info: t})
		}
	}
}

// diff renders an edit as coloured unified diff lines.
func (v *liveView) diff(d acp.Diff) []string {
	var out []string
	for _, l := range diffLines(d, maxDiffLines) {
		s := v.fit("    " + l.text)
		switch l.kind {
		case '+':
			s = v.st.add.Render(s)
		case '-':
			s = v.st.del.Render(s)
		case '@':
			s = v.st.hunk.Render(s)
		case '~':
			s = v.st.dim.Render(s)
		}
		out = append(out, s)
	}
	return out
}

func (v *liveView) notice(s string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.flushPartial()
	v.commit(v.st.warn.Render(v.fit(oneLine(s))))
	v.redraw()
}

func (v *liveView) pause(lines []string) func() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.paused = true
	v.flushPartial()
	v.commit(lines...)
	return func() {
		v.mu.Lock()
		defer v.mu.Unlock()
		v.paused = false
		v.redraw()
	}
}

func (v *liveView) stop() {
	v.mu.Lock()
	if v.stopped {
		v.mu.Unlock()
		return
	}
	v.stopped = true
	v.mu.Unlock()
	close(v.stopc)
	v.wg.Wait()
	v.mu.Lock()
	defer v.mu.Unlock()
	v.endThought()
	v.flushPartial()
	var lines []string
	for _, e := range v.plan {
		lines = append(lines, v.fit("  "+planMark(e.Status, true)+" "+oneLine(e.Content)))
	}
	v.commit(lines...)
}

func (v *liveView) result(res Result) {
	v.mu.Lock()
	defer v.mu.Unlock()
	mark := v.st.ok.Render("●")
	if res.ExitCode != 0 {
		mark = v.st.fail.Render("●")
	}
	v.commit(mark + " " + v.st.dim.Render(v.fit(summaryLine(res))))
}

// ColorProfile is the colour profile the environment announces (COLORTERM,
// TERM), for every styled output of the binary on a terminal: set instead
// of asking the terminal, whose answer would arrive on stdin.
func ColorProfile() termenv.Profile {
	t := os.Getenv("TERM")
	switch ct := os.Getenv("COLORTERM"); {
	case ct == "truecolor" || ct == "24bit":
		return termenv.TrueColor
	case t == "" || t == "dumb":
		return termenv.Ascii
	case strings.Contains(t, "256color"):
		return termenv.ANSI256
	}
	return termenv.ANSI
}

// permission keys: one key answers.
var askKeys = []struct {
	key  byte
	kind acp.PermissionOptionKind
	name string
}{
	{'y', acp.PermissionOptionKindAllowOnce, "allow once"},
	{'a', acp.PermissionOptionKindAllowAlways, "always"},
	{'n', acp.PermissionOptionKindRejectOnce, "reject once"},
	{'N', acp.PermissionOptionKindRejectAlways, "reject always"},
}

// ask shows the question with the exact command or the diff and reads one
// key in cbreak mode (Ctrl-C still interrupts, which cancels the turn).
func (v *liveView) ask(ctx context.Context, t *toolInfo, options []acp.PermissionOption, tty *ttyReader, cancel <-chan struct{}) (acp.RequestPermissionResponse, error) {
	v.mu.Lock()
	v.paused = true
	v.flushPartial()
	lines := []string{v.st.bold.Render("? ") + v.st.bold.Render(v.fit(t.title))}
	if c := t.command(); c != "" && t.kind == acp.ToolKindExecute {
		lines = append(lines, "  "+v.st.warn.Render("$ ")+v.fit(c))
	}
	for _, d := range t.diffs {
		lines = append(lines, v.diff(d)...)
	}
	var hints []string
	keys := map[byte]acp.PermissionOptionID{}
	for _, k := range askKeys {
		for _, o := range options {
			if o.Kind == k.kind {
				if _, dup := keys[k.key]; !dup {
					keys[k.key] = o.OptionID
					hints = append(hints, v.st.bold.Render("["+string(k.key)+"]")+" "+o.Name)
				}
			}
		}
	}
	for i, o := range options {
		if i < 9 {
			keys[byte('1'+i)] = o.OptionID
		}
	}
	lines = append(lines, "  "+strings.Join(hints, "  "))
	v.commit(lines...)
	v.mu.Unlock()

	restore := cbreak(tty)
	drain(tty) // typeahead and terminal replies are not answers
	io.WriteString(v.stderr, "  › ")
	res, picked, err := readKey(ctx, tty, cancel, keys, rejectOutcome(options))
	restore()

	v.mu.Lock()
	defer v.mu.Unlock()
	answer := "cancelled"
	for _, o := range options {
		if res.Outcome.Selected != nil && o.OptionID == res.Outcome.Selected.OptionID {
			answer = o.Name
		}
	}
	if !picked && err == nil && res.Outcome.Selected != nil {
		answer += " (end of input)"
	}
	io.WriteString(v.stderr, answer+"\n")
	v.paused = false
	v.redraw()
	return res, err
}

// readKey waits for one of keys. End of input answers reject.
func readKey(ctx context.Context, tty *ttyReader, cancel <-chan struct{}, keys map[byte]acp.PermissionOptionID, reject acp.RequestPermissionResponse) (acp.RequestPermissionResponse, bool, error) {
	for {
		select {
		case <-ctx.Done():
			return acp.RequestPermissionResponse{}, false, ctx.Err()
		case <-cancel:
			return cancelledOutcome(), false, nil
		case b, ok := <-tty.chunks:
			if !ok {
				return reject, false, nil
			}
			if len(b) > 0 && b[0] == 0x1b {
				continue // an escape sequence (a function key, a terminal reply)
			}
			for _, c := range b {
				if id, ok := keys[c]; ok {
					return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
						Selected: &acp.SelectedPermissionOutcome{OptionID: id},
					}}, true, nil
				}
			}
		}
	}
}

// drain discards input already typed or queued.
func drain(tty *ttyReader) {
	flushInput(tty.f)
	for {
		select {
		case _, ok := <-tty.chunks:
			if !ok {
				return
			}
		case <-time.After(20 * time.Millisecond):
			return
		}
	}
}
