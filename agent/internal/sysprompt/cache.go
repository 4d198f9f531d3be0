package sysprompt

import "sync"

// Cache keeps a session's system prompt byte for byte while its inputs
// other than the session's start stay the same (the mode, the
// configuration's instructions, the MCP servers' status), so providers'
// prompt caches keep hitting; the environment facts are gathered once. The
// zero Cache is empty; it is safe for concurrent use.
type Cache struct {
	mu               sync.Mutex
	key, text, facts string
}

// Prompt returns the system prompt for in, built again only when its
// mode, instructions or MCP status changed. in.Facts is ignored: facts
// gathers them, once.
func (c *Cache) Prompt(in Input, facts func() string) string {
	key := in.Mode + "\x00" + in.Instructions + "\x00" + in.MCPStatus
	c.mu.Lock()
	if c.key == key && c.text != "" {
		defer c.mu.Unlock()
		return c.text
	}
	in.Facts = c.facts
	c.mu.Unlock()
	if in.Facts == "" {
		in.Facts = facts()
	}
	text := Build(in)
	c.mu.Lock()
	c.key, c.text, c.facts = key, text, in.Facts
	c.mu.Unlock()
	return text
}
