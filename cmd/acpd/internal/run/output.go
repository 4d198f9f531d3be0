package run

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"acpd/acp"
	"acpd/client"
)

// output shows a run: the answer, the progress and the result. Its methods
// are called from the connection's read loop (update), permission handlers
// (notice, ask) and the main goroutine; implementations serialise them.
type output interface {
	// start is called once the agent is connected.
	start()
	// update shows one session/update; tool is a copy of the tool call it
	// concerns (zero otherwise).
	update(n acp.SessionNotification, tool toolInfo)
	// progressive reports whether the output shows running commands'
	// output (then progress is called with what is new).
	progressive() bool
	// progress shows new output of tool call tool's command, which runs.
	progress(sid acp.SessionID, tool toolInfo)
	// notice prints one line of acpd run's own.
	notice(s string)
	// ask asks the user to choose among options for tool call t, reading
	// the terminal tty; cancel closing ends the question as cancelled.
	ask(ctx context.Context, t *toolInfo, options []acp.PermissionOption, tty *ttyReader, cancel <-chan struct{}) (acp.RequestPermissionResponse, error)
	// pause prints lines (a question) on stderr and keeps the view still
	// until resume is called: the user's answer is read meanwhile.
	pause(lines []string) (resume func())
	// stop is called when the turn has ended.
	stop()
	// result shows the end of the run.
	result(res Result)
}

// newOutput picks the output for the flags and terminals.
func newOutput(r *runner, stdoutTTY, stderrTTY bool) output {
	switch r.flags.output {
	case outputJSON, outputStreamJSON:
		o := &jsonOutput{stdout: r.stdout, stderr: r.stderr, stream: r.flags.output == outputStreamJSON, quiet: r.flags.quiet}
		o.enc = json.NewEncoder(r.stdout)
		o.enc.SetEscapeHTML(false)
		return o
	}
	if stderrTTY && !NoColor() && !r.flags.quiet {
		return newLiveView(r, stdoutTTY)
	}
	return &plainOutput{stdout: r.stdout, stderr: r.stderr, quiet: r.flags.quiet, breakLines: stdoutTTY && stderrTTY || sameFile(r.stdout, r.stderr), shown: r.shownLines}
}

// sameFile reports whether the writers are one file (`2>&1` into a pipe
// or a CI log): the answer's partial line is then ended before a line on
// stderr, as on a terminal.
func sameFile(a, b io.Writer) bool {
	fa, ok1 := a.(*os.File)
	fb, ok2 := b.(*os.File)
	if !ok1 || !ok2 {
		return false
	}
	sa, err1 := fa.Stat()
	sb, err2 := fb.Stat()
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// Result is the final object of --output json (and the last line of
// stream-json). Field names are part of acpd run's interface.
type Result struct {
	// SessionID is the session's id ("" when none was opened, or the
	// session of a run that failed before its prompt reached a model was
	// deleted).
	SessionID string `json:"sessionId"`
	// StopReason is the turn's ACP stop reason ("" when it did not end).
	StopReason string `json:"stopReason"`
	// ExitCode is acpd run's exit status.
	ExitCode int `json:"exitCode"`
	// Error describes why the run failed, if it did.
	Error string `json:"error,omitempty"`
	// Text is the answer: the agent's message text of the turn.
	Text string `json:"text"`
	// ToolCalls are the turn's tool calls in order, with their final status.
	ToolCalls []ToolRecord `json:"toolCalls"`
	// FilesChanged are the absolute paths the agent wrote (fs/write_text_file
	// and the diffs of completed edits), sorted.
	FilesChanged []string `json:"filesChanged"`
	// Permissions are the permission requests and how each was decided.
	Permissions []PermissionRecord `json:"permissions"`
	// Questions are the agent's questions (elicitation forms) and how
	// each was answered.
	Questions []QuestionRecord `json:"questions,omitempty"`
	// Usage is the agent's last usage report, if it sent any.
	Usage *UsageRecord `json:"usage,omitempty"`
	// Tokens are the tokens the run's turns used, when the agent reported
	// them (ACP's unstable PromptResponse.usage).
	Tokens *TokensRecord `json:"tokens,omitempty"`
	// DurationMs is the run's wall time in milliseconds.
	DurationMs int64 `json:"durationMs"`
}

// ToolRecord is a tool call of a Result.
type ToolRecord struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Kind   string `json:"kind,omitempty"`
	Status string `json:"status"`
	// Output is what the call's command printed (its terminal's text, or
	// a command's text content), at most its last 256 KiB.
	Output string `json:"output,omitempty"`
	// OutputTruncated says Output lacks the start of what was printed.
	OutputTruncated bool `json:"outputTruncated,omitempty"`
	// ExitCode and Signal are how the command of a terminal exited.
	ExitCode *uint32 `json:"exitCode,omitempty"`
	Signal   *string `json:"signal,omitempty"`
}

// UsageRecord is the agent's last usage report of a Result.
type UsageRecord struct {
	// ContextUsed and ContextSize are tokens (ACP usage_update).
	ContextUsed uint64 `json:"contextUsed"`
	ContextSize uint64 `json:"contextSize"`
	// Cost is the session's cost so far, when the agent knows it.
	Cost *CostRecord `json:"cost,omitempty"`
}

// TokensRecord is the token usage of a Result's turns, summed: total,
// input and output always; cache reads and writes and thought tokens when
// the agent reported them.
type TokensRecord struct {
	Total       uint64  `json:"total"`
	Input       uint64  `json:"input"`
	Output      uint64  `json:"output"`
	CachedRead  *uint64 `json:"cachedRead,omitempty"`
	CachedWrite *uint64 `json:"cachedWrite,omitempty"`
	Thought     *uint64 `json:"thought,omitempty"`
}

// add returns t (nil: none yet) with one turn's usage added.
func (t *TokensRecord) add(u *acp.Usage) *TokensRecord {
	n := TokensRecord{}
	if t != nil {
		n = *t
	}
	n.Total += u.TotalTokens
	n.Input += u.InputTokens
	n.Output += u.OutputTokens
	sum := func(a, b *uint64) *uint64 {
		if b == nil {
			return a
		}
		v := *b
		if a != nil {
			v += *a
		}
		return &v
	}
	n.CachedRead = sum(n.CachedRead, u.CachedReadTokens)
	n.CachedWrite = sum(n.CachedWrite, u.CachedWriteTokens)
	n.Thought = sum(n.Thought, u.ThoughtTokens)
	return &n
}

// CostRecord is a session's cost so far.
type CostRecord struct {
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

// result collects the run's result.
func (r *runner) result(code int, msg string) Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := Result{
		SessionID:    string(r.sid),
		StopReason:   string(r.stop),
		ExitCode:     code,
		Error:        msg,
		Text:         r.text.String(),
		ToolCalls:    []ToolRecord{},
		FilesChanged: []string{},
		Permissions:  slices.Clone(r.perms),
		Questions:    slices.Clone(r.questions),
		DurationMs:   time.Since(r.start).Milliseconds(),
		Tokens:       r.tokens,
	}
	if res.Permissions == nil {
		res.Permissions = []PermissionRecord{}
	}
	for _, t := range r.toolOrder {
		st := string(t.status)
		if st == "" {
			st = string(acp.ToolCallStatusPending)
		}
		rec := ToolRecord{ID: string(t.id), Title: t.title, Kind: string(t.kind), Status: st, Output: t.output, OutputTruncated: t.outTruncated}
		if t.exit != nil {
			rec.ExitCode, rec.Signal = t.exit.ExitCode, t.exit.Signal
		}
		res.ToolCalls = append(res.ToolCalls, rec)
	}
	for f := range r.files {
		res.FilesChanged = append(res.FilesChanged, f)
	}
	slices.Sort(res.FilesChanged)
	if u := r.usage; u != nil {
		res.Usage = &UsageRecord{ContextUsed: u.Used, ContextSize: u.Size}
		if u.Cost != nil {
			res.Usage.Cost = &CostRecord{Amount: u.Cost.Amount, Currency: u.Cost.Currency}
		}
	}
	return res
}

// summaryLine is the one-line end of a text run: stop reason, tool calls,
// tokens and cost when known, duration.
func summaryLine(res Result) string {
	parts := []string{}
	switch {
	case res.StopReason != "":
		parts = append(parts, strings.ReplaceAll(res.StopReason, "_", " "))
	case res.Error != "":
		parts = append(parts, "failed")
	default:
		parts = append(parts, "stopped")
	}
	failed := 0
	for _, t := range res.ToolCalls {
		if t.Status == string(acp.ToolCallStatusFailed) {
			failed++
		}
	}
	n := len(res.ToolCalls)
	tc := fmt.Sprintf("%d tool call%s", n, plural(n))
	if failed > 0 {
		tc += fmt.Sprintf(" (%d failed)", failed)
	}
	parts = append(parts, tc)
	if u := res.Usage; u != nil {
		if u.ContextSize > 0 {
			parts = append(parts, fmt.Sprintf("%s/%s tokens", tokens(u.ContextUsed), tokens(u.ContextSize)))
		} else {
			parts = append(parts, tokens(u.ContextUsed)+" tokens")
		}
		if u.Cost != nil {
			if u.Cost.Currency == "USD" {
				parts = append(parts, fmt.Sprintf("$%.4f", u.Cost.Amount))
			} else {
				parts = append(parts, fmt.Sprintf("%.4f %s", u.Cost.Amount, u.Cost.Currency))
			}
		}
	}
	ran, refused := 0, 0
	for _, p := range res.Permissions {
		switch {
		case !p.Escalation:
		case p.Decision == "allowed":
			ran++
		default:
			refused++
		}
	}
	if ran > 0 {
		parts = append(parts, fmt.Sprintf("%d command%s ran OUTSIDE the sandbox", ran, plural(ran)))
	}
	if refused > 0 {
		parts = append(parts, fmt.Sprintf("%d escalation%s refused", refused, plural(refused)))
	}
	parts = append(parts, fmtDuration(time.Duration(res.DurationMs)*time.Millisecond))
	return strings.Join(parts, " · ")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func tokens(n uint64) string {
	if n >= 10000 {
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
	}
	return strconv.FormatUint(n, 10)
}

func fmtDuration(d time.Duration) string {
	if d < time.Minute {
		return strconv.FormatFloat(d.Seconds(), 'f', 1, 64) + "s"
	}
	return d.Round(time.Second).String()
}

// jsonOutput is --output json and stream-json: stdout carries JSON only.
type jsonOutput struct {
	mu     sync.Mutex
	stdout io.Writer
	stderr io.Writer
	enc    *json.Encoder
	stream bool
	quiet  bool
	// sent is the raw terminal output streamed so far, by running call;
	// ended are the calls whose end was shown (stream-json).
	sent  map[acp.ToolCallID]string
	ended map[acp.ToolCallID]bool
}

func (o *jsonOutput) start() {}
func (o *jsonOutput) stop()  {}

func (o *jsonOutput) progressive() bool { return o.stream }

func (o *jsonOutput) progress(sid acp.SessionID, t toolInfo) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.ended[t.id] {
		o.chunk(sid, t, false)
	}
}

// chunk writes what is new of t's terminal output; with exit, also how
// it ended (o.mu held).
func (o *jsonOutput) chunk(sid acp.SessionID, t toolInfo, exit bool) {
	if len(t.terminals) == 0 {
		return
	}
	if o.sent == nil {
		o.sent, o.ended = map[acp.ToolCallID]string{}, map[acp.ToolCallID]bool{}
	}
	sent := o.sent[t.id]
	data := t.raw
	if rest, ok := strings.CutPrefix(t.raw, sent); ok {
		data = rest // else the terminal dropped its start: all it has is new
	}
	if data == "" && !exit {
		return
	}
	o.sent[t.id] = t.raw
	if exit {
		delete(o.sent, t.id)
		o.ended[t.id] = true
	}
	o.enc.Encode(terminalUpdate(sid, t, t.terminals[len(t.terminals)-1], data, exit))
}

func (o *jsonOutput) update(n acp.SessionNotification, t toolInfo) {
	if !o.stream {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if t.id != "" && ended(t.status) && !o.ended[t.id] {
		o.chunk(n.SessionID, t, true)
	}
	o.enc.Encode(n)
}

func (o *jsonOutput) write(v any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.enc.Encode(v)
}

func (o *jsonOutput) notice(s string) {
	if o.quiet && !important(s) {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	fmt.Fprintln(o.stderr, oneLine(s))
}

func (o *jsonOutput) ask(ctx context.Context, t *toolInfo, options []acp.PermissionOption, tty *ttyReader, cancel <-chan struct{}) (acp.RequestPermissionResponse, error) {
	return askLines(ctx, o.stderr, t, options, tty, cancel)
}

func (o *jsonOutput) result(res Result) { o.write(res) }

func (o *jsonOutput) pause(lines []string) func() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, l := range lines {
		fmt.Fprintln(o.stderr, l)
	}
	return func() {}
}

// plainOutput is the text output without a live view: the answer streams
// to stdout, one line per event on stderr, no colour, no cursor movement.
type plainOutput struct {
	mu     sync.Mutex
	stdout io.Writer
	stderr io.Writer
	quiet  bool
	// breakLines ends a partial line of the answer before a line on stderr
	// (both are the same terminal).
	breakLines bool

	// shown is how many lines of an ended call's output to print (0: all).
	shown func(toolInfo) int

	midLine   bool // stdout does not end with a newline
	thought   strings.Builder
	lastMsg   acp.MessageID // of the last agent text
	sinceText bool          // tool calls or a plan came after the last agent text
	started   map[acp.ToolCallID]bool
	ended     map[acp.ToolCallID]bool
}

func (o *plainOutput) start() {}

func (o *plainOutput) progressive() bool                { return false }
func (o *plainOutput) progress(acp.SessionID, toolInfo) {}

func (o *plainOutput) update(n acp.SessionNotification, tool toolInfo) {
	u := n.Update
	o.mu.Lock()
	defer o.mu.Unlock()
	if u.AgentThoughtChunk == nil {
		o.endThought()
	}
	if u.AgentMessageChunk == nil && u.AgentThoughtChunk == nil {
		o.sinceText = u.ToolCall != nil || u.ToolCallUpdate != nil || u.Plan != nil || o.sinceText
	}
	switch {
	case u.AgentMessageChunk != nil:
		if t := u.AgentMessageChunk.Content.Text; t != nil && t.Text != "" {
			var id acp.MessageID
			if m := u.AgentMessageChunk.MessageID; m != nil {
				id = *m
			}
			if o.midLine && (o.sinceText || id != o.lastMsg) {
				io.WriteString(o.stdout, "\n") // a new message starts on a new line
			}
			o.lastMsg, o.sinceText = id, false
			io.WriteString(o.stdout, t.Text)
			o.midLine = !strings.HasSuffix(t.Text, "\n")
		}
	case u.AgentThoughtChunk != nil:
		if t := u.AgentThoughtChunk.Content.Text; t != nil {
			o.thought.WriteString(t.Text)
		}
	case u.ToolCall != nil, u.ToolCallUpdate != nil:
		o.tool(tool)
	case u.Plan != nil:
		o.line("▸ plan")
		for _, e := range u.Plan.Entries {
			o.line("  " + planMark(e.Status, false) + " " + oneLine(e.Content))
		}
	}
}

// endThought prints a finished thought folded to one line (o.mu held).
func (o *plainOutput) endThought() {
	if o.thought.Len() == 0 {
		return
	}
	th := oneLine(o.thought.String())
	o.thought.Reset()
	o.line("✻ " + th)
}

func planMark(s acp.PlanEntryStatus, fancy bool) string {
	switch s {
	case acp.PlanEntryStatusCompleted:
		if fancy {
			return "☑"
		}
		return "[x]"
	case acp.PlanEntryStatusInProgress:
		if fancy {
			return "◐"
		}
		return "[~]"
	}
	if fancy {
		return "☐"
	}
	return "[ ]"
}

// tool notes a tool call that started or ended (o.mu held). Titles often
// become precise only after the call was announced, so the start is
// printed when the call runs.
func (o *plainOutput) tool(t toolInfo) {
	if o.started == nil {
		o.started, o.ended = map[acp.ToolCallID]bool{}, map[acp.ToolCallID]bool{}
	}
	if o.ended[t.id] {
		return
	}
	switch t.status {
	case acp.ToolCallStatusInProgress:
		if !o.started[t.id] {
			o.started[t.id] = true
			o.line("▸ " + t.title)
		}
	case acp.ToolCallStatusCompleted:
		o.ended[t.id] = true
		o.line("✓ " + t.title)
		if isEdit(t.kind) {
			for _, d := range t.diffs {
				for _, l := range diffLines(d, maxDiffLines) {
					o.line("    " + l.text)
				}
			}
		}
		o.output(t)
	case acp.ToolCallStatusFailed:
		o.ended[t.id] = true
		o.line("✗ " + t.title)
		o.output(t)
	}
}

// output prints the end of a call's output, or all of it (o.mu held).
func (o *plainOutput) output(t toolInfo) {
	for _, l := range outputLines(t, o.shown(t), true) {
		o.line(l)
	}
}

// line prints one line on stderr (o.mu held).
func (o *plainOutput) line(s string) {
	if o.quiet {
		return
	}
	o.forceLine(s)
}

func (o *plainOutput) forceLine(s string) {
	if o.breakLines && o.midLine {
		io.WriteString(o.stdout, "\n")
		o.midLine = false
	}
	fmt.Fprintln(o.stderr, strings.TrimRight(s, " "))
}

func (o *plainOutput) notice(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.quiet && !important(s) {
		return
	}
	o.forceLine(oneLine(s))
}

func (o *plainOutput) ask(ctx context.Context, t *toolInfo, options []acp.PermissionOption, tty *ttyReader, cancel <-chan struct{}) (acp.RequestPermissionResponse, error) {
	o.mu.Lock()
	if o.breakLines && o.midLine {
		io.WriteString(o.stdout, "\n")
		o.midLine = false
	}
	o.mu.Unlock()
	return askLines(ctx, o.stderr, t, options, tty, cancel)
}

func (o *plainOutput) pause(lines []string) func() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.breakLines && o.midLine {
		io.WriteString(o.stdout, "\n")
		o.midLine = false
	}
	for _, l := range lines {
		fmt.Fprintln(o.stderr, l)
	}
	return func() {}
}

func (o *plainOutput) stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.endThought()
	if o.midLine {
		io.WriteString(o.stdout, "\n")
		o.midLine = false
	}
}

func (o *plainOutput) result(res Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.quiet {
		fmt.Fprintln(o.stderr, "— "+summaryLine(res))
	}
}

// important reports whether a notice is shown under --quiet too: a
// refusal, or a question declined for the user.
func important(s string) bool {
	return strings.Contains(s, "rejected") || strings.Contains(s, "declined")
}

// askLines asks on the terminal with numbered options, one line per answer.
// It fails closed: the end of the terminal's input rejects.
func askLines(ctx context.Context, w io.Writer, t *toolInfo, options []acp.PermissionOption, tty *ttyReader, cancel <-chan struct{}) (acp.RequestPermissionResponse, error) {
	reject := rejectOutcome(options)
	ask := func() {
		fmt.Fprintf(w, "? %s\n", oneLine(t.title))
		if c := t.command(); c != "" && t.kind == acp.ToolKindExecute {
			fmt.Fprintf(w, "  $ %s\n", oneLine(c))
		}
		for i, o := range options {
			fmt.Fprintf(w, "  %d) %s\n", i+1, oneLine(o.Name))
		}
		fmt.Fprintf(w, "choose [1-%d]: ", len(options))
	}
	ask()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(w)
			return acp.RequestPermissionResponse{}, ctx.Err()
		case <-cancel:
			fmt.Fprintln(w)
			return cancelledOutcome(), nil
		case b, ok := <-tty.chunks:
			if !ok {
				fmt.Fprintln(w, "\nacpd run: end of input; rejecting")
				return reject, nil
			}
			tty.line = append(tty.line, b...)
			for {
				i := bytes.IndexByte(tty.line, '\n')
				if i < 0 {
					break
				}
				line := string(tty.line[:i])
				tty.line = tty.line[i+1:]
				if n, err := strconv.Atoi(strings.TrimSpace(line)); err == nil && n >= 1 && n <= len(options) {
					return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{
						Selected: &acp.SelectedPermissionOutcome{OptionID: options[n-1].OptionID},
					}}, nil
				}
				ask()
			}
		}
	}
}

func cancelledOutcome() acp.RequestPermissionResponse {
	return acp.RequestPermissionResponse{Outcome: acp.RequestPermissionOutcome{Cancelled: &acp.RequestPermissionOutcomeCancelled{}}}
}

func rejectOutcome(options []acp.PermissionOption) acp.RequestPermissionResponse {
	return client.Select(options, acp.PermissionOptionKindRejectOnce, acp.PermissionOptionKindRejectAlways)
}

// NoColor reports whether NO_COLOR asks for output without colour (any
// non-empty value, https://no-color.org).
func NoColor() bool { return os.Getenv("NO_COLOR") != "" }
