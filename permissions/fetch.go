package permissions

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Origin is rawURL's origin as fetch rules name it: "scheme://host" or
// "scheme://host:port", lower-case, without a trailing dot in the host and
// with the port only when it is not the scheme's default (80 for http, 443
// for https). It is "" when rawURL is not an absolute http or https URL
// with a host.
func Origin(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return ""
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return ""
	}
	port := u.Port()
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return ""
		}
		port = strconv.FormatUint(n, 10)
	}
	if port == defaultPort(scheme) {
		port = ""
	}
	if port != "" {
		return scheme + "://" + net.JoinHostPort(host, port)
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return scheme + "://" + host
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// originPattern is a compiled Match of a rule on a fetch tool:
// "scheme://host[:port]", where host may be "*" (any host) or start with
// "*." (any subdomain, at any depth, of the rest but not the rest itself)
// and port may be "*" (any port). Without a port it matches the scheme's
// default port only.
type originPattern struct {
	any                          bool   // an empty Match: every call, with or without a URL
	none                         bool   // a Match that is no origin, on a rule that names other tools too
	scheme, host, port           string // host without "*."; port "" for the default
	subdomains, anyHost, anyPort bool
}

// compileOriginPattern compiles a fetch rule's Match.
func compileOriginPattern(m string) (originPattern, error) {
	bad := func(why string) (originPattern, error) {
		return originPattern{}, fmt.Errorf("match %q for a fetch tool must be an origin, scheme://host[:port] (host may be * or start with *., port may be *): %s", m, why)
	}
	scheme, rest, ok := strings.Cut(m, "://")
	if !ok {
		return bad("no scheme")
	}
	var op originPattern
	op.scheme = strings.ToLower(scheme)
	if op.scheme != "http" && op.scheme != "https" {
		return bad("the scheme is not http or https")
	}
	rest = strings.TrimSuffix(rest, "/")
	if strings.ContainsAny(rest, "/?#@\\") {
		return bad("it has a path, query, fragment or user")
	}
	host, port := rest, ""
	if i := strings.LastIndexByte(rest, ':'); i >= 0 && !strings.HasSuffix(rest, "]") {
		host, port = rest[:i], rest[i+1:]
		if port == "" {
			return bad("the port is empty")
		}
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	switch {
	case host == "*":
		op.anyHost = true
	case strings.HasPrefix(host, "*."):
		op.subdomains, host = true, host[2:]
	}
	if !op.anyHost {
		inner := host
		bracketed := strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]")
		if bracketed {
			inner = host[1 : len(host)-1]
		}
		if inner == "" || strings.ContainsAny(inner, "*?[]{} %") || bracketed && net.ParseIP(inner) == nil {
			return bad("the host is empty or has a wildcard other than a leading *.")
		}
		op.host = host
	}
	switch port {
	case "*":
		op.anyPort = true
	case "":
	default:
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 {
			return bad("the port is not a number from 1 to 65535")
		}
		op.port = strconv.FormatUint(n, 10)
		if op.port == defaultPort(op.scheme) {
			op.port = ""
		}
	}
	return op, nil
}

// match reports whether the pattern matches origin (an Origin result; ""
// matches only an empty Match).
func (op originPattern) match(origin string) bool {
	if op.any {
		return true
	}
	if op.none || origin == "" {
		return false
	}
	scheme, hostport, _ := strings.Cut(origin, "://")
	if scheme != op.scheme {
		return false
	}
	host, port := hostport, ""
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		host, port = h, p
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
	}
	if !op.anyPort && port != op.port {
		return false
	}
	switch {
	case op.anyHost:
		return true
	case op.subdomains:
		return strings.HasSuffix(host, "."+op.host)
	}
	return host == op.host
}

// errNoOrigin explains a fetch call whose URL has no origin.
var errNoOrigin = errors.New("not an absolute http or https URL")

// shownURL bounds a URL quoted in a reason.
func shownURL(u string) string {
	const max = 200
	if len(u) <= max {
		return u
	}
	n := max
	for n > 0 && u[n]&0xC0 == 0x80 {
		n--
	}
	return u[:n] + "…"
}

// decideFetch decides on a call of a fetch tool (web_fetch): rules and
// remembered choices match the origin of its URL. Full mode allows a fetch
// unless the session's sandbox keeps commands off the network
// (Call.Offline): acpd's own network tools obey the policy its commands
// do, so then it asks, naming the URL.
func (p *Policy) decideFetch(mode Mode, c Call, rem []compiledRule) Decision {
	if c.Tool == webSearch && c.URL == "" {
		return p.decideSearch(mode, c, rem)
	}
	origin := Origin(c.URL)
	shown := shownURL(c.URL)
	for r := range applying(p.rules, Deny, c.Tool) {
		if r.origin.match(origin) {
			return Decision{Action: Deny, Reason: fmt.Sprintf("denied by rule %s: %s", r.rule, shown)}
		}
	}
	for r := range applying(rem, Deny, c.Tool) {
		if r.origin.match(origin) {
			return Decision{Action: Deny, Reason: fmt.Sprintf("the user chose to always reject %s of %s in this project", c.Tool, cmp.Or(origin, "any URL"))}
		}
	}
	if origin == "" {
		return Decision{Action: Ask, Reason: fmt.Sprintf("%s was called with %q, %v", c.Tool, shown, errNoOrigin)}
	}
	for r := range applying(p.rules, Ask, c.Tool) {
		if r.origin.match(origin) {
			return Decision{Action: Ask, Reason: fmt.Sprintf("rule %s requires approval for %s", r.rule, shown)}
		}
	}
	for r := range applying(p.rules, Allow, c.Tool) {
		if r.origin.match(origin) {
			return Decision{Action: Allow, Reason: fmt.Sprintf("allowed by rule %s", r.rule)}
		}
	}
	// A remembered approval without an origin (stored before approvals
	// were scoped) would reach further than its prompt showed: it allows
	// nothing.
	for r := range applying(rem, Allow, c.Tool) {
		if r.rule.Match != "" && r.origin.match(origin) {
			return Decision{Action: Allow, Reason: fmt.Sprintf("the user chose to always allow %s in this project", origin)}
		}
	}
	var d Decision
	switch {
	case mode == ModeFull && c.Offline:
		d = Decision{Action: Ask, Reason: fmt.Sprintf("the sandbox keeps commands off the network, so fetching %s needs approval in full mode too", shown)}
	case mode == ModeFull:
		d = Decision{Action: Allow, Reason: "fetches are allowed in full mode", Default: true}
	default:
		d = Decision{Action: Ask, Reason: fmt.Sprintf("fetching %s needs approval in %s mode", shown, mode), Default: true}
	}
	if d.Action == Ask && p.canRemember() && c.Tool != "" {
		d.Remember = []Rule{{Tool: globEscape(c.Tool), Match: origin}}
	}
	return d
}

// webSearch is the fetch tool without a URL: the model provider searches
// the web for a query.
const webSearch = "web_search"

// decideSearch decides on web_search: rules and remembered choices match
// the tool (every query); full mode allows it unless the session's sandbox
// keeps commands off the network (Call.Offline), as for web_fetch.
func (p *Policy) decideSearch(mode Mode, c Call, rem []compiledRule) Decision {
	for r := range applying(p.rules, Deny, c.Tool) {
		return Decision{Action: Deny, Reason: fmt.Sprintf("denied by rule %s", r.rule)}
	}
	for range applying(rem, Deny, c.Tool) {
		return Decision{Action: Deny, Reason: "the user chose to always reject web searches in this project"}
	}
	for r := range applying(p.rules, Ask, c.Tool) {
		return Decision{Action: Ask, Reason: fmt.Sprintf("rule %s requires approval for web searches", r.rule)}
	}
	for r := range applying(p.rules, Allow, c.Tool) {
		return Decision{Action: Allow, Reason: fmt.Sprintf("allowed by rule %s", r.rule)}
	}
	for range applying(rem, Allow, c.Tool) {
		return Decision{Action: Allow, Reason: "the user chose to always allow web searches in this project"}
	}
	var d Decision
	switch {
	case mode == ModeFull && c.Offline:
		d = Decision{Action: Ask, Reason: "the sandbox keeps commands off the network, so a web search needs approval in full mode too"}
	case mode == ModeFull:
		d = Decision{Action: Allow, Reason: "web searches are allowed in full mode", Default: true}
	default:
		d = Decision{Action: Ask, Reason: fmt.Sprintf("a web search needs approval in %s mode", mode), Default: true}
	}
	if d.Action == Ask && p.canRemember() {
		d.Remember = []Rule{{Tool: c.Tool}}
	}
	return d
}
