package run

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"acpd/acp"
	"acpd/terminal"
)

// What a tool call's command printed. acpd run serves the agent's
// terminals (client.Conn), so it reads their output itself: while a command
// runs (pollOutput, for the live view's last lines and stream-json's
// chunks) and when its call ends (finishOutput, for every output and the
// result). A terminal the agent releases before its call's final update
// is read as it is released (client.Options.OnTerminalRelease). An agent
// that shows a command's output as the call's text content (no terminal)
// has that text shown instead.

const (
	// outputPoll is how often the output of running commands is read.
	outputPoll = 250 * time.Millisecond
	// maxKeptOutput bounds the rendered output kept per tool call (its
	// end), for the result and the whole output of a failed command.
	maxKeptOutput = 256 << 10
	// runningLines and doneLines are the last lines shown of a command
	// while it runs and when it succeeded (without --verbose).
	runningLines = 3
	doneLines    = 5
	// tailBytes is how much of a running command's output is rendered for
	// its last lines.
	tailBytes = 16 << 10
	// maxReleased bounds the released terminals' outputs kept until their
	// tool call ends.
	maxReleased = 64
)

// released keeps the output of a terminal the agent released
// (client.Options.OnTerminalRelease), for its tool call's end.
func (r *runner) released(_ acp.SessionID, id acp.TerminalID, out acp.TerminalOutputResponse) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.releasedOut == nil {
		r.releasedOut = map[acp.TerminalID]acp.TerminalOutputResponse{}
	}
	if _, ok := r.releasedOut[id]; !ok {
		r.releasedOrder = append(r.releasedOrder, id)
	}
	r.releasedOut[id] = out
	for len(r.releasedOrder) > maxReleased {
		delete(r.releasedOut, r.releasedOrder[0])
		r.releasedOrder = r.releasedOrder[1:]
	}
}

// terminalOutput reads terminal id's output: its live output, or what it
// had when it was released.
func (r *runner) terminalOutput(id acp.TerminalID) (acp.TerminalOutputResponse, bool) {
	r.mu.Lock()
	out, ok := r.releasedOut[id]
	sid, conn := r.sid, r.conn
	r.mu.Unlock()
	if ok || conn == nil {
		return out, ok
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if out, ok := conn.TerminalOutput(ctx, sid, id); ok {
		return out, true
	}
	// Released in the meantime: the release kept it before the terminal went.
	r.mu.Lock()
	defer r.mu.Unlock()
	out, ok = r.releasedOut[id]
	return out, ok
}

// finishOutput records the output of tool call t, which has just ended
// (r.mu not held): its last terminal's, or its text content for a command
// or a failed call.
func (r *runner) finishOutput(t *toolInfo) {
	r.mu.Lock()
	if t.outDone {
		r.mu.Unlock()
		return
	}
	t.outDone = true
	var id acp.TerminalID
	if n := len(t.terminals); n > 0 {
		id = t.terminals[n-1]
	}
	text, kind, status := t.text, t.kind, t.status
	r.mu.Unlock()
	var output, raw string
	var truncated bool
	var exit *acp.TerminalExitStatus
	switch {
	case id != "":
		out, ok := r.terminalOutput(id)
		if !ok {
			return
		}
		raw, output, truncated, exit = out.Output, terminal.RenderText([]byte(out.Output)), out.Truncated, out.ExitStatus
		r.mu.Lock()
		delete(r.releasedOut, id)
		r.mu.Unlock()
	case kind == acp.ToolKindExecute || status == acp.ToolCallStatusFailed:
		output = unfence(text)
	default:
		return
	}
	output = strings.TrimRight(output, "\n")
	if len(output) > maxKeptOutput {
		output = output[len(output)-maxKeptOutput:]
		if i := strings.IndexByte(output, '\n'); i >= 0 {
			output = output[i+1:]
		}
		truncated = true
	}
	r.mu.Lock()
	// raw stays for the update that shows the end (stream-json's last
	// chunk); update drops it then.
	t.raw, t.output, t.outTruncated, t.exit = raw, output, truncated, exit
	r.mu.Unlock()
}

// unfence removes the Markdown code fence agents put around a command's
// output in text content.
func unfence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") || !strings.HasSuffix(t, "```") || len(t) < 6 {
		return s
	}
	first := strings.IndexByte(t, '\n')
	if first < 0 {
		return s
	}
	body := t[first+1 : len(t)-3]
	// Longer fences (````) close with as many backticks.
	return strings.TrimRight(strings.TrimRight(body, "`"), "\n")
}

// pollOutput reads the output of the running commands until stop closes,
// every outputPoll, and shows what is new (output.progress).
func (r *runner) pollOutput(stop <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	tick := time.NewTicker(outputPoll)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		r.mu.Lock()
		type want struct {
			t  *toolInfo
			id acp.TerminalID
		}
		var ws []want
		for _, t := range r.toolOrder {
			if n := len(t.terminals); n > 0 && !ended(t.status) {
				ws = append(ws, want{t, t.terminals[n-1]})
			}
		}
		sid := r.sid
		r.mu.Unlock()
		for _, w := range ws {
			out, ok := r.terminalOutput(w.id)
			if !ok {
				continue
			}
			r.mu.Lock()
			if ended(w.t.status) || out.Output == w.t.raw {
				r.mu.Unlock()
				continue
			}
			w.t.raw = out.Output
			raw := out.Output
			if len(raw) > tailBytes {
				raw = raw[len(raw)-tailBytes:]
			}
			w.t.output = strings.TrimRight(terminal.RenderText([]byte(raw)), "\n")
			snap := *w.t
			r.mu.Unlock()
			r.out.progress(sid, snap)
		}
	}
}

func ended(s acp.ToolCallStatus) bool {
	return s == acp.ToolCallStatusCompleted || s == acp.ToolCallStatusFailed
}

// outputLines are the lines of a call's output shown under it: the last
// n, or all of them when n <= 0. An ended call's (ended) start with a line
// saying how many were left out.
func outputLines(t toolInfo, n int, ended bool) []string {
	if strings.TrimSpace(t.output) == "" {
		return nil
	}
	lines := strings.Split(t.output, "\n")
	var out []string
	if n > 0 && len(lines) > n {
		if ended {
			out = append(out, fmt.Sprintf("  │ … %d earlier line%s (--verbose shows all)", len(lines)-n, plural(len(lines)-n)))
		}
		lines = lines[len(lines)-n:]
	} else if t.outTruncated && ended {
		out = append(out, "  │ … (the output's start was not kept)")
	}
	for i, l := range lines {
		mark := "  │ "
		if i == len(lines)-1 {
			mark = "  └ "
		}
		out = append(out, strings.TrimRight(mark+l, " "))
	}
	return out
}

// shownLines is how many lines of an ended call's output are shown: all
// of them when it failed or with --verbose.
func (r *runner) shownLines(t toolInfo) int {
	if r.flags.verbose || t.status == acp.ToolCallStatusFailed || failedExit(t.exit) {
		return 0
	}
	return doneLines
}

// failedExit reports whether a command exited with a status other than 0
// (or by a signal).
func failedExit(e *acp.TerminalExitStatus) bool {
	return e != nil && (e.Signal != nil || e.ExitCode != nil && *e.ExitCode != 0)
}

// terminalUpdates are stream-json's own lines about a command's output:
// session/update tool_call_update notifications whose _meta carries, as
// Zed's terminal extension names them, terminal_output (data: what is new
// since the last such line) and, when the call ends, terminal_exit
// (exit_code, signal, and output: the whole rendered text).
func terminalUpdate(sid acp.SessionID, t toolInfo, id acp.TerminalID, data string, exit bool) acp.SessionNotification {
	meta := map[string]any{}
	if data != "" {
		meta["terminal_output"] = map[string]any{"terminal_id": id, "data": data}
	}
	if exit {
		e := map[string]any{"terminal_id": id, "exit_code": nil, "signal": nil, "output": t.output}
		if t.exit != nil {
			if t.exit.ExitCode != nil {
				e["exit_code"] = *t.exit.ExitCode
			}
			if t.exit.Signal != nil {
				e["signal"] = *t.exit.Signal
			}
		}
		if t.outTruncated {
			e["truncated"] = true
		}
		meta["terminal_exit"] = e
	}
	return acp.SessionNotification{SessionID: sid, Update: acp.SessionUpdate{ToolCallUpdate: &acp.ToolCallUpdate{ToolCallID: t.id, Meta: meta}}}
}
