package oauth

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"acpd/mcpclient/internal/deadline"
)

// Config configures the authorization of a streamable HTTP server (MCP's
// authorization specification) through the MCP SDK's authorization-code
// flow with PKCE: protected-resource metadata discovery (also from
// WWW-Authenticate), authorization server metadata, then a pre-registered
// client, a client ID metadata document or dynamic client registration,
// whichever the authorization server supports, and step-up to the scopes a
// 403 asks for. Grant selects a grant that needs no person instead: the
// client credentials grant or the JWT bearer grant.
type Config struct {
	// Grant is "" for the authorization code flow, [GrantClientCredentials]
	// or [GrantJWTBearer].
	Grant string
	// ClientKey, with ClientID, authenticates the client at the token
	// endpoint with a signed JWT (private_key_jwt, RFC 7523) instead of a
	// secret (see [ParseClientKey]); only for Grant's grants.
	ClientKey crypto.Signer
	// Scopes are requested by Grant's grants (empty: those the server's
	// challenge or metadata names).
	Scopes []string
	// Assertion returns the assertion of [GrantJWTBearer] for the
	// authorization server issuer and the MCP server's resource URI: a
	// workload identity token, or [IDJAGAssertion].
	Assertion func(ctx context.Context, issuer, resource string) (string, error)

	// ClientID and ClientSecret name a client registered with the
	// authorization server beforehand (ClientSecret may be empty for a
	// public client). Empty means a client ID metadata document or dynamic
	// registration.
	ClientID, ClientSecret string
	// ClientMetadataURL is the https URL of acpd's client ID metadata
	// document, used when the authorization server accepts such documents.
	ClientMetadataURL string
	// ClientName is the name dynamic registration gives (empty: "acpd").
	ClientName string
	// RedirectURL is the redirect URI the authorization server sends the
	// user back to (a loopback listener, see [Loopback]).
	RedirectURL string
	// Authorize has the user visit authURL and returns the query of the
	// redirect it led to (code, state and, when sent, iss). It must return
	// when ctx ends.
	Authorize func(ctx context.Context, authURL string) (url.Values, error)
	// Token is a token obtained before (nil: none); SaveToken, if set, is
	// called with every new token (it must keep it secret).
	Token     *oauth2.Token
	SaveToken func(*oauth2.Token) error
	// TokenClient is the client Token was issued to: with it (and a
	// refresh token) an expired Token is refreshed, not authorized anew.
	// SaveTokenClient, if set, is called instead of SaveToken with the
	// first token of an authorization and its client.
	TokenClient     *TokenClient
	SaveTokenClient func(*oauth2.Token, *TokenClient) error
	// OnSaveError, if set, hears of a SaveToken or SaveTokenClient that
	// failed (with the error, which names no token): the new token is used
	// all the same, but a later process will not have it. Nil means a
	// failed save fails the request that obtained the token with that
	// error (what a login wants). It may be called concurrently and must
	// return promptly.
	OnSaveError func(error)

	// setupErr is why a configured grant cannot work (a missing secret).
	setupErr error
}

// AuthorizationTimeout bounds how long an authorization waits for the
// user; the connection attempt or tool call that needed it gets as long.
const AuthorizationTimeout = 5 * time.Minute

// tokenRefreshTimeout bounds one refresh of a stored token.
const tokenRefreshTimeout = 30 * time.Second

// NewHandler returns the handler that authorizes one connection to a
// streamable HTTP server with o, and the transport for the server's own
// requests: base, with the tokens DPoP-bound where the authorization
// server supports it (the OAuth requests, made over
// http.DefaultTransport, and the server's share one key per call). It
// fails when o cannot work (a missing secret, no way to authorize).
func NewHandler(o *Config, base http.RoundTripper) (auth.OAuthHandler, http.RoundTripper, error) {
	d, err := newDPoP()
	if err != nil {
		return nil, nil, err
	}
	h, err := oauthHandler(o, &http.Client{Transport: d.transport(http.DefaultTransport)})
	if err != nil {
		return nil, nil, err
	}
	return h, d.transport(base), nil
}

// oauthHandler returns the handler for o: the SDK's authorization code
// flow, or acpd's of Grant; its requests go through hc.
func oauthHandler(o *Config, hc *http.Client) (auth.OAuthHandler, error) {
	if o.setupErr != nil {
		return nil, o.setupErr
	}
	switch o.Grant {
	case "":
	case GrantClientCredentials:
		if o.ClientID == "" || (o.ClientSecret == "" && o.ClientKey == nil) {
			return nil, errors.New("the OAuth client credentials grant needs a client ID with a secret or a private key")
		}
		return &grantHandler{o: o, hc: hc}, nil
	case GrantJWTBearer:
		if o.Assertion == nil {
			return nil, errors.New("the OAuth JWT bearer grant needs an assertion")
		}
		return &grantHandler{o: o, hc: hc}, nil
	default:
		return nil, fmt.Errorf("unknown OAuth grant %q", o.Grant)
	}
	if o.Authorize == nil || o.RedirectURL == "" {
		return nil, errors.New("OAuth needs a redirect URL and an authorization step")
	}
	name := o.ClientName
	if name == "" {
		name = "acpd"
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		Client:      hc,
		RedirectURL: o.RedirectURL,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			// A person needs longer than a handshake or a call may take.
			deadline.Extend(ctx, AuthorizationTimeout)
			ctx, cancel := context.WithTimeoutCause(ctx, AuthorizationTimeout, errors.New("no authorization within "+AuthorizationTimeout.String()))
			defer cancel()
			if err := CheckPageURL(args.URL); err != nil {
				return nil, fmt.Errorf("the authorization page: %w", err)
			}
			q, err := o.Authorize(ctx, args.URL)
			if err != nil {
				return nil, err
			}
			if e := q.Get("error"); e != "" {
				return nil, fmt.Errorf("authorization refused: %s %s", e, q.Get("error_description"))
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{RedirectURIs: []string{o.RedirectURL}, ClientName: name},
		},
		NewTokenSource: func(ctx context.Context, c *oauth2.Config, t *oauth2.Token) (oauth2.TokenSource, error) {
			if o.SaveTokenClient != nil {
				err := o.SaveTokenClient(t, &TokenClient{ClientID: c.ClientID, ClientSecret: c.ClientSecret, TokenURL: c.Endpoint.TokenURL, AuthStyle: c.Endpoint.AuthStyle})
				if err := o.saveFailed(err); err != nil {
					return nil, err
				}
				return &savingSource{inner: c.TokenSource(ctx, t), o: o, last: t.AccessToken}, nil
			}
			return &savingSource{inner: c.TokenSource(ctx, t), o: o}, nil
		},
	}
	if o.ClientMetadataURL != "" {
		cfg.ClientIDMetadataDocumentConfig = &auth.ClientIDMetadataDocumentConfig{URL: o.ClientMetadataURL}
	}
	if o.ClientID != "" {
		cfg.PreregisteredClient = &oauthex.ClientCredentials{ClientID: o.ClientID}
		if o.ClientSecret != "" {
			cfg.PreregisteredClient.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: o.ClientSecret}
		}
	}
	switch tc := o.TokenClient; {
	case o.Token != nil && o.Token.RefreshToken != "" && tc != nil && tc.TokenURL != "":
		// Refreshed (before it expires) with the client it was issued to.
		c := &oauth2.Config{ClientID: tc.ClientID, ClientSecret: tc.ClientSecret, Endpoint: oauth2.Endpoint{TokenURL: tc.TokenURL, AuthStyle: tc.AuthStyle}}
		ctx := context.WithValue(context.Background(), oauth2.HTTPClient, &http.Client{Timeout: tokenRefreshTimeout})
		cfg.InitialTokenSource = &savingSource{inner: c.TokenSource(ctx, o.Token), o: o, last: o.Token.AccessToken}
	case o.Token != nil && o.Token.AccessToken != "":
		cfg.InitialTokenSource = oauth2.StaticTokenSource(o.Token)
	}
	return auth.NewAuthorizationCodeHandler(cfg)
}

// saveFailed handles the outcome err of a SaveToken or SaveTokenClient:
// nil when it worked or OnSaveError took the failure, else the failure.
func (o *Config) saveFailed(err error) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf("storing the OAuth token: %w", err)
	if o.OnSaveError != nil {
		o.OnSaveError(err)
		return nil
	}
	return err
}

// savingSource hands out the inner source's tokens and reports each new
// one (a refresh) to o.SaveToken. A new token whose save failed is handed
// out all the same when o.OnSaveError took the failure; else the failure
// is Token's error, once: the token is handed out from the next call on
// (it is valid, and the failure was reported).
type savingSource struct {
	inner oauth2.TokenSource
	o     *Config
	mu    sync.Mutex
	last  string
}

func (s *savingSource) Token() (*oauth2.Token, error) {
	t, err := s.inner.Token()
	if err != nil || s.o.SaveToken == nil {
		return t, err
	}
	s.mu.Lock()
	fresh := t.AccessToken != s.last
	s.last = t.AccessToken
	s.mu.Unlock()
	if fresh {
		if err := s.o.saveFailed(s.o.SaveToken(t)); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Loopback is a redirect listener on 127.0.0.1 for [Config]: RedirectURL
// points at it, and Authorize calls show with the authorization URL (to
// print it, or open it in the editor) and waits for the browser to come
// back with the code. Several authorizations may wait at once: a redirect
// goes to the one whose authorization URL carried its state (one without a
// state takes any). Close stops the listener.
type Loopback struct {
	RedirectURL string
	srv         *http.Server
	ln          net.Listener
	done        chan struct{}

	mu      sync.Mutex
	waiters map[string]chan url.Values // by the authorization URL's state
}

// NewLoopback listens on a free port of 127.0.0.1.
func NewLoopback() (*Loopback, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &Loopback{RedirectURL: "http://" + ln.Addr().String() + "/callback", ln: ln, done: make(chan struct{}), waiters: map[string]chan url.Values{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		l.mu.Lock()
		ch, ok := l.waiters[q.Get("state")]
		if !ok {
			ch, ok = l.waiters[""]
		}
		l.mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if !ok {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintln(w, "acpd: no authorization is waiting for this redirect.")
			return
		}
		select {
		case ch <- q:
		default: // one answer is enough
		}
		fmt.Fprintln(w, "acpd: authorization received; you can close this page.")
	})
	l.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(l.done)
		_ = l.srv.Serve(ln)
	}()
	return l, nil
}

// Authorize returns an OAuth.Authorize that calls show with the URL and
// waits for the redirect.
func (l *Loopback) Authorize(show func(authURL string)) func(context.Context, string) (url.Values, error) {
	return func(ctx context.Context, authURL string) (url.Values, error) {
		return l.wait(ctx, authURL, func(_ context.Context, u string) error {
			show(u)
			return nil
		})
	}
}

// ErrAuthorizationReceived is the cause of the context a [Loopback]'s show
// function runs under once the redirect arrived.
var ErrAuthorizationReceived = errors.New("the authorization redirect arrived")

// wait waits for the redirect of authURL while show runs (on its own
// goroutine, until it returns or its context ends): an error from show
// abandons the authorization; once the redirect arrives, show's context
// ends with the cause ErrAuthorizationReceived.
func (l *Loopback) wait(ctx context.Context, authURL string, show func(context.Context, string) error) (url.Values, error) {
	state := ""
	if u, err := url.Parse(authURL); err == nil {
		state = u.Query().Get("state")
	}
	ch := make(chan url.Values, 1)
	l.mu.Lock()
	if _, busy := l.waiters[state]; busy {
		l.mu.Unlock()
		return nil, errors.New("an authorization with this state is already waiting")
	}
	l.waiters[state] = ch
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.waiters, state)
		l.mu.Unlock()
	}()
	sctx, stop := context.WithCancelCause(ctx)
	shown := make(chan error, 1)
	go func() { shown <- show(sctx, authURL) }()
	var q url.Values
	var err error
	for q == nil && err == nil {
		select {
		case q = <-ch:
			stop(ErrAuthorizationReceived)
		case e := <-shown:
			shown = nil // show is done; keep waiting for the redirect
			if e != nil {
				err = e
			}
		case <-ctx.Done():
			err = context.Cause(ctx)
		}
	}
	stop(err)
	if shown != nil {
		<-shown
	}
	return q, err
}

// Close stops the listener and waits for it.
func (l *Loopback) Close() error {
	err := l.srv.Close()
	<-l.done
	return err
}
