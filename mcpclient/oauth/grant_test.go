package oauth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestClientAssertion: a private_key_jwt assertion verifies with the
// client's public key (ES256 as R||S, RS256) and names the client and the
// authorization server.
func TestClientAssertion(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pkcs8, err := x509.MarshalPKCS8PrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	sec1, err := x509.MarshalECPrivateKey(ec)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		pem  *pem.Block
		alg  string
		pub  crypto.PublicKey
	}{
		{"pkcs8-ec", &pem.Block{Type: "PRIVATE KEY", Bytes: pkcs8}, "ES256", &ec.PublicKey},
		{"sec1-ec", &pem.Block{Type: "EC PRIVATE KEY", Bytes: sec1}, "ES256", &ec.PublicKey},
		{"pkcs1-rsa", &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rk)}, "RS256", &rk.PublicKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			key, err := ParseClientKey(pem.EncodeToMemory(tc.pem))
			if err != nil {
				t.Fatal(err)
			}
			jwt, err := clientAssertion(client{id: "cid", key: key}, "https://as.example")
			if err != nil {
				t.Fatal(err)
			}
			parts := strings.Split(jwt, ".")
			if len(parts) != 3 {
				t.Fatalf("JWT %q has %d parts", jwt, len(parts))
			}
			var hdr map[string]string
			var claims map[string]any
			decode(t, parts[0], &hdr)
			decode(t, parts[1], &claims)
			if hdr["alg"] != tc.alg || claims["iss"] != "cid" || claims["sub"] != "cid" || claims["aud"] != "https://as.example" || claims["jti"] == "" {
				t.Errorf("header %v, claims %v", hdr, claims)
			}
			sig, err := base64.RawURLEncoding.DecodeString(parts[2])
			if err != nil {
				t.Fatal(err)
			}
			h := crypto.SHA256.New()
			h.Write([]byte(parts[0] + "." + parts[1]))
			sum := h.Sum(nil)
			switch pub := tc.pub.(type) {
			case *ecdsa.PublicKey:
				if len(sig) != 64 || !ecdsa.Verify(pub, sum, new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
					t.Error("ES256 signature does not verify")
				}
			case *rsa.PublicKey:
				if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum, sig); err != nil {
					t.Errorf("RS256 signature: %v", err)
				}
			}
		})
	}
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := x509.MarshalPKCS8PrivateKey(p384)
	if _, err := ParseClientKey(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: b})); err == nil {
		t.Error("a P-384 key was accepted for ES256")
	}
	if _, err := ParseClientKey([]byte("not a key")); err == nil {
		t.Error("a non-PEM key was accepted")
	}
}

func decode(t *testing.T, part string, v any) {
	t.Helper()
	b, err := base64.RawURLEncoding.DecodeString(part)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		t.Fatalf("JWT part %q: %v", part, err)
	}
}

// configured is a server list of one server with g's setup, as
// config.MCPClientServers returns it.
func configured(g GrantConfig) []struct{ OAuth *Config } {
	return []struct{ OAuth *Config }{{OAuth: g.Config()}}
}

// TestGrantFromConfig: an [mcp_servers.NAME.oauth] table becomes the
// grant; a missing secret fails the connection with the variable's name
// (never a value), and the assertion file is read for every grant.
func TestGrantFromConfig(t *testing.T) {
	t.Setenv("ACPD_TEST_CC_SECRET", "")
	srv := configured(GrantConfig{Grant: "client_credentials", ClientID: "c", ClientSecretEnv: "ACPD_TEST_CC_SECRET"})
	if _, err := oauthHandler(srv[0].OAuth, http.DefaultClient); err == nil || !strings.Contains(err.Error(), "ACPD_TEST_CC_SECRET is not set") {
		t.Errorf("missing secret: %v", err)
	}
	t.Setenv("ACPD_TEST_CC_SECRET", "s3cret")
	srv = configured(GrantConfig{Grant: "client_credentials", ClientID: "c", ClientSecretEnv: "ACPD_TEST_CC_SECRET", Scopes: []string{"x"}})
	if o := srv[0].OAuth; o.ClientSecret != "s3cret" || o.Grant != GrantClientCredentials || len(o.Scopes) != 1 {
		t.Errorf("OAuth = %+v", o)
	}
	if _, err := oauthHandler(srv[0].OAuth, http.DefaultClient); err != nil {
		t.Error(err)
	}
	file := filepath.Join(t.TempDir(), "token")
	srv = configured(GrantConfig{Grant: "jwt_bearer", AssertionFile: file})
	a := srv[0].OAuth.Assertion
	if _, err := a(context.Background(), "", ""); err == nil {
		t.Error("a missing assertion file gave an assertion")
	}
	for _, want := range []string{"first.jwt", "second.jwt"} {
		if err := os.WriteFile(file, []byte(want+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, err := a(context.Background(), "", ""); err != nil || got != want {
			t.Errorf("assertion = %q, %v; want %q", got, err, want)
		}
	}

	// Enterprise-managed authorization: the ID token is exchanged at the
	// IdP for an ID-JAG naming the authorization server and the resource.
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		if r.ParseForm() != nil || r.Form.Get("grant_type") != grantTypeTokenExchange || r.Form.Get("subject_token") != "id.token" ||
			r.Form.Get("subject_token_type") != tokenTypeIDToken || r.Form.Get("requested_token_type") != tokenTypeIDJAG ||
			r.Form.Get("audience") != "https://as.example" || r.Form.Get("resource") != "https://e.example/mcp" || id != "idp-client" || secret != "idp-s3cret" {
			http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, `{"access_token":"the.id-jag","issued_token_type":%q,"token_type":"N_A"}`, tokenTypeIDJAG)
	}))
	defer idp.Close()
	if err := os.WriteFile(file, []byte("id.token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ACPD_TEST_IDP_SECRET", "idp-s3cret")
	srv = configured(GrantConfig{Grant: "jwt_bearer", IDTokenFile: file, IdPTokenURL: idp.URL, IdPClientID: "idp-client", IdPClientSecretEnv: "ACPD_TEST_IDP_SECRET"})
	if got, err := srv[0].OAuth.Assertion(context.Background(), "https://as.example", "https://e.example/mcp"); err != nil || got != "the.id-jag" {
		t.Errorf("ID-JAG assertion = %q, %v", got, err)
	}
}
