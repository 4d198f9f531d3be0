// Package listing answers ACP's session/list from a session store: pages
// of PageSize sessions, newest first as the store lists them, with an
// opaque cursor (session.Page), and an entry for a session that another
// acpd process (or connection) has open marked so. It keeps no state; it is
// safe for concurrent use as the store is.
package listing

import (
	"fmt"
	"path/filepath"
	"time"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/session"
)

// PageSize is the number of sessions per session/list page.
const PageSize = 50

// State is what this connection knows of a stored session.
type State int

const (
	// Closed: not open in this connection.
	Closed State = iota
	// Open: open here and in use.
	Open
	// OpenEmpty: open here and never prompted (an editor's fresh chat);
	// it is not listed, since resuming it resumes nothing.
	OpenEmpty
)

// List answers p from st. state says whether a session is open here (in
// this connection), and whether it is still empty (those are left out); the
// others held elsewhere carry
// {"acpd": {"openElsewhere": true, "holder": "acpd pid 1234 (since …)"}} as
// their _meta, since loading them fails until they are closed there. A
// relative cwd filter and an invalid cursor are invalid-params errors; a
// store failure is returned as it is.
func List(store *session.Store, p *acp.ListSessionsRequest, state func(acp.SessionID) State) (*acp.ListSessionsResponse, error) {
	var f session.Filter
	if p.Cwd != nil {
		if !filepath.IsAbs(*p.Cwd) {
			return nil, invalidParams(fmt.Sprintf("cwd must be an absolute path, got %q", *p.Cwd))
		}
		f.Cwd = *p.Cwd
	}
	metas, err := store.List(f)
	if err != nil {
		return nil, err
	}
	cursor := ""
	if p.Cursor != nil {
		cursor = *p.Cursor
	}
	page, next, err := session.Page(metas, cursor, PageSize)
	if err != nil {
		return nil, invalidParams("invalid cursor")
	}
	resp := &acp.ListSessionsResponse{Sessions: []acp.SessionInfo{}}
	for _, m := range page {
		info := acp.SessionInfo{SessionID: acp.SessionID(m.ID), Cwd: m.Cwd, AdditionalDirectories: m.AdditionalDirectories}
		st := state(info.SessionID)
		if st == OpenEmpty {
			continue
		}
		if m.Title != "" {
			t := m.Title
			info.Title = &t
		}
		if !m.UpdatedAt.IsZero() {
			u := m.UpdatedAt.UTC().Format(time.RFC3339)
			info.UpdatedAt = &u
		}
		if st == Closed {
			if h := store.Holder(m.ID); h != nil {
				info.Meta = map[string]any{"acpd": map[string]any{"openElsewhere": true, "holder": h.Holder}}
			}
		}
		resp.Sessions = append(resp.Sessions, info)
	}
	if next != "" {
		resp.NextCursor = &next
	}
	return resp, nil
}

func invalidParams(msg string) error {
	return &jsonrpc.Error{Code: int(acp.ErrorCodeInvalidParams), Message: msg}
}
