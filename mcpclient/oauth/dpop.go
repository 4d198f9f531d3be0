package oauth

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"acpd/mcpclient/internal/origin"
)

// dpop makes one server's OAuth tokens sender-constrained (RFC 9449,
// MCP's SEP-1932) where its authorization server supports it: token
// requests to an authorization server whose metadata lists ES256 in
// dpop_signing_alg_values_supported carry a DPoP proof of a per-connection
// key, and a token issued as token_type DPoP is presented with the DPoP
// scheme and a fresh proof on every request. Server-provided nonces are
// honoured with one retry. Without such metadata nothing changes.
type dpop struct {
	key *ecdsa.PrivateKey
	jwk map[string]string

	mu        sync.Mutex
	tokenURLs map[string]bool   // token endpoints that accept ES256 proofs
	bound     map[[32]byte]bool // SHA-256 of access tokens issued as DPoP
	nonces    map[string]string // origin → its latest DPoP-Nonce
}

func newDPoP() (*dpop, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	pt, err := key.PublicKey.Bytes() // 0x04 || X || Y
	if err != nil {
		return nil, err
	}
	x, y := pt[1:33], pt[33:]
	return &dpop{key: key,
		jwk:       map[string]string{"kty": "EC", "crv": "P-256", "x": b64(x), "y": b64(y)},
		tokenURLs: map[string]bool{}, bound: map[[32]byte]bool{}, nonces: map[string]string{}}, nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// proof is a DPoP proof for a request (RFC 9449 §4.2), bound to
// accessToken when it is not empty.
func (d *dpop) proof(method string, u *url.URL, accessToken string) (string, error) {
	htu := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return "", err
	}
	claims := map[string]any{"jti": b64(jti), "htm": method, "htu": htu.String(), "iat": time.Now().Unix()}
	d.mu.Lock()
	if n := d.nonces[origin.Of(u)]; n != "" {
		claims["nonce"] = n
	}
	d.mu.Unlock()
	if accessToken != "" {
		sum := sha256.Sum256([]byte(accessToken))
		claims["ath"] = b64(sum[:])
	}
	return signJWT(d.key, map[string]any{"typ": "dpop+jwt", "jwk": d.jwk}, claims)
}

// transport wraps base with d.
func (d *dpop) transport(base http.RoundTripper) http.RoundTripper {
	return &dpopTransport{d: d, base: base}
}

type dpopTransport struct {
	d    *dpop
	base http.RoundTripper
}

func (t *dpopTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	d := t.d
	token := ""
	if v, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Bearer "); ok {
		d.mu.Lock()
		if d.bound[sha256.Sum256([]byte(v))] {
			token = v
		}
		d.mu.Unlock()
	}
	d.mu.Lock()
	tokenReq := req.Method == http.MethodPost && d.tokenURLs[urlKey(req.URL)]
	d.mu.Unlock()
	if token == "" && !tokenReq {
		resp, err := t.base.RoundTrip(req)
		if err == nil && req.Method == http.MethodGet && resp.StatusCode == http.StatusOK && strings.Contains(req.URL.Path, "/.well-known/") {
			t.learnMetadata(resp)
		}
		return resp, err
	}
	replayable := req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
	for try := 0; ; try++ {
		r := req.Clone(req.Context())
		if try > 0 && req.GetBody != nil {
			body, err := req.GetBody()
			if err != nil {
				return nil, err
			}
			r.Body = body
		}
		p, err := d.proof(req.Method, req.URL, token)
		if err != nil {
			return nil, err
		}
		r.Header.Set("DPoP", p)
		if token != "" {
			r.Header.Set("Authorization", "DPoP "+token)
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			return nil, err
		}
		nonce := resp.Header.Get("DPoP-Nonce")
		if nonce != "" {
			d.mu.Lock()
			d.nonces[origin.Of(req.URL)] = nonce
			d.mu.Unlock()
		}
		body := peek(resp)
		retry := nonce != "" && try == 0 && replayable &&
			((token != "" && resp.StatusCode == http.StatusUnauthorized && strings.Contains(resp.Header.Get("WWW-Authenticate"), "use_dpop_nonce")) ||
				(tokenReq && resp.StatusCode == http.StatusBadRequest && bytes.Contains(body, []byte("use_dpop_nonce"))))
		if retry {
			resp.Body.Close()
			continue
		}
		if tokenReq && resp.StatusCode == http.StatusOK {
			var tr struct {
				AccessToken string `json:"access_token"`
				TokenType   string `json:"token_type"`
			}
			if json.Unmarshal(body, &tr) == nil && tr.AccessToken != "" && strings.EqualFold(tr.TokenType, "DPoP") {
				d.mu.Lock()
				d.bound[sha256.Sum256([]byte(tr.AccessToken))] = true
				d.mu.Unlock()
			}
		}
		return resp, nil
	}
}

// learnMetadata notes the token endpoint of authorization server metadata
// that accepts ES256 DPoP proofs.
func (t *dpopTransport) learnMetadata(resp *http.Response) {
	var m struct {
		TokenEndpoint string   `json:"token_endpoint"`
		DPoPAlgs      []string `json:"dpop_signing_alg_values_supported"`
	}
	es256 := false
	if json.Unmarshal(peek(resp), &m) == nil {
		for _, a := range m.DPoPAlgs {
			es256 = es256 || a == "ES256"
		}
	}
	if !es256 || m.TokenEndpoint == "" {
		return
	}
	if u, err := url.Parse(m.TokenEndpoint); err == nil {
		t.d.mu.Lock()
		t.d.tokenURLs[urlKey(u)] = true
		t.d.mu.Unlock()
	}
}

// peek reads resp's body (up to 1 MiB) and puts it back for the caller.
func peek(resp *http.Response) []byte {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	rest := resp.Body
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), rest), rest}
	return b
}

// urlKey is u without query and fragment.
func urlKey(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}
