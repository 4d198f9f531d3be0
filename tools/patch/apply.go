package patch

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// Files is the file access a patch is applied through (in acpd: the
// session's file broker, behind the same permission and stale-write rules as
// the other edit tools). Paths are passed as the patch wrote them.
type Files interface {
	// Read returns the current content of the file; a missing file's error
	// satisfies errors.Is(err, fs.ErrNotExist).
	Read(ctx context.Context, path string) (string, error)
	// Write creates or replaces the file (creating parent directories).
	Write(ctx context.Context, path, content string) error
	// Remove deletes the file.
	Remove(ctx context.Context, path string) error
}

// Change is the net effect of a patch on one file.
type Change struct {
	// Op is Add for a file that did not exist, Delete for one that no
	// longer exists, Update otherwise (a moved file is a Delete of its old
	// path and an Add, or Update, of the new one).
	Op   Op
	Path string
	// Old and New are the content before and after ("" when absent).
	Old, New string
}

// ApplyError is a patch that does not fit the files it changes. Nothing was
// written. Its message is written for the model.
type ApplyError struct{ Msg string }

func (e *ApplyError) Error() string { return e.Msg }

// Plan computes the changes p makes, reading files through read, without
// writing anything. Hunks apply in order, each to the result of the previous
// ones, so a patch may add a file and then update it. The changes are listed
// in the order their paths first appear in the patch.
func Plan(ctx context.Context, p *Patch, read func(ctx context.Context, path string) (string, error)) ([]Change, error) {
	type state struct {
		path                 string
		old, cur             string
		oldExists, curExists bool
	}
	files := map[string]*state{}
	var order []*state
	load := func(path string) (*state, error) {
		key := filepath.Clean(path)
		if s, ok := files[key]; ok {
			return s, nil
		}
		s := &state{path: path}
		c, err := read(ctx, path)
		switch {
		case err == nil:
			s.old, s.cur, s.oldExists, s.curExists = c, c, true, true
		case errors.Is(err, fs.ErrNotExist):
		default:
			return nil, err
		}
		files[key] = s
		order = append(order, s)
		return s, nil
	}
	for _, h := range p.Hunks {
		s, err := load(h.Path)
		if err != nil {
			return nil, err
		}
		switch h.Op {
		case Add:
			s.cur, s.curExists = h.Content, true
		case Delete:
			if !s.curExists {
				return nil, &ApplyError{fmt.Sprintf("cannot delete %s: the file does not exist", h.Path)}
			}
			s.cur, s.curExists = "", false
		case Update:
			if !s.curExists {
				return nil, &ApplyError{fmt.Sprintf("cannot update %s: the file does not exist (use '%s' to create it)", h.Path, addMarker)}
			}
			next, err := UpdateText(s.cur, h.Chunks, h.Path)
			if err != nil {
				return nil, err
			}
			if h.MoveTo == "" || filepath.Clean(h.MoveTo) == filepath.Clean(h.Path) {
				s.cur = next
				break
			}
			d, err := load(h.MoveTo)
			if err != nil {
				return nil, err
			}
			s.cur, s.curExists = "", false
			d.cur, d.curExists = next, true
		default:
			return nil, &ApplyError{fmt.Sprintf("unknown operation %q", h.Op)}
		}
	}
	var out []Change
	for _, s := range order {
		switch {
		case !s.oldExists && s.curExists:
			out = append(out, Change{Op: Add, Path: s.path, New: s.cur})
		case s.oldExists && !s.curExists:
			out = append(out, Change{Op: Delete, Path: s.path, Old: s.old})
		case s.oldExists && s.curExists:
			out = append(out, Change{Op: Update, Path: s.path, Old: s.old, New: s.cur})
		}
	}
	return out, nil
}

// Apply plans p (see [Plan]) and, if every hunk fits, performs the changes:
// first the writes, then the removals, so that a move never loses content.
// It returns the changes performed; on a write error those before the
// failing one were performed and the error names the file.
func Apply(ctx context.Context, p *Patch, f Files) ([]Change, error) {
	changes, err := Plan(ctx, p, f.Read)
	if err != nil {
		return nil, err
	}
	var done []Change
	for _, c := range changes {
		if c.Op == Delete {
			continue
		}
		if err := f.Write(ctx, c.Path, c.New); err != nil {
			return done, fmt.Errorf("writing %s: %w", c.Path, err)
		}
		done = append(done, c)
	}
	for _, c := range changes {
		if c.Op != Delete {
			continue
		}
		if err := f.Remove(ctx, c.Path); err != nil {
			return done, fmt.Errorf("deleting %s: %w", c.Path, err)
		}
		done = append(done, c)
	}
	return done, nil
}

// UpdateText applies an Update's chunks to content. The content's line
// endings (LF or CRLF, whichever dominates) and byte order mark are kept;
// the result ends with a newline. path only labels error messages.
func UpdateText(content string, chunks []Chunk, path string) (string, error) {
	bom := ""
	if strings.HasPrefix(content, "\ufeff") {
		bom, content = "\ufeff", content[len("\ufeff"):]
	}
	eol := "\n"
	if crlf := strings.Count(content, "\r\n"); crlf > 0 && 2*crlf >= strings.Count(content, "\n") {
		eol = "\r\n"
	}
	lines := strings.Split(strings.ReplaceAll(content, "\r\n", "\n"), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	type repl struct {
		at, n int
		with  []string
	}
	var rs []repl
	next := 0 // chunks match at or after the end of the previous one
	for ci, c := range chunks {
		if c.Context != "" {
			i := Seek(lines, []string{c.Context}, next, false)
			if i < 0 {
				return "", &ApplyError{fmt.Sprintf("%s: chunk %d: could not find the context line %q%s", path, ci+1, c.Context, nearest(lines, []string{c.Context}, next))}
			}
			next = i + 1
		}
		if len(c.Old) == 0 {
			at := len(lines) // no context: append at the end
			if c.Context != "" && !c.EOF {
				at = next // right after the context line
			}
			rs = append(rs, repl{at, 0, c.New})
			continue
		}
		old, with := c.Old, c.New
		i := Seek(lines, old, next, c.EOF)
		if i < 0 && old[len(old)-1] == "" {
			// A trailing empty line often stands for the final newline.
			old = old[:len(old)-1]
			if len(with) > 0 && with[len(with)-1] == "" {
				with = with[:len(with)-1]
			}
			if len(old) > 0 {
				i = Seek(lines, old, next, c.EOF)
			} else {
				i = len(lines)
			}
		}
		if i < 0 {
			return "", &ApplyError{fmt.Sprintf("%s: chunk %d: could not find the lines to change:\n%s%s", path, ci+1, strings.Join(c.Old, "\n"), nearest(lines, c.Old, next))}
		}
		rs = append(rs, repl{i, len(old), with})
		next = i + len(old)
	}
	for k := len(rs) - 1; k >= 0; k-- {
		r := rs[k]
		lines = append(lines[:r.at], append(append([]string(nil), r.with...), lines[r.at+r.n:]...)...)
	}
	if len(lines) == 0 {
		return bom, nil
	}
	return bom + strings.Join(lines, eol) + eol, nil
}

// nearest describes where in lines (at or after from) pattern comes
// closest to matching, as numbered lines, for an error message.
func nearest(lines, pattern []string, from int) string {
	best, score := -1, 0
	for i := from; i < len(lines); i++ {
		s := 0
		for j := 0; j < len(pattern) && i+j < len(lines); j++ {
			if norm(lines[i+j]) == norm(pattern[j]) {
				s++
			}
		}
		if s > score {
			best, score = i, s
		}
	}
	if best < 0 {
		if from > 0 {
			return fmt.Sprintf("\n(nothing similar after line %d, where the previous chunk or context ended; chunks must be in file order)", from)
		}
		return "\n(nothing similar in the file; read it again)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nThe closest lines in the file (%d of %d lines similar):\n", score, len(pattern))
	lo, hi := max(best-1, 0), min(best+len(pattern)+1, len(lines))
	for i := lo; i < hi; i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i+1, lines[i])
	}
	return strings.TrimSuffix(b.String(), "\n")
}
