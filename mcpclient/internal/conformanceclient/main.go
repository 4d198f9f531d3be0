// Command conformanceclient drives acpd's MCP client (package mcpclient)
// through the client scenarios of the official MCP conformance suite
// (npm package @modelcontextprotocol/conformance).
//
// The suite runs it as `conformanceclient <serverURL>` with the scenario's
// name in MCP_CONFORMANCE_SCENARIO. It connects to the URL over streamable
// HTTP with an mcpclient.Manager, does what the scenario expects, closes the
// Manager and exits 0, or prints the failure to stderr and exits 1 (2 for a
// usage error or a scenario it does not know). It never writes to stdout.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	neturl "net/url"
	"os"
	"strings"
	"time"

	"github.com/charmbracelet/log"

	"acpd/mcpclient"
	"acpd/mcpclient/oauth"
)

// serverName is the Server.Name the scenario's server is registered under.
const serverName = "conformance"

// timeout bounds a whole scenario run; the suite's own default is 30s.
const timeout = 20 * time.Second

// call is a tool call a scenario expects, with the text its result must
// contain. With echoSchemaOf, the arguments are {"schema": S}, S the
// inputSchema acpd lists for that tool.
type call struct {
	tool         string
	args         string
	want         string
	echoSchemaOf string
}

// contextCall is a tool call MCP_CONFORMANCE_CONTEXT asks for.
type contextCall struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// scenario is what a client scenario needs: the tool calls it expects
// after connecting (which lists the tools), and whether the server wants
// OAuth or elicitation.
type scenario struct {
	calls  []call
	oauth  bool
	elicit bool
	// accept is the content of every accepted elicitation (nil: empty).
	accept map[string]any
	// browse reads every listed resource and gets every prompt (without
	// arguments) after the calls.
	browse bool
	// contextCalls are made too: the toolCalls of MCP_CONFORMANCE_CONTEXT
	// and, with allArgs, every listed tool with those arguments; their
	// failures are only reported (the server may refuse on purpose).
	contextCalls bool
	allArgs      string
	// skills: the server's skills must be listed (nothing of them read);
	// with loadSkills each is then loaded, which must fail verification
	// (the scenario serves a tampered SKILL.md), so no other file of it
	// is read.
	skills, loadSkills bool
}

// scenarios maps each supported scenario to what it expects. initialize
// only needs the handshake; every auth scenario authorizes and calls
// test-tool.
var scenarios = map[string]scenario{
	"initialize": {},
	"tools_call": {calls: []call{{tool: "add_numbers", args: `{"a":5,"b":3}`, want: "The sum of 5 and 3 is 8"}}},
	"sse-retry":  {calls: []call{{tool: "test_reconnection", args: `{}`, want: "Reconnection test completed successfully"}}},
	// The form is accepted empty: the schema's defaults must be sent.
	"elicitation-sep1034-client-defaults": {elicit: true, calls: []call{{tool: "test_client_elicitation_defaults", args: `{}`}}},
	// Connecting is all these check: the request metadata of 2026-07-28,
	// and that a network $ref in a listed schema is never fetched.
	"request-metadata":         {},
	"json-schema-ref-no-deref": {},
	// Skills (SEP-2640): connecting and listing fetch none of a skill's
	// files; a SKILL.md that does not match its entry (digest, size,
	// frontmatter) is refused, and the skill's other files never read.
	"sep-2640-client-no-prefetch":        {skills: true},
	"sep-2640-client-verify-digest":      {skills: true, loadSkills: true},
	"sep-2640-client-verify-size":        {skills: true, loadSkills: true},
	"sep-2640-client-verify-frontmatter": {skills: true, loadSkills: true},
	// The listed schema keeps its JSON Schema 2020-12 keywords.
	"json-schema-2020-12-preservation": {calls: []call{{tool: "json_schema_echo", echoSchemaOf: "json_schema_2020_12_tool"}}},
	// Every kind of request carries the standard Mcp-Method and Mcp-Name
	// headers.
	"http-standard-headers": {browse: true, calls: []call{{tool: "test_headers", args: `{}`}, {tool: "my-hyphenated-tool", args: `{}`}}},
	// Tool parameters marked x-mcp-header are mirrored into Mcp-Param-*
	// headers; tools with invalid marks are not listed, so never called.
	"http-custom-headers":       {contextCalls: true},
	"http-invalid-tool-headers": {contextCalls: true, allArgs: `{"region":"us-west1"}`},
	// input_required results (2026-07-28): the elicitation is answered and
	// the request retried with the server's requestState.
	"sep-2322-client-request-state": {elicit: true, accept: map[string]any{"confirmed": true}, calls: []call{
		{tool: "test_mrtr_echo_state", args: `{}`}, {tool: "test_mrtr_unrelated", args: `{}`},
		{tool: "test_mrtr_no_state", args: `{}`}, {tool: "test_mrtr_no_result_type", args: `{}`},
	}},
}

func init() {
	for _, name := range []string{
		"auth/metadata-default", "auth/metadata-var1", "auth/metadata-var2", "auth/metadata-var3",
		"auth/basic-cimd", "auth/scope-from-www-authenticate", "auth/scope-from-scopes-supported",
		"auth/scope-omitted-when-undefined", "auth/scope-step-up", "auth/scope-retry-limit",
		"auth/token-endpoint-auth-basic", "auth/token-endpoint-auth-post", "auth/token-endpoint-auth-none",
		"auth/pre-registration", "auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback",
		"auth/resource-mismatch", "auth/offline-access-scope", "auth/offline-access-not-supported",
		"auth/client-credentials-jwt", "auth/client-credentials-basic",
		"auth/cross-app-access-complete-flow", "auth/enterprise-managed-authorization", "auth/wif-jwt-bearer",
	} {
		scenarios[name] = scenario{oauth: true, calls: []call{{tool: "test-tool", args: `{}`}}}
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: MCP_CONFORMANCE_SCENARIO=<name> conformanceclient <serverURL>")
		os.Exit(2)
	}
	name := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	sc, ok := scenarios[name]
	if !ok && strings.HasPrefix(name, "auth/") {
		// Every auth scenario authorizes and calls test-tool.
		sc, ok = scenarios["auth/metadata-default"]
	}
	if !ok {
		fmt.Fprintf(os.Stderr, "conformanceclient: unsupported scenario %q\n", name)
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	err := run(ctx, os.Args[1], sc)
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "conformanceclient: scenario %s: %v\n", name, err)
		os.Exit(1)
	}
}

// run connects to url, checks that every tool in calls is listed, makes the
// calls in order and closes the Manager.
func run(ctx context.Context, url string, sc scenario) (err error) {
	logger := slog.New(log.NewWithOptions(os.Stderr, log.Options{Level: log.DebugLevel}))
	opts := mcpclient.Options{ClientName: "acpd-conformance", ClientVersion: "1.0.0", Logger: logger}
	if sc.elicit {
		opts.Elicit = func(context.Context, string, mcpclient.ElicitRequest) (mcpclient.ElicitResult, error) {
			content := map[string]any{}
			for k, v := range sc.accept {
				content[k] = v
			}
			return mcpclient.ElicitResult{Action: mcpclient.ElicitAccept, Content: content}, nil
		}
	}
	m := mcpclient.NewManager(opts)
	defer func() { err = errors.Join(err, m.Close()) }()

	// ACPD_CONFORMANCE_PROTOCOL pins the protocol revision (the test's
	// runs of scenarios the suite does not tie to one).
	srv := mcpclient.Server{Name: serverName, URL: url, Transport: mcpclient.TransportHTTP, ProtocolVersion: os.Getenv("ACPD_CONFORMANCE_PROTOCOL")}
	if sc.oauth {
		if srv.OAuth, err = conformanceOAuth(os.Getenv("MCP_CONFORMANCE_SCENARIO")); err != nil {
			return err
		}
	}
	if errs := m.Start(ctx, []mcpclient.Server{srv}); len(errs) > 0 {
		return errors.Join(errs...)
	}
	tools := map[string]string{} // server's tool name -> qualified name
	schemas := map[string]json.RawMessage{}
	for _, t := range m.Tools() {
		tools[t.Name] = t.QualifiedName
		schemas[t.Name] = t.InputSchema
	}
	for _, c := range sc.calls {
		q, ok := tools[c.tool]
		if !ok {
			return fmt.Errorf("tool %q not listed", c.tool)
		}
		args := json.RawMessage(c.args)
		if c.echoSchemaOf != "" {
			if schemas[c.echoSchemaOf] == nil {
				return fmt.Errorf("tool %q not listed", c.echoSchemaOf)
			}
			args, _ = json.Marshal(map[string]json.RawMessage{"schema": schemas[c.echoSchemaOf]})
		}
		res, err := m.Call(ctx, q, args)
		if err != nil {
			return fmt.Errorf("calling %s: %w", c.tool, err)
		}
		if res.IsError || !strings.Contains(res.Text, c.want) {
			return fmt.Errorf("calling %s: got result %q (isError %t), want text containing %q", c.tool, res.Text, res.IsError, c.want)
		}
	}
	if sc.contextCalls {
		var cc struct {
			ToolCalls []contextCall `json:"toolCalls"`
		}
		if s := os.Getenv("MCP_CONFORMANCE_CONTEXT"); s != "" {
			if err := json.Unmarshal([]byte(s), &cc); err != nil {
				return fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
			}
		}
		if sc.allArgs != "" {
			for _, t := range m.Tools() {
				cc.ToolCalls = append(cc.ToolCalls, contextCall{t.Name, json.RawMessage(sc.allArgs)})
			}
		}
		for _, c := range cc.ToolCalls {
			q, ok := tools[c.Name]
			if !ok {
				fmt.Fprintf(os.Stderr, "conformanceclient: tool %q not listed\n", c.Name)
				continue
			}
			if res, err := m.Call(ctx, q, c.Arguments); err != nil || res.IsError {
				fmt.Fprintf(os.Stderr, "conformanceclient: calling %s: %v %s\n", c.Name, err, res.Text)
			}
		}
	}
	if sc.skills {
		if err := useSkills(ctx, m, sc.loadSkills); err != nil {
			return err
		}
	}
	if sc.browse {
		res, err := m.Resources(ctx, serverName)
		if err != nil {
			return fmt.Errorf("listing resources: %w", err)
		}
		for _, r := range res {
			if _, err := m.ReadResource(ctx, serverName, r.URI); err != nil {
				return fmt.Errorf("reading %s: %w", r.URI, err)
			}
		}
		for _, p := range m.Prompts() {
			if _, err := m.GetPrompt(ctx, p.QualifiedName, nil); err != nil {
				return fmt.Errorf("getting prompt %s: %w", p.Name, err)
			}
		}
	}
	return nil
}

// useSkills checks that the server's skills are listed and, with load,
// that loading each fails verification; a skill that loads has its other
// files read, as a model following it would, which the scenario counts as
// using tampered content.
func useSkills(ctx context.Context, m *mcpclient.Manager, load bool) error {
	sks := m.Skills()
	if len(sks) == 0 {
		return errors.New("the server's skills are not listed")
	}
	if !load {
		return nil
	}
	for _, sk := range sks {
		_, err := m.LoadSkill(ctx, sk.QualifiedName)
		if errors.Is(err, mcpclient.ErrSkillVerification) {
			fmt.Fprintf(os.Stderr, "conformanceclient: refused as expected: %v\n", err)
			continue
		}
		if err != nil {
			return fmt.Errorf("loading skill %s: %w", sk.QualifiedName, err)
		}
		for _, f := range sk.Files {
			if _, _, err := m.ReadSkillFile(ctx, sk.QualifiedName, f.Path); err != nil {
				return err
			}
		}
		return fmt.Errorf("skill %s loaded, but its SKILL.md does not match its entry", sk.QualifiedName)
	}
	return nil
}

// conformanceOAuth is the OAuth setup the suite's auth scenarios expect:
// its authorization server redirects at once, so "the user" is a GET that
// reads the code from the redirect; a pre-registered client comes in
// MCP_CONFORMANCE_CONTEXT, as do the credentials of the grants that need
// no person (client credentials, JWT bearer).
func conformanceOAuth(name string) (*oauth.Config, error) {
	o := &oauth.Config{
		RedirectURL:       "http://localhost:3000/callback",
		ClientMetadataURL: "https://conformance-test.local/client-metadata.json",
		Authorize: func(ctx context.Context, authURL string) (neturl.Values, error) {
			hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
			if err != nil {
				return nil, err
			}
			resp, err := hc.Do(req)
			if err != nil {
				return nil, err
			}
			resp.Body.Close()
			loc, err := neturl.Parse(resp.Header.Get("Location"))
			if err != nil {
				return nil, fmt.Errorf("authorization redirect: %w", err)
			}
			return loc.Query(), nil
		},
	}
	var cc struct {
		ClientID         string `json:"client_id"`
		ClientSecret     string `json:"client_secret"`
		PrivateKeyPEM    string `json:"private_key_pem"`
		IdPClientID      string `json:"idp_client_id"`
		IdPIDToken       string `json:"idp_id_token"`
		IdPTokenEndpoint string `json:"idp_token_endpoint"`
		ValidJWT         string `json:"valid_jwt"`
	}
	if s := os.Getenv("MCP_CONFORMANCE_CONTEXT"); s != "" {
		if err := json.Unmarshal([]byte(s), &cc); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	o.ClientID, o.ClientSecret = cc.ClientID, cc.ClientSecret
	switch name {
	case "auth/client-credentials-basic", "auth/client-credentials-jwt":
		o.Grant = oauth.GrantClientCredentials
		if cc.PrivateKeyPEM != "" {
			k, err := oauth.ParseClientKey([]byte(cc.PrivateKeyPEM))
			if err != nil {
				return nil, err
			}
			o.ClientKey = k
		}
	case "auth/cross-app-access-complete-flow", "auth/enterprise-managed-authorization":
		// The user's ID token from the enterprise IdP, exchanged there
		// for an ID-JAG.
		o.Grant = oauth.GrantJWTBearer
		o.Assertion = oauth.IDJAGAssertion(nil, oauth.IdentityProvider{
			TokenURL: cc.IdPTokenEndpoint, ClientID: cc.IdPClientID,
			IDToken: func(context.Context) (string, error) { return cc.IdPIDToken, nil },
		})
	case "auth/wif-jwt-bearer":
		// A workload identity token, as a platform would mount it.
		o.Grant = oauth.GrantJWTBearer
		o.Assertion = func(context.Context, string, string) (string, error) { return cc.ValidJWT, nil }
	}
	return o, nil
}
