package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"acpd/acp"
	"acpd/mcpclient"
	"acpd/mcpclient/oauth"
)

// withOAuth gives the session's streamable HTTP servers their stored OAuth
// tokens and, for a server that needs a new authorization, the user's:
// through b.authorize, with a redirect listener on 127.0.0.1. Without a
// listener (none could be opened) a server that needs authorization fails
// naming `acpd mcp login`.
func (b *Bridge) withOAuth(servers []mcpclient.Server, tokens *oauth.TokenStore) []mcpclient.Server {
	if !slices.ContainsFunc(servers, func(s mcpclient.Server) bool { return s.Transport == mcpclient.TransportHTTP }) {
		return mcpclient.WithStoredOAuth(servers, tokens, b.tokenNotSaved)
	}
	l, err := oauth.NewLoopback()
	if err != nil {
		b.log.Warn("no redirect listener for MCP authorization; servers that need one fail", "session", b.id, "err", err)
		return mcpclient.WithStoredOAuth(servers, tokens, b.tokenNotSaved)
	}
	b.loopback = l
	return mcpclient.WithSessionOAuth(servers, tokens, l, b.authorize, b.tokenNotSaved)
}

// unsavedToken is a server's new OAuth token that could not be stored.
type unsavedToken struct {
	server string
	err    error
}

// tokenNotSaved hears of a server's new OAuth token (a refresh, or an
// authorization) that the token store could not keep: it is logged at
// error level and remembered until the next prompt's Await shows it (the
// session goes on with the token).
func (b *Bridge) tokenNotSaved(server string, err error) {
	b.log.Error("MCP OAuth token not stored; the next session will not have it", "session", b.id, "server", server, "err", err)
	b.mu.Lock()
	b.unsaved = append(b.unsaved, unsavedToken{server, err})
	b.mu.Unlock()
}

// authorize shows the user the authorization page of an MCP server that
// needs OAuth, once the session's reply is out: as an ACP URL elicitation
// where the editor takes them (declining it abandons the authorization;
// elicitation/complete follows once the redirect came back), else, and
// when the elicitation fails, in the log, as a failed tool call with the
// URL and as a notice where the client takes notices. It returns when ctx
// ends: the redirect came back, or the authorization was abandoned or
// timed out.
func (b *Bridge) authorize(ctx context.Context, server, authURL string) error {
	b.mu.Lock()
	b.authorizing[server]++
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.authorizing[server]--
		b.mu.Unlock()
	}()
	select {
	case <-b.replied:
	case <-ctx.Done():
		return nil
	}
	title := fmt.Sprintf("MCP server %s needs authorization", server)
	if peer, ok := b.s.Peer(); ok && b.urlElicit {
		id := acp.ElicitationID(newID("auth_"))
		req := acp.CreateElicitationRequest{
			Message: title + ": sign in on the page to let acpd use it; its tools join once you are done.",
			URL:     &acp.ElicitationURLMode{ElicitationID: id, URL: authURL, Session: &acp.ElicitationSessionScope{SessionID: b.id}},
		}
		resp, err := peer.CreateElicitation(ctx, &req)
		switch {
		case err == nil && resp.Accept == nil:
			return fmt.Errorf("the user did not authorize acpd with MCP server %q", server)
		case err == nil || ctx.Err() != nil:
			// Accepted, or the wait ended first (the redirect may come
			// back before the editor answers).
			<-ctx.Done()
			if errors.Is(context.Cause(ctx), oauth.ErrAuthorizationReceived) {
				if err := peer.CompleteElicitation(context.WithoutCancel(ctx), &acp.CompleteElicitationNotification{ElicitationID: id}); err != nil {
					b.log.Debug("elicitation/complete not sent", "session", b.id, "err", err)
				}
			}
			return nil
		}
		b.log.Warn("the editor did not show an MCP server's authorization page", "session", b.id, "server", server, "err", err)
	}
	b.log.Warn("an MCP server needs authorization: open the URL in a browser", "session", b.id, "server", server, "url", authURL)
	b.s.Card(title, "Open this page in a browser and sign in; acpd receives the answer on 127.0.0.1, connects the server and offers its tools from the next request:\n\n"+authURL)
	b.s.Notice(acp.NoticeSeverityWarning, title+": open "+authURL)
	<-ctx.Done()
	return nil
}
