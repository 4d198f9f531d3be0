package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"
)

// The grants of [Config.Grant] besides the authorization code flow.
const (
	// GrantClientCredentials is the client credentials grant (RFC 6749
	// §4.4, MCP's OAuth client-credentials extension): a service account
	// with a client secret or a private key, no person involved.
	GrantClientCredentials = "client_credentials"
	// GrantJWTBearer is the JWT bearer grant (RFC 7523): the assertion
	// comes from [Config.Assertion], a workload identity token or the ID-JAG
	// of an enterprise IdP's token exchange ([IDJAGAssertion]).
	GrantJWTBearer = "jwt_bearer"
)

const (
	grantTypeJWTBearer     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	grantTypeTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	clientAssertionJWT     = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	tokenTypeIDToken       = "urn:ietf:params:oauth:token-type:id_token"
	tokenTypeIDJAG         = "urn:ietf:params:oauth:token-type:id-jag"
	// grantTimeout bounds one token request made on a refresh, which
	// oauth2.TokenSource gives no context for.
	grantTimeout = 30 * time.Second
)

// grantHandler is the auth.OAuthHandler of the grants that need no
// person: on a 401 it discovers the authorization server (protected
// resource metadata, else the server's origin as 2025-03-26 did), asks its
// token endpoint for a token and hands it out until it expires, then asks
// again.
type grantHandler struct {
	o  *Config
	hc *http.Client

	mu  sync.Mutex
	src oauth2.TokenSource
}

func (h *grantHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.src == nil {
		return nil, nil // the transport sends no Authorization header
	}
	return h.src, nil
}

func (h *grantHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	defer resp.Body.Close()
	defer io.Copy(io.Discard, resp.Body)
	challenges, _ := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	ep, err := h.discover(ctx, req.URL, challenges)
	if err != nil {
		return err
	}
	g := &grantSource{h: h, ep: ep}
	tok, err := g.fetch(ctx)
	if err != nil {
		return err
	}
	var src oauth2.TokenSource = oauth2.ReuseTokenSource(tok, g)
	if h.o.SaveToken != nil {
		if err := h.o.saveFailed(h.o.SaveToken(tok)); err != nil {
			return err
		}
		src = &savingSource{inner: src, o: h.o, last: tok.AccessToken}
	}
	h.mu.Lock()
	h.src = src
	h.mu.Unlock()
	return nil
}

// grantEndpoint is what discovery found out for a grant.
type grantEndpoint struct {
	issuer, tokenURL, resource string
	authMethods                []string
	scopes                     []string
}

func (h *grantHandler) discover(ctx context.Context, server *url.URL, challenges []oauthex.Challenge) (*grantEndpoint, error) {
	ep := &grantEndpoint{resource: server.String()}
	var chScopes []string
	type prmURL struct{ url, resource string }
	var prmURLs []prmURL
	for _, c := range challenges {
		if u := c.Params["resource_metadata"]; u != "" && len(prmURLs) == 0 {
			prmURLs = append(prmURLs, prmURL{u, ep.resource})
		}
		if c.Scheme == "bearer" && c.Params["scope"] != "" && chScopes == nil {
			chScopes = strings.Fields(c.Params["scope"])
		}
	}
	origin := &url.URL{Scheme: server.Scheme, Host: server.Host}
	prmURLs = append(prmURLs,
		prmURL{origin.JoinPath("/.well-known/oauth-protected-resource", server.Path).String(), ep.resource},
		prmURL{origin.JoinPath("/.well-known/oauth-protected-resource").String(), origin.String()})
	authServer := origin.String() // 2025-03-26: the server's origin
	var prm *oauthex.ProtectedResourceMetadata
	for _, u := range prmURLs {
		if p, err := oauthex.GetProtectedResourceMetadata(ctx, u.url, u.resource, h.hc); err == nil && p != nil {
			prm = p
			break
		}
	}
	if prm != nil {
		if len(prm.AuthorizationServers) == 0 {
			return nil, errors.New("the protected resource metadata names no authorization server")
		}
		authServer = prm.AuthorizationServers[0]
		ep.resource = prm.Resource
	}
	asm, err := auth.GetAuthServerMetadata(ctx, authServer, h.hc)
	if err != nil {
		return nil, fmt.Errorf("authorization server metadata: %w", err)
	}
	if asm == nil { // 2025-03-26: default endpoints at the server's origin
		asm = &oauthex.AuthServerMeta{Issuer: authServer, TokenEndpoint: strings.TrimRight(authServer, "/") + "/token"}
	}
	if asm.TokenEndpoint == "" {
		return nil, fmt.Errorf("authorization server %s has no token endpoint", asm.Issuer)
	}
	ep.issuer, ep.tokenURL, ep.authMethods = asm.Issuer, asm.TokenEndpoint, asm.TokenEndpointAuthMethodsSupported
	switch {
	case len(h.o.Scopes) > 0:
		ep.scopes = h.o.Scopes
	case len(chScopes) > 0:
		ep.scopes = chScopes
	case prm != nil:
		ep.scopes = prm.ScopesSupported
	}
	return ep, nil
}

// grantSource runs the grant at a discovered token endpoint; it is the
// refresh of the handler's ReuseTokenSource.
type grantSource struct {
	h  *grantHandler
	ep *grantEndpoint
}

func (g *grantSource) Token() (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(context.Background(), grantTimeout)
	defer cancel()
	return g.fetch(ctx)
}

func (g *grantSource) fetch(ctx context.Context) (*oauth2.Token, error) {
	o, ep := g.h.o, g.ep
	form := url.Values{}
	switch o.Grant {
	case GrantClientCredentials:
		form.Set("grant_type", "client_credentials")
	case GrantJWTBearer:
		if o.Assertion == nil {
			return nil, errors.New("the JWT bearer grant needs an assertion")
		}
		a, err := o.Assertion(ctx, ep.issuer, ep.resource)
		if err != nil {
			return nil, fmt.Errorf("obtaining the JWT bearer assertion: %w", err)
		}
		form.Set("grant_type", grantTypeJWTBearer)
		form.Set("assertion", a)
	default:
		return nil, fmt.Errorf("unknown OAuth grant %q", o.Grant)
	}
	if len(ep.scopes) > 0 {
		form.Set("scope", strings.Join(ep.scopes, " "))
	}
	if ep.resource != "" {
		form.Set("resource", ep.resource)
	}
	c := client{id: o.ClientID, secret: o.ClientSecret, key: o.ClientKey}
	return tokenRequest(ctx, g.h.hc, ep.tokenURL, form, c, ep.issuer, ep.authMethods)
}

// client is how a client authenticates at a token endpoint: a private key
// (private_key_jwt), else a secret (client_secret_basic, or
// client_secret_post where only that is supported), else none (its ID in
// the form).
type client struct {
	id, secret string
	key        crypto.Signer
}

// tokenRequest posts form to a token endpoint with the client's
// authentication (an assertion's audience is issuer) and returns the
// token of a successful answer.
func tokenRequest(ctx context.Context, hc *http.Client, tokenURL string, form url.Values, c client, issuer string, methods []string) (*oauth2.Token, error) {
	basic := false
	switch {
	case c.key != nil:
		a, err := clientAssertion(c, issuer)
		if err != nil {
			return nil, err
		}
		form.Set("client_id", c.id)
		form.Set("client_assertion_type", clientAssertionJWT)
		form.Set("client_assertion", a)
	case c.secret != "" && (len(methods) == 0 || slices.Contains(methods, "client_secret_basic") || !slices.Contains(methods, "client_secret_post")):
		basic = true
	case c.secret != "":
		form.Set("client_id", c.id)
		form.Set("client_secret", c.secret)
	case c.id != "":
		form.Set("client_id", c.id)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if basic { // RFC 6749 §2.3.1: both form-encoded
		req.SetBasicAuth(url.QueryEscape(c.id), url.QueryEscape(c.secret))
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	var r struct {
		AccessToken      string      `json:"access_token"`
		TokenType        string      `json:"token_type"`
		RefreshToken     string      `json:"refresh_token"`
		ExpiresIn        json.Number `json:"expires_in"`
		Scope            string      `json:"scope"`
		IssuedTokenType  string      `json:"issued_token_type"`
		Error            string      `json:"error"`
		ErrorDescription string      `json:"error_description"`
	}
	jerr := json.Unmarshal(body, &r)
	if resp.StatusCode != http.StatusOK || r.Error != "" {
		if r.Error != "" {
			return nil, fmt.Errorf("token request refused: %s %s", r.Error, r.ErrorDescription)
		}
		return nil, fmt.Errorf("token request: HTTP %s", resp.Status)
	}
	if jerr != nil || r.AccessToken == "" {
		return nil, errors.New("token request: the answer has no access token")
	}
	t := &oauth2.Token{AccessToken: r.AccessToken, TokenType: r.TokenType, RefreshToken: r.RefreshToken}
	if s, err := r.ExpiresIn.Int64(); err == nil && s > 0 {
		t.Expiry = time.Now().Add(time.Duration(s) * time.Second)
	}
	extra := map[string]any{}
	if r.Scope != "" {
		extra["scope"] = r.Scope
	}
	if r.IssuedTokenType != "" {
		extra["issued_token_type"] = r.IssuedTokenType
	}
	return t.WithExtra(extra), nil
}

// clientAssertion is the private_key_jwt assertion of c for the
// authorization server issuer (RFC 7523 §3): iss and sub are the client
// ID, aud the issuer, valid for five minutes.
func clientAssertion(c client, issuer string) (string, error) {
	now := time.Now()
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", err
	}
	return signJWT(c.key, map[string]any{"typ": "JWT"}, map[string]any{
		"iss": c.id, "sub": c.id, "aud": issuer,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"jti": base64.RawURLEncoding.EncodeToString(jti),
	})
}

// signJWT signs claims with key under hdr (alg added): ES256 for a P-256
// key, RS256 for RSA.
func signJWT(key crypto.Signer, hdr, claims map[string]any) (string, error) {
	alg := ""
	switch k := key.Public().(type) {
	case *ecdsa.PublicKey:
		if k.Curve.Params().BitSize != 256 {
			return "", errors.New("an EC client key must be P-256 (ES256)")
		}
		alg = "ES256"
	case *rsa.PublicKey:
		alg = "RS256"
	default:
		return "", fmt.Errorf("unsupported client key type %T", k)
	}
	h := map[string]any{"alg": alg}
	for k, v := range hdr {
		h[k] = v
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return "", err
	}
	body, err := json.Marshal(claims)
	if err != nil {
		return "", err
	}
	input := base64.RawURLEncoding.EncodeToString(hb) + "." + base64.RawURLEncoding.EncodeToString(body)
	sum := sha256.Sum256([]byte(input))
	var sig []byte
	if ek, ok := key.(*ecdsa.PrivateKey); ok {
		r, s, err := ecdsa.Sign(rand.Reader, ek, sum[:])
		if err != nil {
			return "", err
		}
		sig = append(fixed(r, 32), fixed(s, 32)...) // JWS: R || S, not DER
	} else if sig, err = key.Sign(rand.Reader, sum[:], crypto.SHA256); err != nil {
		return "", err
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

func fixed(n *big.Int, size int) []byte {
	b := make([]byte, size)
	return n.FillBytes(b)
}

// ParseClientKey reads a PEM private key (PKCS#8, SEC 1 EC or PKCS#1
// RSA) for private_key_jwt client authentication.
func ParseClientKey(pemData []byte) (crypto.Signer, error) {
	blk, _ := pem.Decode(pemData)
	if blk == nil {
		return nil, errors.New("no PEM block in the client key")
	}
	var k any
	var err error
	switch blk.Type {
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(blk.Bytes)
	case "RSA PRIVATE KEY":
		k, err = x509.ParsePKCS1PrivateKey(blk.Bytes)
	default:
		k, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	}
	if err != nil {
		return nil, fmt.Errorf("client key: %w", err)
	}
	s, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("client key: unsupported key type %T", k)
	}
	if _, err := signJWT(s, nil, map[string]any{}); err != nil {
		return nil, fmt.Errorf("client key: %w", err)
	}
	return s, nil
}

// IdentityProvider is an enterprise IdP for [IDJAGAssertion]: where it
// exchanges the user's ID token for an identity assertion authorization
// grant (ID-JAG), and how acpd authenticates there.
type IdentityProvider struct {
	// TokenURL is the IdP's token endpoint.
	TokenURL string
	// ClientID and ClientSecret are acpd's client at the IdP (the secret
	// may be empty).
	ClientID, ClientSecret string
	// IDToken returns the user's ID token issued by the IdP.
	IDToken func(ctx context.Context) (string, error)
	// Scopes are requested for the MCP server (empty: none).
	Scopes []string
}

// IDJAGAssertion returns an [Config.Assertion] for [GrantJWTBearer] that
// performs enterprise-managed authorization (cross-app access): an RFC
// 8693 token exchange at idp of the user's ID token for an ID-JAG whose
// audience is the MCP server's authorization server and whose resource is
// the MCP server.
func IDJAGAssertion(hc *http.Client, idp IdentityProvider) func(ctx context.Context, issuer, resource string) (string, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	return func(ctx context.Context, issuer, resource string) (string, error) {
		if idp.IDToken == nil || idp.TokenURL == "" {
			return "", errors.New("the identity provider needs a token URL and an ID token")
		}
		idt, err := idp.IDToken(ctx)
		if err != nil {
			return "", fmt.Errorf("ID token: %w", err)
		}
		form := url.Values{
			"grant_type":           {grantTypeTokenExchange},
			"requested_token_type": {tokenTypeIDJAG},
			"subject_token":        {idt},
			"subject_token_type":   {tokenTypeIDToken},
			"audience":             {issuer},
			"resource":             {resource},
		}
		if len(idp.Scopes) > 0 {
			form.Set("scope", strings.Join(idp.Scopes, " "))
		}
		t, err := tokenRequest(ctx, hc, idp.TokenURL, form, client{id: idp.ClientID, secret: idp.ClientSecret}, "", nil)
		if err != nil {
			return "", fmt.Errorf("token exchange at the identity provider: %w", err)
		}
		if tt, _ := t.Extra("issued_token_type").(string); tt != "" && tt != tokenTypeIDJAG {
			return "", fmt.Errorf("token exchange: the identity provider issued %q, not an ID-JAG", tt)
		}
		return t.AccessToken, nil
	}
}
