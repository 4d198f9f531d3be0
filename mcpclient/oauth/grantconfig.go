package oauth

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// GrantConfig names, as a configuration file does, a grant that needs no
// person: where its secrets are (environment variables, files), not the
// secrets themselves.
type GrantConfig struct {
	// Grant is [GrantClientCredentials] or [GrantJWTBearer].
	Grant string
	// ClientID is acpd's client at the authorization server.
	ClientID string
	// ClientSecretEnv names the environment variable holding the client
	// secret.
	ClientSecretEnv string
	// PrivateKeyFile is a PEM private key that signs a JWT instead of a
	// secret (private_key_jwt); absolute or "~/".
	PrivateKeyFile string
	// AssertionFile holds the JWT of the JWT bearer grant, read again for
	// every grant; absolute or "~/".
	AssertionFile string
	// IDTokenFile, with IdPTokenURL, makes the assertion an ID-JAG: the
	// ID token in this file is exchanged at the IdP's token endpoint, as
	// IdPClientID (secret from IdPClientSecretEnv).
	IDTokenFile, IdPTokenURL, IdPClientID, IdPClientSecretEnv string
	// Scopes are requested (empty: those the server names).
	Scopes []string
}

// Config returns the setup of g: the secrets come from acpd's environment,
// the key from its file (read now), the assertion from its file (read for
// every grant). A setup that cannot work (a variable not set, a bad key)
// fails when the server connects, naming the variable or the file, never
// a value.
func (g GrantConfig) Config() *Config {
	o := &Config{Grant: g.Grant, ClientID: g.ClientID, Scopes: g.Scopes}
	if g.ClientSecretEnv != "" {
		if o.ClientSecret = os.Getenv(g.ClientSecretEnv); o.ClientSecret == "" {
			o.setupErr = fmt.Errorf("OAuth client secret: %s is not set", g.ClientSecretEnv)
		}
	}
	if g.PrivateKeyFile != "" {
		b, err := os.ReadFile(homePath(g.PrivateKeyFile))
		if err == nil {
			o.ClientKey, err = ParseClientKey(b)
		}
		if err != nil {
			o.setupErr = fmt.Errorf("OAuth private_key_file: %w", err)
		}
	}
	if g.AssertionFile != "" {
		path := homePath(g.AssertionFile)
		o.Assertion = func(context.Context, string, string) (string, error) { return readToken(path) }
	}
	if g.IDTokenFile != "" {
		path := homePath(g.IDTokenFile)
		idp := IdentityProvider{TokenURL: g.IdPTokenURL, ClientID: g.IdPClientID, Scopes: g.Scopes,
			IDToken: func(context.Context) (string, error) { return readToken(path) }}
		if g.IdPClientSecretEnv != "" {
			if idp.ClientSecret = os.Getenv(g.IdPClientSecretEnv); idp.ClientSecret == "" {
				o.setupErr = fmt.Errorf("OAuth IdP client secret: %s is not set", g.IdPClientSecretEnv)
			}
		}
		o.Assertion = IDJAGAssertion(nil, idp)
	}
	return o
}

// readToken reads a token file again for every grant (platforms rotate
// such tokens).
func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if a := strings.TrimSpace(string(b)); a != "" {
		return a, nil
	}
	return "", fmt.Errorf("%s is empty", path)
}

// homePath expands a leading "~/" to the user's home directory.
func homePath(p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return p
}
