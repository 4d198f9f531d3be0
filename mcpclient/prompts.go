package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits on prompts and resources.
const (
	// maxPromptsPerServer bounds how many prompts one server may contribute;
	// listing stops there (a warning is logged).
	maxPromptsPerServer = 256
	// maxResources bounds one [Manager.Resources] listing across servers.
	maxResources = 500
	// maxResourceBytes bounds the text [Manager.ReadResource] returns.
	maxResourceBytes = 256 << 10
	// maxPromptNameLen bounds a prompt's qualified name.
	maxPromptNameLen = 64
)

// ErrUnknownPrompt is returned (wrapped) by [Manager.GetPrompt] for a
// qualified name that [Manager.Prompts] does not currently list.
var ErrUnknownPrompt = errors.New("mcpclient: unknown prompt")

// ErrUnknownServer is returned (wrapped) by [Manager.Resources] and
// [Manager.ReadResource] for a server name that is not connected.
var ErrUnknownServer = errors.New("mcpclient: unknown or disconnected server")

// Prompt is one prompt (a reusable message template) a connected server
// offers.
type Prompt struct {
	// Server is the Server.Name that offers the prompt; Name is the server's
	// own name for it.
	Server, Name string
	// QualifiedName is "<server>:<prompt>", suitable as a slash command: the
	// server part is sanitized like in [Tool.QualifiedName] (runs of '_'
	// collapsed, so it never contains ':'), the prompt part has every
	// character outside [A-Za-z0-9_-] replaced by '_'. It is at most 64
	// characters and unique among the Manager's prompts; names that collide
	// or are too long end in '_' and 8 hex digits derived from the server and
	// prompt names.
	QualifiedName string
	// Description is the server's description (may be empty).
	Description string
	// Arguments are the prompt's arguments, in the server's order.
	Arguments []PromptArg
}

// PromptArg is one argument of a [Prompt].
type PromptArg struct {
	Name, Description string
	Required          bool
}

// PromptMessage is one message of an expanded prompt.
type PromptMessage struct {
	// Role is "user" or "assistant".
	Role string
	// Text is the message's text; non-text content (images, audio,
	// resources) appears as a one-line summary, embedded text resources in
	// full.
	Text string
}

// Resource is one resource a connected server lists.
type Resource struct {
	Server, URI, Name, Description, MimeType string
}

// Prompts returns a snapshot of every prompt of every connected server,
// ordered by server start order, then in the order the server lists them.
func (m *Manager) Prompts() []Prompt {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.freshLocked()
	out := make([]Prompt, len(m.prompts))
	copy(out, m.prompts)
	return out
}

// GetPrompt expands the prompt with the given qualified name with args
// (argument name to value; the server checks required arguments).
// Canceling ctx abandons the request.
func (m *Manager) GetPrompt(ctx context.Context, qualified string, args map[string]string) ([]PromptMessage, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	m.freshLocked()
	ref, ok := m.promptLookup[qualified]
	m.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownPrompt, qualified)
	}
	if args == nil {
		args = map[string]string{}
	}
	c, err := m.live(ctx, ref.s)
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: prompt %q: %w", ref.s.cfg.Name, ref.name, err)
	}
	res, err := c.session.GetPrompt(ctx, &mcp.GetPromptParams{Name: ref.name, Arguments: args})
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: prompt %q: %w", c.server.Name, ref.name, scrub(err, c.server.URL))
	}
	out := make([]PromptMessage, 0, len(res.Messages))
	for _, msg := range res.Messages {
		if msg == nil {
			continue
		}
		out = append(out, PromptMessage{Role: string(msg.Role), Text: contentText(msg.Content)})
	}
	return out, nil
}

// Resources lists the resources of the connected server named server, or
// of every connected server when server is empty, following pagination. At
// most 500 resources are returned in all; the listing stops there. A server
// that does not offer resources contributes none. When some servers fail,
// the resources of the others are returned with an error naming the
// failed ones.
func (m *Manager) Resources(ctx context.Context, server string) ([]Resource, error) {
	return listResources(ctx, m, server, "resources",
		func(c *conn) iter.Seq2[*mcp.Resource, error] { return c.session.Resources(ctx, nil) },
		func(c *conn, r *mcp.Resource) (Resource, bool) {
			return Resource{Server: c.server.Name, URI: r.URI, Name: r.Name, Description: r.Description, MimeType: r.MIMEType}, r.URI != ""
		})
}

// listResources lists, following pagination, what list yields for the
// connected server named server, or for every connected server when server
// is empty, among the servers that offer resources: at most maxResources
// in all, converted by conv (a nil element or one conv refuses is
// skipped). When some servers fail, the others' are returned with an error
// naming the failed ones and what (resources, resource templates).
func listResources[T, R any](ctx context.Context, m *Manager, server, what string,
	list func(*conn) iter.Seq2[*T, error], conv func(*conn, *T) (R, bool)) ([]R, error) {
	conns, err := m.connsFor(ctx, server)
	if err != nil {
		return nil, err
	}
	var out []R
	var errs []error
	for _, c := range conns {
		if caps := c.session.InitializeResult().Capabilities; caps == nil || caps.Resources == nil {
			continue
		}
		for x, err := range list(c) {
			if err != nil {
				errs = append(errs, fmt.Errorf("mcp server %q: listing %s: %w", c.server.Name, what, scrub(err, c.server.URL)))
				break
			}
			if len(out) == maxResources {
				return out, errors.Join(errs...)
			}
			if x == nil {
				continue
			}
			if r, ok := conv(c, x); ok {
				out = append(out, r)
			}
		}
	}
	return out, errors.Join(errs...)
}

// ReadResource reads the resource uri of the connected server named server.
// Text contents are joined with newlines (each preceded by its URI when
// there are several); binary contents appear as a one-line summary with
// their size and MIME type. The text is cut at 256 KiB, with a note saying
// so. Canceling ctx abandons the request.
func (m *Manager) ReadResource(ctx context.Context, server, uri string) (string, error) {
	if server == "" {
		return "", fmt.Errorf("%w: empty server name", ErrUnknownServer)
	}
	conns, err := m.connsFor(ctx, server)
	if err != nil {
		return "", err
	}
	c := conns[0]
	res, err := c.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", fmt.Errorf("mcp server %q: reading resource: %w", c.server.Name, scrub(err, c.server.URL))
	}
	return resourceText(res.Contents), nil
}

// resourceText renders resource contents for the model, bounded.
func resourceText(contents []*mcp.ResourceContents) string {
	var parts []string
	for _, rc := range contents {
		if rc == nil {
			continue
		}
		var s string
		if rc.Blob != nil {
			s = fmt.Sprintf("[binary resource %s, %s, %d bytes]", rc.URI, orUnknown(rc.MIMEType), len(rc.Blob))
		} else {
			s = rc.Text
			if len(contents) > 1 {
				s = "[resource " + rc.URI + "]\n" + s
			}
		}
		parts = append(parts, s)
	}
	return truncate(strings.Join(parts, "\n"), maxResourceBytes)
}

// truncate cuts s to at most max bytes at a UTF-8 boundary, adding a note
// with the original size.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	note := "\n[… truncated: " + strconv.Itoa(len(s)) + " bytes in all …]"
	cut := max - len(note)
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + note
}

// connsFor returns the connection of the server named server (restarting
// it when it lost its connection), or those of every ready server when
// server is empty.
func (m *Manager) connsFor(ctx context.Context, server string) ([]*conn, error) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrClosed
	}
	var out []*conn
	var named *srv
	for _, s := range m.servers {
		switch {
		case server == "" && s.state == StateReady:
			out = append(out, s.c)
		case server != "" && s.cfg.Name == server && (s.state == StateReady || s.state == StateRestarting):
			named = s
		}
	}
	m.mu.Unlock()
	if server == "" {
		return out, nil
	}
	if named == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownServer, server)
	}
	c, err := m.live(ctx, named)
	if err != nil {
		return nil, err
	}
	return []*conn{c}, nil
}

// listPrompts lists every prompt of c's server, following pagination.
func (m *Manager) listPrompts(ctx context.Context, c *conn) ([]*mcp.Prompt, error) {
	if caps := c.session.InitializeResult().Capabilities; caps == nil || caps.Prompts == nil {
		return nil, nil
	}
	var prompts []*mcp.Prompt
	for p, err := range c.session.Prompts(ctx, nil) {
		if err != nil {
			return nil, err
		}
		if len(prompts) == maxPromptsPerServer {
			m.log.Warn("server lists too many prompts; ignoring the rest", "server", c.server.Name, "limit", maxPromptsPerServer)
			break
		}
		if p != nil && p.Name != "" {
			prompts = append(prompts, p)
		}
	}
	return prompts, nil
}

// refreshPromptList re-lists c's prompts after prompts/list_changed.
func (m *Manager) refreshPromptList(s *srv, c *conn) {
	ctx, cancel := context.WithTimeout(m.ctx, refreshTimeout)
	prompts, err := m.listPrompts(ctx, c)
	cancel()
	if err != nil {
		m.log.Warn("refreshing prompts failed", "server", c.server.Name, "err", scrub(err, c.server.URL))
		return
	}
	m.mu.Lock()
	if m.closed || s.c != c {
		m.mu.Unlock()
		return
	}
	s.prompts = prompts
	m.rebuildPromptsLocked()
	m.mu.Unlock()
	m.notifyPromptsChanged()
}

func (m *Manager) notifyPromptsChanged() {
	if m.opts.OnPromptsChanged != nil {
		m.opts.OnPromptsChanged()
	}
}

// rebuildPromptsLocked recomputes m.prompts and m.promptLookup from m.conns.
func (m *Manager) rebuildPromptsLocked() {
	keys, defs, owners := everyServers(m.servers, func(s *srv) []*mcp.Prompt { return s.prompts }, func(p *mcp.Prompt) string { return p.Name })
	names := promptNames(keys)
	m.prompts = make([]Prompt, 0, len(keys))
	m.promptLookup = make(map[string]toolRef, len(keys))
	for i, p := range defs {
		pr := Prompt{Server: keys[i].server, Name: p.Name, QualifiedName: names[i], Description: p.Description}
		for _, a := range p.Arguments {
			if a != nil && a.Name != "" {
				pr.Arguments = append(pr.Arguments, PromptArg{Name: a.Name, Description: a.Description, Required: a.Required})
			}
		}
		m.prompts = append(m.prompts, pr)
		m.promptLookup[names[i]] = toolRef{s: owners[i], name: p.Name}
	}
}

// promptNames assigns each key its slash-command name, in order: plain
// "<server>:<prompt>" when it fits and is unique, otherwise shortened and
// suffixed as qualifiedNames does. Earlier keys win a plain name.
func promptNames(keys []toolKey) []string {
	return uniqueNames(keys, maxPromptNameLen, func(k toolKey) string {
		return serverPart(k.server) + ":" + sanitize(k.tool)
	})
}
