package mcpclient

import (
	"context"
	"strings"

	"acpd/mcpclient/oauth"
)

// WithStoredOAuth gives every streamable HTTP server without an OAuth
// setup or a configured Authorization header the [oauth.Stored] setup of
// store. saveFailed, if set, hears of a new token of the named server that
// could not be stored (see [oauth.Config.OnSaveError]: the token is used
// all the same); nil makes such a failure fail the request that obtained
// the token.
func WithStoredOAuth(servers []Server, store *oauth.TokenStore, saveFailed func(server string, err error)) []Server {
	return withOAuth(servers, saveFailed, func(s Server) *oauth.Config { return oauth.Stored(store, s.Name, s.URL) })
}

// WithSessionOAuth is [WithStoredOAuth] with the [oauth.Session] setup of
// store, l and show.
func WithSessionOAuth(servers []Server, store *oauth.TokenStore, l *oauth.Loopback, show func(ctx context.Context, server, authURL string) error, saveFailed func(server string, err error)) []Server {
	return withOAuth(servers, saveFailed, func(s Server) *oauth.Config { return oauth.Session(store, s.Name, s.URL, l, show) })
}

func withOAuth(servers []Server, saveFailed func(string, error), setup func(Server) *oauth.Config) []Server {
	out := make([]Server, len(servers))
	for i, s := range servers {
		if transportOf(s) == TransportHTTP && s.OAuth == nil && !hasAuthHeader(s.Headers) {
			s.OAuth = setup(s)
			if saveFailed != nil {
				name := s.Name
				s.OAuth.OnSaveError = func(err error) { saveFailed(name, err) }
			}
		}
		out[i] = s
	}
	return out
}

func hasAuthHeader(h map[string]string) bool {
	for k := range h {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}
