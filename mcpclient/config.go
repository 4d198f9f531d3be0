package mcpclient

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"acpd/config"
)

// FromConfig converts the configuration's MCP servers, sorted by name. An
// empty transport means stdio with a command and streamable HTTP with a URL.
func FromConfig(cfg map[string]config.MCPServer) []Server {
	names := make([]string, 0, len(cfg))
	for n := range cfg {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]Server, 0, len(names))
	for _, n := range names {
		c := cfg[n]
		srv := Server{Name: n, URL: c.URL, Headers: c.Headers, Transport: c.Transport,
			ProtocolVersion: c.ProtocolVersion, TrustAnnotations: c.TrustAnnotations,
			StartupTimeout: time.Duration(c.StartupTimeoutSec) * time.Second,
			ToolTimeout:    time.Duration(c.ToolTimeoutSec) * time.Second}
		if len(c.Command) > 0 {
			srv.Command, srv.Args = c.Command[0], c.Command[1:]
		}
		for k, v := range c.Env {
			srv.Env = append(srv.Env, k+"="+v)
		}
		sort.Strings(srv.Env)
		switch {
		case srv.Transport != "":
		case srv.URL != "":
			srv.Transport = TransportHTTP
		default:
			srv.Transport = TransportStdio
		}
		if c.OAuth != nil {
			srv.OAuth = grantFromConfig(c.OAuth)
		}
		out = append(out, srv)
	}
	return out
}

// grantFromConfig is the OAuth of an [mcp_servers.NAME.oauth] table: the
// secret comes from acpd's environment, the key and the assertion from
// their files. A setup that cannot work fails when the server connects.
func grantFromConfig(c *config.MCPOAuth) *OAuth {
	o := &OAuth{Grant: c.Grant, ClientID: c.ClientID, Scopes: c.Scopes}
	if c.ClientSecretEnv != "" {
		if o.ClientSecret = os.Getenv(c.ClientSecretEnv); o.ClientSecret == "" {
			o.setupErr = fmt.Errorf("OAuth client secret: %s is not set", c.ClientSecretEnv)
		}
	}
	if c.PrivateKeyFile != "" {
		b, err := os.ReadFile(homePath(c.PrivateKeyFile))
		if err == nil {
			o.ClientKey, err = ParseClientKey(b)
		}
		if err != nil {
			o.setupErr = fmt.Errorf("OAuth private_key_file: %w", err)
		}
	}
	if c.AssertionFile != "" {
		path := homePath(c.AssertionFile)
		o.Assertion = func(context.Context, string, string) (string, error) { return readToken(path) }
	}
	if c.IDTokenFile != "" {
		path := homePath(c.IDTokenFile)
		idp := IdentityProvider{TokenURL: c.IdPTokenURL, ClientID: c.IdPClientID, Scopes: c.Scopes,
			IDToken: func(context.Context) (string, error) { return readToken(path) }}
		if c.IdPClientSecretEnv != "" {
			if idp.ClientSecret = os.Getenv(c.IdPClientSecretEnv); idp.ClientSecret == "" {
				o.setupErr = fmt.Errorf("OAuth IdP client secret: %s is not set", c.IdPClientSecretEnv)
			}
		}
		o.Assertion = IDJAGAssertion(nil, idp)
	}
	return o
}

// readToken reads a token file again for every grant (platforms rotate
// such tokens).
func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if a := strings.TrimSpace(string(b)); a != "" {
		return a, nil
	}
	return "", fmt.Errorf("%s is empty", path)
}

// homePath expands a leading "~/" to the user's home directory.
func homePath(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}

// scrubbed is an error whose message has an endpoint's credentials (user
// information and query, where tokens often travel) removed; it unwraps to
// the original.
type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// scrub removes rawURL's user information and query from err's message
// (net/http quotes the whole URL in its errors), so tokens in a server URL
// never reach logs, the editor or the model.
func scrub(err error, rawURL string) error {
	if err == nil || rawURL == "" {
		return err
	}
	u, perr := url.Parse(rawURL)
	if perr != nil || (u.User == nil && u.RawQuery == "" && u.Fragment == "") {
		return err
	}
	safe := *u
	safe.User, safe.RawQuery, safe.Fragment = nil, "", ""
	msg := err.Error()
	for _, form := range []string{rawURL, u.String(), u.Redacted()} {
		msg = strings.ReplaceAll(msg, form, safe.String())
	}
	if u.RawQuery != "" {
		msg = strings.ReplaceAll(msg, u.RawQuery, "…")
	}
	if u.User != nil {
		msg = strings.ReplaceAll(msg, u.User.String(), "…")
	}
	return &scrubbed{msg: msg, err: err}
}
