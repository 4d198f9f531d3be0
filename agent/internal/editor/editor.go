// Package editor gives a session the editor's side channels over ACP: its
// file buffers (fs/read_text_file, fs/write_text_file) as an files.Editor, and
// its terminals (terminal/*) as terminal.Terminals with the same semantics
// as the local PTY terminals. Every call fails once the connection is gone.
package editor

import (
	"context"
	"errors"
	"fmt"
	"math"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/files"
	"acpd/terminal"
)

// Conn returns the connection to the editor, ok false once it is closed.
type Conn func() (acp.ClientConn, bool)

// FS is the editor's file channel for one session; it implements
// files.Editor.
type FS struct {
	Conn    Conn
	Session acp.SessionID
}

var errClosed = errors.New("editor connection closed")

// ReadTextFile reads path (or limit lines from line) as the editor has it.
func (e FS) ReadTextFile(ctx context.Context, path string, line, limit *int) (string, error) {
	peer, ok := e.Conn()
	if !ok {
		return "", errClosed
	}
	resp, err := peer.ReadTextFile(ctx, &acp.ReadTextFileRequest{SessionID: e.Session, Path: path, Line: u32p(line), Limit: u32p(limit)})
	if err != nil {
		return "", notInEditor(err)
	}
	return resp.Content, nil
}

// WriteTextFile replaces path's content through the editor.
func (e FS) WriteTextFile(ctx context.Context, path, content string) error {
	peer, ok := e.Conn()
	if !ok {
		return errClosed
	}
	_, err := peer.WriteTextFile(ctx, &acp.WriteTextFileRequest{SessionID: e.Session, Path: path, Content: content})
	return notInEditor(err)
}

// notInEditor marks the editor's "resource not found" answer (Zed's for a
// path outside its worktrees) as files.ErrNotInEditor, keeping its message.
func notInEditor(err error) error {
	var ae *jsonrpc.Error
	if errors.As(err, &ae) && ae.Code == int(acp.ErrorCodeResourceNotFound) {
		return fmt.Errorf("%w: %w", files.ErrNotInEditor, err)
	}
	return err
}

func u32p(p *int) *uint32 {
	if p == nil || *p < 0 {
		return nil
	}
	v := uint32(min(*p, math.MaxUint32))
	return &v
}

// editorTerminal is a command running in the editor's terminal.
type editorTerminal struct {
	conn Conn
	sid  acp.SessionID
	id   acp.TerminalID
}

// StartTerminal asks the editor to run spec in a terminal of session sid.
// Spec.BaseEnv is not sent: the editor's terminal starts from the editor's
// environment, with spec.Env added.
func StartTerminal(ctx context.Context, conn Conn, sid acp.SessionID, spec terminal.Spec) (terminal.Terminal, error) {
	peer, ok := conn()
	if !ok {
		return nil, errClosed
	}
	req := acp.CreateTerminalRequest{SessionID: sid, Command: spec.Command, Args: spec.Args}
	if spec.Cwd != "" {
		req.Cwd = &spec.Cwd
	}
	for _, e := range spec.Env {
		req.Env = append(req.Env, acp.EnvVariable{Name: e.Name, Value: e.Value})
	}
	if spec.OutputByteLimit > 0 {
		l := uint64(spec.OutputByteLimit)
		req.OutputByteLimit = &l
	}
	resp, err := peer.CreateTerminal(ctx, &req)
	if err != nil {
		return nil, err
	}
	return &editorTerminal{conn: conn, sid: sid, id: resp.TerminalID}, nil
}

func (t *editorTerminal) ID() string { return string(t.id) }

// peer returns the typed calls to the editor.
func (t *editorTerminal) peer() (acp.ClientConn, error) {
	peer, ok := t.conn()
	if !ok {
		return acp.ClientConn{}, errClosed
	}
	return peer, nil
}

func exitStatus(code *uint32, signal *string) *terminal.ExitStatus {
	if code == nil && signal == nil {
		return nil
	}
	es := &terminal.ExitStatus{Signal: signal}
	if code != nil {
		c := int(*code)
		es.ExitCode = &c
	}
	return es
}

func (t *editorTerminal) Output(ctx context.Context) (terminal.Output, error) {
	peer, err := t.peer()
	if err != nil {
		return terminal.Output{}, err
	}
	resp, err := peer.TerminalOutput(ctx, &acp.TerminalOutputRequest{SessionID: t.sid, TerminalID: t.id})
	if err != nil {
		return terminal.Output{}, err
	}
	out := terminal.Output{Output: resp.Output, Truncated: resp.Truncated}
	if resp.ExitStatus != nil {
		out.Exit = exitStatus(resp.ExitStatus.ExitCode, resp.ExitStatus.Signal)
		if out.Exit == nil {
			out.Exit = &terminal.ExitStatus{}
		}
	}
	return out, nil
}

func (t *editorTerminal) WaitForExit(ctx context.Context) (terminal.ExitStatus, error) {
	peer, err := t.peer()
	if err != nil {
		return terminal.ExitStatus{}, err
	}
	resp, err := peer.WaitForTerminalExit(ctx, &acp.WaitForTerminalExitRequest{SessionID: t.sid, TerminalID: t.id})
	if err != nil {
		return terminal.ExitStatus{}, err
	}
	if es := exitStatus(resp.ExitCode, resp.Signal); es != nil {
		return *es, nil
	}
	return terminal.ExitStatus{}, nil
}

func (t *editorTerminal) Kill(ctx context.Context) error {
	peer, err := t.peer()
	if err != nil {
		return err
	}
	_, err = peer.KillTerminal(ctx, &acp.KillTerminalRequest{SessionID: t.sid, TerminalID: t.id})
	return err
}

func (t *editorTerminal) Release(ctx context.Context) error {
	peer, err := t.peer()
	if err != nil {
		return err
	}
	_, err = peer.ReleaseTerminal(ctx, &acp.ReleaseTerminalRequest{SessionID: t.sid, TerminalID: t.id})
	return err
}
