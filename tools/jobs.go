package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"acpd/acp"
	"acpd/model"
	"acpd/terminal"
	"acpd/tools/clip"
)

// maxJobs bounds the background jobs a session runs at once.
const maxJobs = 16

// Jobs are a session's background commands (run_command with
// run_in_background): they run until stopped with job_stop or until the
// session ends ([Jobs.Close]). Jobs is safe for concurrent use.
type Jobs struct {
	log    *slog.Logger
	mu     sync.Mutex
	jobs   map[string]*job
	seq    int
	closed bool
	// saved are the files holding whole command outputs, removed by Close.
	saved []string
	// savedReal are their real paths (temporary directories are often
	// behind symbolic links, as /tmp is on macOS), for IsSaved.
	savedReal map[string]bool
	// outputs is where the session's private directory of saved outputs
	// is made (see NewJobs); dir is that directory, once made.
	outputs, dir string
}

// outputsMaxAge bounds how long a session's saved outputs outlive it when
// acpd could not remove them (it was killed): older session directories
// are removed when another session saves its first output.
const outputsMaxAge = 24 * time.Hour

// outputFile creates a file for a whole command output in the session's
// private directory (mode 0700, made on first use under j.outputs, or the
// temp directory when that is "").
func (j *Jobs) outputFile() (*os.File, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil, errJobsClosed
	}
	if j.dir == "" {
		parent := j.outputs
		if parent == "" {
			parent = os.TempDir()
		} else {
			if err := os.MkdirAll(parent, 0o700); err != nil {
				return nil, err
			}
			sweepOutputs(parent, time.Now().Add(-outputsMaxAge))
		}
		d, err := os.MkdirTemp(parent, "acpd-session-*")
		if err != nil {
			return nil, err
		}
		j.dir = d
	}
	return os.CreateTemp(j.dir, "output-*.txt")
}

// sweepOutputs removes the session directories in parent last changed
// before cutoff.
func sweepOutputs(parent string, cutoff time.Time) {
	ents, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "acpd-session-") {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
			_ = os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}

func (j *Jobs) addSaved(name string) {
	real, err := filepath.EvalSymlinks(name)
	if err != nil {
		real = name
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.saved = append(j.saved, name)
	if j.savedReal == nil {
		j.savedReal = map[string]bool{}
	}
	j.savedReal[real] = true
}

// IsSaved reports whether path (a real, symlink-resolved path) is one of
// the files holding a whole command output this session saved: the model
// reads those like a file of the project, without being asked about a path
// outside the roots.
func (j *Jobs) IsSaved(path string) bool {
	if j == nil {
		return false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.savedReal[path]
}

type job struct {
	id, command string
	term        Terminal
	// out collects a local terminal's whole output (nil in the editor).
	out *outputCollector
}

// NewJobs returns an empty job table; log (nil: discard) receives
// diagnostics. Whole command outputs are saved in a private directory
// (0700) the session makes under outputs, which must be hidden from
// sandboxed commands, so that no other session's commands can read them;
// Close removes it, and directories left by sessions that could not (acpd
// was killed) are removed after a day. With outputs "" the directory is
// made in the temp directory, which sandboxed commands can read.
func NewJobs(log *slog.Logger, outputs string) *Jobs {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Jobs{log: log, jobs: map[string]*job{}, outputs: outputs}
}

var errJobsClosed = errors.New("the session is closing")

// add registers a started terminal as a job and returns its ID; it fails
// (and the caller releases the terminal) when the table is full or closed.
func (j *Jobs) add(command string, t Terminal, out *outputCollector) (string, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.closed:
		return "", errJobsClosed
	case len(j.jobs) >= maxJobs:
		return "", fmt.Errorf("%d background jobs are running already; stop one with job_stop first", maxJobs)
	}
	j.seq++
	id := fmt.Sprintf("job%d", j.seq)
	j.jobs[id] = &job{id: id, command: command, term: t, out: out}
	return id, nil
}

func (j *Jobs) get(id string) (*job, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if jb := j.jobs[id]; jb != nil {
		return jb, nil
	}
	var ids []string
	for k := range j.jobs {
		ids = append(ids, k)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no background job %q; none is running", id)
	}
	return nil, fmt.Errorf("no background job %q; the jobs are %s", id, strings.Join(ids, ", "))
}

func (j *Jobs) remove(id string) {
	j.mu.Lock()
	delete(j.jobs, id)
	j.mu.Unlock()
}

// Close stops every job (killing its process group) and releases its
// terminal, waiting at most until ctx ends, and removes the files holding
// whole command outputs. Later jobs are refused.
func (j *Jobs) Close(ctx context.Context) {
	j.mu.Lock()
	j.closed = true
	all := j.jobs
	j.jobs = map[string]*job{}
	saved, dir := j.saved, j.dir
	j.saved = nil
	j.mu.Unlock()
	for _, f := range saved {
		_ = os.Remove(f)
	}
	if dir != "" {
		_ = os.RemoveAll(dir)
	}
	var wg sync.WaitGroup
	for _, jb := range all {
		wg.Go(func() {
			if err := jb.term.Release(ctx); err != nil && !errors.Is(err, terminal.ErrReleased) {
				j.log.Debug("releasing a background job", "job", jb.id, "err", err)
			}
			if jb.out != nil {
				jb.out.finish()
			}
		})
	}
	wg.Wait()
}

// startJob starts spec as a background job and answers at once.
func startJob(ctx context.Context, env Env, c *Call, spec terminal.Spec, command string) Result {
	out := newOutputCollector(env.Jobs())
	spec.Tee = out
	term, err := env.StartTerminal(ctx, spec)
	if err != nil {
		out.finish()
		return Errorf("starting the command: %v", err)
	}
	if term.InEditor {
		out.finish()
		out = nil
	}
	id, err := env.Jobs().add(command, term, out)
	if err != nil {
		if out != nil {
			defer out.finish()
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		_ = term.Release(rctx)
		return Errorf("%v", err)
	}
	if term.InEditor {
		env.Update(acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(c.ID), Content: []acp.ToolCallContent{{Terminal: &acp.Terminal{TerminalID: acp.TerminalID(term.ID())}}}})
	}
	return Result{Text: fmt.Sprintf("Started background job %s. It runs until you stop it with job_stop or the session ends. Read its output with job_output {\"id\": %q}.", id, id), Raw: map[string]any{"jobId": id}}
}

// jobReport renders a job's output (bounded, head and tail) and state.
func jobReport(ctx context.Context, env Env, jb *job) (string, bool, error) {
	out, err := jb.term.Output(ctx)
	if err != nil {
		return "", false, err
	}
	exited := out.Exit != nil
	var text string
	switch {
	case jb.out != nil:
		if exited {
			jb.out.finish() // drained: the collector has it all
		}
		text, _ = jb.out.report(!exited)
	case out.Truncated:
		text = terminal.RenderText([]byte(out.Output))
		text = tailOutput(env, text, "the editor's terminal keeps", commandOutputLimit)
	default:
		text, _ = boundOutput(env, terminal.RenderText([]byte(out.Output)))
	}
	var b strings.Builder
	b.WriteString(text)
	if text != "" && !strings.HasSuffix(text, "\n") {
		b.WriteByte('\n')
	}
	switch {
	case !exited:
		fmt.Fprintf(&b, "[job %s is still running]\n", jb.id)
	case out.Exit.ExitCode != nil:
		fmt.Fprintf(&b, "[job %s exited with code %d]\n", jb.id, *out.Exit.ExitCode)
	case out.Exit.Signal != nil:
		fmt.Fprintf(&b, "[job %s was killed by %s]\n", jb.id, *out.Exit.Signal)
	}
	return b.String(), exited, nil
}

// jobInput is job_output's and job_stop's arguments.
type jobInput struct {
	ID string `json:"id"`
}

func jobOutputTool() *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name:        "job_output",
			Description: "Show the output so far of a background job started with run_command's run_in_background (head and tail when long), and whether it is still running.",
			InputSchema: schema(`{"type":"object","properties":{"id":{"type":"string","description":"The job's id, such as job1"}},"required":["id"],"additionalProperties":false}`),
		},
		Kind:     acp.ToolKindRead,
		ReadOnly: true,
		Title:    jobTitle("Output of"),
		Run: func(ctx context.Context, env Env, c *Call) Result {
			in, err := DecodeInput[jobInput](c.Input)
			if err != nil {
				return Errorf("invalid job_output arguments: %v", err)
			}
			jb, err := env.Jobs().get(in.ID)
			if err != nil {
				return Errorf("%v", err)
			}
			env.Update(acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(c.ID), Status: new(acp.ToolCallStatusInProgress)})
			text, _, err := jobReport(ctx, env, jb)
			if err != nil {
				return Errorf("reading job %s: %v", in.ID, err)
			}
			return Result{Text: text, Bounded: true}
		},
	}
}

func jobStopTool() *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name:        "job_stop",
			Description: "Stop a background job (its whole process group) and show its last output.",
			InputSchema: schema(`{"type":"object","properties":{"id":{"type":"string","description":"The job's id, such as job1"}},"required":["id"],"additionalProperties":false}`),
		},
		Kind:  acp.ToolKindExecute,
		Title: jobTitle("Stop"),
		Run: func(ctx context.Context, env Env, c *Call) Result {
			in, err := DecodeInput[jobInput](c.Input)
			if err != nil {
				return Errorf("invalid job_stop arguments: %v", err)
			}
			jb, err := env.Jobs().get(in.ID)
			if err != nil {
				return Errorf("%v", err)
			}
			env.Update(acp.ToolCallUpdate{ToolCallID: acp.ToolCallID(c.ID), Status: new(acp.ToolCallStatusInProgress)})
			kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
			defer cancel()
			if err := jb.term.Kill(kctx); err != nil {
				return Errorf("stopping job %s: %v", in.ID, err)
			}
			// Its output drained, the exit status is known.
			_, _ = jb.term.WaitForExit(kctx)
			text, _, err := jobReport(kctx, env, jb)
			env.Jobs().remove(in.ID)
			_ = jb.term.Release(kctx)
			if jb.out != nil {
				jb.out.finish()
			}
			if err != nil {
				return Errorf("job %s stopped; reading its output failed: %v", in.ID, err)
			}
			return Result{Text: "Stopped.\n" + text, Bounded: true}
		},
	}
}

func jobTitle(verb string) func(json.RawMessage) string {
	return func(in json.RawMessage) string {
		var p struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(in, &p)
		return verb + " " + p.ID
	}
}

// boundOutput bounds command output for the model (see clip.HeadTail); when
// it cuts, the whole output is saved to a file in the session's private
// output directory, named in the note (removed when the session ends).
func boundOutput(env Env, text string) (string, bool) {
	if len(text) <= clip.OutputBytes {
		return text, false
	}
	return clip.HeadTail(text, clip.OutputBytes, saveText(env, text))
}

// saveText saves text to a file in the session's output directory and
// returns its name, or "" when it could not be saved.
func saveText(env Env, text string) string {
	f, err := env.Jobs().outputFile()
	if err != nil {
		return ""
	}
	_, werr := f.WriteString(text)
	if cerr := f.Close(); werr != nil || cerr != nil {
		_ = os.Remove(f.Name())
		return ""
	}
	env.Jobs().addSaved(f.Name())
	return f.Name()
}

// tailOutput bounds the output of a terminal that kept only its last
// limit bytes (truncated; keeper names it): the lines before are lost,
// so no line is numbered as in the whole output. The partial first line
// is dropped; when what is left is longer than the model is shown, its
// last lines are shown and all of it is saved to a file.
func tailOutput(env Env, text, keeper string, limit int) string {
	if i := strings.IndexByte(text, '\n'); i >= 0 && i < len(text)-1 {
		text = text[i+1:]
	}
	if len(text) <= clip.OutputBytes {
		return fmt.Sprintf("[the beginning of the output is lost: %s at most its last %d bytes; below are the output's last %d lines, whose numbers in the whole output are unknown]\n", keeper, limit, lineCount(int64(len(text)), int64(strings.Count(text, "\n")), lastByte(text))) + text
	}
	kept := lineCount(int64(len(text)), int64(strings.Count(text, "\n")), lastByte(text))
	tail := text[len(text)-clip.OutputBytes:]
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)-1 {
		tail = tail[i+1:]
	} else {
		tail = strings.ToValidUTF8(tail, "")
	}
	shown := lineCount(int64(len(tail)), int64(strings.Count(tail, "\n")), lastByte(tail))
	note := fmt.Sprintf("[… the beginning of the output is lost: %s at most its last %d bytes, whose first %d lines are cut here; below are the output's last %d lines (their numbers in the whole output are unknown).", keeper, limit, kept-shown, shown)
	if saved := saveText(env, text); saved != "" {
		note += fmt.Sprintf(" The %d lines kept are saved in %s (its line 1 is not the output's line 1): read them with read_file or search them with grep.", kept, saved)
	}
	return note + "]\n" + tail
}

func lastByte(s string) byte {
	if s == "" {
		return 0
	}
	return s[len(s)-1]
}
