// Package oauth is acpd's OAuth client for MCP servers (MCP's
// authorization specification): it authorizes the requests of one
// streamable HTTP connection and keeps the tokens between processes. It
// knows no MCP session, configuration file or editor: mcpclient builds a
// connection's handler with [NewHandler] from a [Config] its caller filled.
//
// What it does:
//
//   - The authorization code flow with PKCE through the MCP SDK
//     (discovery, a pre-registered client, a client ID metadata document or
//     dynamic registration, step-up to a 403's scopes); the person is asked
//     through [Config.Authorize], typically a [Loopback] listener on
//     127.0.0.1 that receives the redirect. An authorization waits at most
//     [AuthorizationTimeout], and pushes back the deadline of the
//     connection attempt or call that needed it (mcpclient's deadlines).
//   - The grants that need no person ([GrantClientCredentials],
//     [GrantJWTBearer]), with a client secret or a signed JWT
//     (private_key_jwt, [ParseClientKey]) and, for enterprise-managed
//     authorization, an ID-JAG from the IdP ([IDJAGAssertion]);
//     [GrantConfig] names such a grant as a configuration file does.
//   - DPoP (RFC 9449): tokens are bound to a per-connection key where the
//     authorization server supports it; otherwise nothing changes.
//   - The [TokenStore]: one file (mode 0600, replaced atomically under a
//     cross-process lock) of tokens by server name and URL, with the client
//     that refreshes each; [Stored] and [Session] are a session's setups,
//     which refresh a stored token and save every new one.
//
// Contracts:
//
//   - No token, secret or assertion reaches an error message or a log.
//   - A new token (an authorization's, a refresh's, a grant's) is handed
//     to [Config.SaveToken] (or SaveTokenClient) before it is used. A save
//     that fails is never dropped: it goes to [Config.OnSaveError] (and the
//     token is used all the same), or, without one, it fails the request
//     that obtained the token with the store's error.
//   - A setup that cannot work (a missing secret or key, no way to ask a
//     person) fails [NewHandler], saying what is missing, never a value.
//   - Every wait ends with its context: an authorization with the
//     connection attempt's or call's; a refresh, which oauth2 gives no
//     context, is bounded by a timeout of its own.
//
// The types are safe for concurrent use once built; a [Config] is not
// changed after it is handed to [NewHandler].
package oauth
