package sysprompt

import "sync"

// Cache keeps a session's system prompt byte for byte while its inputs
// other than the session's start stay the same (the mode, the
// configuration's instructions, the MCP servers' status), so providers'
// prompt caches keep hitting; the environment facts are gathered once. The
// zero Cache is empty; it is safe for concurrent use.
type Cache struct {
	mu        sync.Mutex
	key, text string

	gather sync.Once
	facts  string // set by gather
}

// Gather returns the environment facts, gathered by facts once: the
// first call runs it (its git commands), later and concurrent ones wait
// for that. A session may call it before its first model request needs
// the prompt, on a goroutine of its own, so that the git commands run
// while the turn waits for other things (its MCP servers).
func (c *Cache) Gather(facts func() string) string {
	c.gather.Do(func() { c.facts = facts() })
	return c.facts
}

// Prompt returns the system prompt for in, built again only when its
// mode, instructions or MCP status changed. in.Facts is ignored: they are
// the facts Gather gathers, with facts if it has not yet.
func (c *Cache) Prompt(in Input, facts func() string) string {
	key := in.Mode + "\x00" + in.Instructions + "\x00" + in.MCPStatus
	c.mu.Lock()
	if c.key == key && c.text != "" {
		defer c.mu.Unlock()
		return c.text
	}
	c.mu.Unlock()
	in.Facts = c.Gather(facts)
	text := Build(in)
	c.mu.Lock()
	c.key, c.text = key, text
	c.mu.Unlock()
	return text
}
