package mcpclient

import (
	"net/url"
	"strings"
)

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
