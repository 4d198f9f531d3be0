// Package batch runs the tool calls of one model response and reports
// their lifecycle: consecutive read-only calls run in parallel (at most
// [MaxParallel] at once), every other call alone, in the order the model
// gave; each call's final tool_call_update carries its status and content.
// A panicking tool fails its call instead of the process. Once the context
// ends, running calls get [AbandonGrace] to stop; a call stuck where
// cancellation cannot reach is then abandoned to its goroutine, which the
// caller owns from there (Options.Abandon).
package batch

import (
	"context"
	"encoding/json"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"acpd/acp"
	"acpd/internal/loopguard"
	"acpd/model"
	"acpd/tools"
)

// AbandonGrace is how long a cancelled batch waits for its running calls
// before it ends without them.
const AbandonGrace = time.Second

// MaxParallel bounds how many consecutive read-only calls run at once; the
// rest wait for a free slot.
const MaxParallel = 8

// Call is one tool call of the response.
type Call struct {
	ID, Name string
	Input    json.RawMessage
	// Refused calls do not run: the loop guard stopped a repetition.
	Refused bool
}

// Options say what the calls run with. Update and Abandon may be called
// from the batch's goroutines, concurrently.
type Options struct {
	// Tools returns the session's current tools by name (MCP servers
	// come and go).
	Tools func() map[string]*tools.Tool
	// Env is the session as its tools see it.
	Env tools.Env
	// Update reports a call's tool_call_update to the client.
	Update func(acp.ToolCallUpdate)
	// Abandon takes the wait for calls that did not stop within the grace
	// after cancellation; the caller runs it before it releases what the
	// calls use (the session waits for them when it closes).
	Abandon func(wait func())
	// Images: the model reads images; otherwise images in results are
	// replaced by a note.
	Images bool
	// Logger receives diagnostics; nil discards.
	Logger *slog.Logger
	// Pre, when set, runs before each call that would run (the user's
	// PreToolUse hooks): a non-empty deny is the call's error result
	// instead, and the returned context is what the call runs with.
	Pre func(ctx context.Context, c Call) (_ context.Context, deny string)
	// Post, when set, runs after each call that ran, and may add to its
	// result (PostToolUse hooks).
	Post func(ctx context.Context, c Call, r *tools.Result)
}

// Run runs calls and returns their results (model.PartToolResult parts),
// in the calls' order, and the texts of the results that end the turn
// (tools.Result.EndTurn), in the same order. A call that cannot run
// (refused, cancelled before it started, abandoned) gets an error result
// and a failed update.
func Run(ctx context.Context, o Options, calls []Call) ([]model.Part, []string) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	failed := func(c Call) {
		st := acp.ToolCallStatusFailed
		o.Update(acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(c.ID), Status: &st})
	}
	results := make([]model.Part, len(calls))
	ends := make([]string, len(calls))
	all := o.Tools()
	readOnly := func(c Call) bool { t := all[c.Name]; return t != nil && t.ReadOnly }
	// Once ctx ends, running calls get AbandonGrace to stop; a call stuck
	// where cancellation cannot reach (a blocking system call) is then
	// abandoned: the batch ends, the call's goroutine finishes on its own
	// (its commands are killed by their terminals' cancellation).
	var grace <-chan time.Time
	wait := func(ch <-chan tools.Result) (tools.Result, bool) {
		select {
		case r := <-ch:
			return r, true
		case <-ctx.Done():
		}
		if grace == nil {
			grace = time.After(AbandonGrace)
		}
		select {
		case r := <-ch:
			return r, true
		case <-grace:
			return tools.Result{}, false
		}
	}
	for i := 0; i < len(calls); {
		j := i + 1
		if readOnly(calls[i]) {
			for j < len(calls) && readOnly(calls[j]) {
				j++
			}
		}
		var wg sync.WaitGroup
		// slots bounds the calls running at once; the loop waits for a
		// free one (a running call always finishes, cancelled or not).
		slots := make(chan struct{}, MaxParallel)
		running := make([]chan tools.Result, j-i)
		for k := i; k < j; k++ {
			c := calls[k]
			if c.Refused {
				results[k] = tools.Errorf("%s", loopguard.Refusal).Part(c.ID)
				failed(c)
				continue
			}
			if ctx.Err() == nil {
				select {
				case slots <- struct{}{}:
				case <-ctx.Done():
				}
			}
			if ctx.Err() != nil {
				results[k] = tools.Errorf("cancelled by the user before it ran").Part(c.ID)
				failed(c)
				continue
			}
			ch := make(chan tools.Result, 1)
			running[k-i] = ch
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				ch <- runSafe(ctx, o, c)
			}()
		}
		abandoned := false
		for k := i; k < j; k++ {
			if running[k-i] == nil {
				continue
			}
			c := calls[k]
			r, ok := wait(running[k-i])
			if !ok {
				abandoned = true
				o.Logger.Warn("abandoning a tool call that did not stop after cancel", "tool", c.Name)
				r = tools.Errorf("cancelled by the user; the call did not stop within %v and was abandoned", AbandonGrace)
				failed(c)
			}
			results[k] = r.Part(c.ID)
			ends[k] = r.EndTurn
		}
		if abandoned {
			o.Abandon(wg.Wait)
		} else {
			wg.Wait()
		}
		i = j
	}
	if !o.Images {
		dropImages(results)
	}
	return results, slices.DeleteFunc(ends, func(s string) bool { return s == "" })
}

// runSafe is run on a goroutine of its own: a panicking tool fails its
// call (and is logged) instead of taking the process down, since no
// handler's recovery covers this goroutine.
func runSafe(ctx context.Context, o Options, c Call) (res tools.Result) {
	defer func() {
		if p := recover(); p != nil {
			o.Logger.Error("tool panicked", "tool", c.Name, "panic", p, "stack", string(debug.Stack()))
			res = tools.Errorf("internal error running %s", c.Name)
			st := acp.ToolCallStatusFailed
			o.Update(acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(c.ID), Status: &st})
		}
	}()
	return run(ctx, o, c)
}

// run runs one call and reports its final tool_call_update.
func run(ctx context.Context, o Options, c Call) tools.Result {
	all := o.Tools()
	t := all[c.Name]
	var res tools.Result
	switch {
	case t == nil:
		names := make([]string, 0)
		for n := range all {
			names = append(names, n)
		}
		slices.Sort(names)
		res = tools.Errorf("unknown tool %q; available tools: %s", c.Name, strings.Join(names, ", "))
	case !json.Valid(c.Input):
		res = tools.Errorf("the arguments of %s are not valid JSON: %s", c.Name, tools.Truncate(string(c.Input), 200))
	default:
		tc := &tools.Call{ID: c.ID, Name: c.Name, Input: c.Input}
		runCtx, deny := ctx, ""
		if o.Pre != nil {
			runCtx, deny = o.Pre(ctx, c)
		}
		if deny != "" {
			res = tools.Errorf("%s", deny)
			break
		}
		res = t.Run(runCtx, o.Env, tc)
		if tc.Refusal != "" && res.IsError && len(res.Content) == 0 {
			res.Content = []acp.ToolCallContent{tools.TextContent(tc.Refusal)}
		}
		if o.Post != nil {
			o.Post(ctx, c, &res)
		}
	}
	if !res.Bounded {
		res.Text = tools.Bound(res.Text)
	}
	st := acp.ToolCallStatusCompleted
	if res.IsError {
		st = acp.ToolCallStatusFailed
	}
	upd := acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(c.ID), Status: &st}
	if len(res.Content) > 0 {
		upd.Content = res.Content
	} else if res.Text != "" {
		upd.Content = []acp.ToolCallContent{tools.TextContent(res.Text)}
	}
	if res.Raw != nil {
		upd.RawOutput = res.Raw
	}
	upd.Meta = res.Meta
	o.Update(upd)
	if res.After != nil {
		res.After()
		res.After = nil
	}
	return res
}

// dropImages replaces the images of tool results by a note, for a model
// that cannot read images.
func dropImages(parts []model.Part) {
	for i := range parts {
		for j, c := range parts[i].Content {
			if c.Type == model.PartImage {
				parts[i].Content[j] = model.Part{Type: model.PartText, Text: "[image not shown: this model cannot read images]"}
			}
		}
	}
}
