// Package origin names a URL's origin as mcpclient compares them (headers
// go only to a server's own origin) and mcpclient/oauth keys DPoP nonces.
package origin

import (
	"net/url"
	"strings"
)

// Of returns u's origin: the scheme, host and port (the scheme's default
// when absent), lower-cased, as "scheme://host:port".
func Of(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Hostname()) + ":" + port
}
