package body

import (
	"bytes"
	"sync"

	"acpd/model"
)

// ToolMemo keeps the encodings of the tool lists a dialect sent, so that
// a request whose tools equal an earlier request's (every request of a
// session, until a server's tools change) writes the kept bytes instead
// of encoding every schema again: twenty MCP servers offer eighty schemas,
// each compacted and validated by encoding/json per request. The zero
// value is ready to use; a ToolMemo is safe for concurrent use and keeps
// the lists of the last few sessions that used it.
type ToolMemo struct {
	mu   sync.Mutex
	e    [toolMemoEntries]toolEntry
	next int // the entry Fragment replaces when all are taken
}

// toolMemoEntries is how many tool lists a ToolMemo keeps: a few sessions
// (or sub-agents with their own tools) sharing one backend each find
// theirs.
const toolMemoEntries = 4

type toolEntry struct {
	key  any
	defs []model.ToolDef // a copy, schemas included
	f    *Fragment
}

// Fragment returns the fragment encode made for a list of tools equal to
// defs (names, descriptions and schemas, byte for byte) under key, or
// calls encode, which must encode defs (everything else its encoding
// depends on belongs in key), and keeps its fragment.
func (m *ToolMemo) Fragment(key any, defs []model.ToolDef, encode func() (*Fragment, error)) (*Fragment, error) {
	m.mu.Lock()
	for i := range m.e {
		if e := &m.e[i]; e.f != nil && e.key == key && sameTools(e.defs, defs) {
			f := e.f
			m.mu.Unlock()
			return f, nil
		}
	}
	m.mu.Unlock()
	f, err := encode()
	if err != nil {
		return nil, err
	}
	kept := make([]model.ToolDef, len(defs))
	for i, d := range defs {
		kept[i] = model.ToolDef{Name: d.Name, Description: d.Description, InputSchema: bytes.Clone(d.InputSchema)}
	}
	m.mu.Lock()
	m.e[m.next] = toolEntry{key: key, defs: kept, f: f}
	m.next = (m.next + 1) % len(m.e)
	m.mu.Unlock()
	return f, nil
}

// sameTools reports whether a and b list the same tools in the same order.
func sameTools(a, b []model.ToolDef) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || a[i].Description != b[i].Description || !bytes.Equal(a[i].InputSchema, b[i].InputSchema) {
			return false
		}
	}
	return true
}
