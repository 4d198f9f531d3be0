package oauth

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// TestDPoP: against an authorization server that advertises ES256 DPoP,
// the token request carries a proof and is retried with the nonce the
// server asks for; the DPoP token then goes out with the DPoP scheme and a
// fresh proof bound to it (ath), each verifiable with the proof's own
// key. A server without DPoP metadata sees plain requests.
func TestDPoP(t *testing.T) {
	var mu sync.Mutex
	var proofs []map[string]any
	var schemes []string
	verify := func(r *http.Request) map[string]any {
		p := r.Header.Get("DPoP")
		if p == "" {
			return nil
		}
		claims := verifyProof(t, p)
		mu.Lock()
		proofs = append(proofs, claims)
		mu.Unlock()
		return claims
	}
	var srvURL string
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"issuer":%q,"token_endpoint":%q,"dpop_signing_alg_values_supported":["ES256"]}`, srvURL, srvURL+"/token")
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		c := verify(r)
		if c == nil || c["htm"] != "POST" || c["htu"] != srvURL+"/token" {
			http.Error(w, "no proof", http.StatusBadRequest)
			return
		}
		if c["nonce"] != "as-nonce" {
			w.Header().Set("DPoP-Nonce", "as-nonce")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"error":"use_dpop_nonce"}`)
			return
		}
		fmt.Fprint(w, `{"access_token":"tok","token_type":"DPoP"}`)
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		schemes = append(schemes, strings.SplitN(r.Header.Get("Authorization"), " ", 2)[0])
		mu.Unlock()
		c := verify(r)
		sum := sha256.Sum256([]byte("tok"))
		if c == nil || c["ath"] != base64.RawURLEncoding.EncodeToString(sum[:]) || r.Header.Get("Authorization") != "DPoP tok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, "ok")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	srvURL = srv.URL

	d, err := newDPoP()
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: d.transport(http.DefaultTransport)}
	get := func(path string) *http.Response {
		t.Helper()
		resp, err := hc.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	var meta map[string]any
	if err := json.NewDecoder(get("/.well-known/oauth-authorization-server").Body).Decode(&meta); err != nil || meta["token_endpoint"] == nil {
		t.Fatalf("metadata passed on as %v (%v)", meta, err)
	}
	resp, err := hc.PostForm(srv.URL+"/token", url.Values{"grant_type": {"client_credentials"}})
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK || tok.AccessToken != "tok" {
		t.Fatalf("token request: %s %+v %v", resp.Status, tok, err)
	}
	resp.Body.Close()
	for range 2 {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp?x=1", strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := hc.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("MCP request: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	mu.Lock()
	if len(proofs) != 4 || proofs[2]["jti"] == proofs[3]["jti"] || proofs[2]["htu"] != srv.URL+"/mcp" {
		t.Errorf("proofs = %v", proofs)
	}
	if strings.Join(schemes, ",") != "DPoP,DPoP" {
		t.Errorf("schemes = %v", schemes)
	}
	mu.Unlock()

	// A token not issued as DPoP, to a server without DPoP, stays Bearer.
	plain, _ := newDPoP()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer other")
	out, err := (&http.Client{Transport: plain.transport(http.DefaultTransport)}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	out.Body.Close()
	mu.Lock()
	defer mu.Unlock()
	if schemes[len(schemes)-1] != "Bearer" || len(proofs) != 4 {
		t.Errorf("plain request sent as %v with %d proofs", schemes, len(proofs))
	}
}

// verifyProof checks a DPoP proof's header and ES256 signature with the
// JWK it carries and returns its claims.
func verifyProof(t *testing.T, p string) map[string]any {
	t.Helper()
	parts := strings.Split(p, ".")
	if len(parts) != 3 {
		t.Fatalf("proof %q", p)
	}
	var hdr struct {
		Typ, Alg string
		JWK      struct{ Kty, Crv, X, Y string }
	}
	var claims map[string]any
	decode(t, parts[0], &hdr)
	decode(t, parts[1], &claims)
	x, _ := base64.RawURLEncoding.DecodeString(hdr.JWK.X)
	y, _ := base64.RawURLEncoding.DecodeString(hdr.JWK.Y)
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
	if err != nil {
		t.Fatalf("proof JWK: %v", err)
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if hdr.Typ != "dpop+jwt" || hdr.Alg != "ES256" || hdr.JWK.Kty != "EC" || len(sig) != 64 ||
		!ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		t.Errorf("proof header %+v does not verify", hdr)
	}
	return claims
}
