package oauth

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
)

// ErrUnsafeURL is returned by [CheckPageURL] for a URL a server may not send
// a person to.
var ErrUnsafeURL = errors.New("refused URL")

// CheckPageURL reports whether raw, a URL an MCP server (or its
// authorization server) asks the user to open (a URL elicitation, an
// authorization page), may be shown: only https:
// URLs, and http: URLs to a loopback host (local OAuth redirects and
// development servers) pass. Anything else (javascript:, data:, file:,
// custom schemes, plain http to another host, URLs with user info, which
// disguise the real host) is refused with an error wrapping ErrUnsafeURL
// that says why.
func CheckPageURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: it does not parse: %v", ErrUnsafeURL, err)
	}
	switch scheme := strings.ToLower(u.Scheme); {
	case scheme == "https":
	case scheme == "http":
		if !loopbackHost(u.Hostname()) {
			return fmt.Errorf("%w: http: is allowed only to a loopback address, not %q (use https)", ErrUnsafeURL, u.Hostname())
		}
	case scheme == "":
		return fmt.Errorf("%w: it has no scheme; only https: (or http: to a loopback address) is allowed", ErrUnsafeURL)
	default:
		return fmt.Errorf("%w: scheme %q is not allowed; only https: (or http: to a loopback address) is", ErrUnsafeURL, scheme+":")
	}
	if u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("%w: it names no host", ErrUnsafeURL)
	}
	if u.User != nil {
		return fmt.Errorf("%w: it carries user information before the host, which disguises where it leads", ErrUnsafeURL)
	}
	return nil
}

// loopbackHost reports whether host (without port) is a loopback address or
// localhost.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
