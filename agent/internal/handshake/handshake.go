// Package handshake is what acpd says about itself in initialize and
// accepts in authenticate: its agent capabilities and info ([Reply]), and
// its authentication methods: the "agent" method [Env] (re-read the
// environment and the keys `acpd login` stored) always; for Zed before
// terminal auth methods, the same method carrying the "terminal-auth" _meta
// that runs `acpd login` in a terminal; and the "terminal" method [Login]
// (run `acpd login`) for clients that advertise auth.terminal. It keeps no
// state.
//
// It also advertises the two extensions for prompts sent during a turn, as
// the Claude and Codex adapters do (see docs/extending.md): prompt queueing
// (agentCapabilities._meta.claudeCode.promptQueueing: a session/prompt sent
// during a turn waits for it and becomes the next turn) and steering (the
// reply's own _meta.steering.supported: the [SteeringMethod] request puts a
// message into the running turn).
package handshake

import (
	"fmt"
	"os"

	"acpd/acp"
	"acpd/acp/jsonrpc"
)

// SteeringMethod is the steering extension's request.
const SteeringMethod = "_session/steering"

// The method ids (fixed: clients depend on them).
const (
	Env   = "acpd-env"
	Login = "acpd-login"
)

// Reply is initialize's answer, from the agent name at version, to a
// client with caps (nil: none advertised): protocol version 1 whatever the
// client asked for (it decides whether it can go on); session load,
// resume, list, close, delete, fork (unstable) and additional directories; images and
// embedded context in prompts, audio too when audio (the default model
// takes it); HTTP and SSE MCP servers; logout when logout; prompt queueing
// and steering; and the [Offered] authentication methods.
func Reply(caps *acp.ClientCapabilities, name, version string, audio, logout bool) *acp.InitializeResponse {
	title := "acpd"
	resp := &acp.InitializeResponse{
		ProtocolVersion: acp.ProtocolVersion(acp.ProtocolVersion1),
		AgentCapabilities: &acp.AgentCapabilities{
			Meta:               map[string]any{"claudeCode": map[string]any{"promptQueueing": true}},
			LoadSession:        true,
			PromptCapabilities: &acp.PromptCapabilities{Image: true, Audio: audio, EmbeddedContext: true},
			McpCapabilities:    &acp.McpCapabilities{HTTP: true, Sse: true},
			SessionCapabilities: &acp.SessionCapabilities{
				List:                  &acp.SessionListCapabilities{},
				Resume:                &acp.SessionResumeCapabilities{},
				Close:                 &acp.SessionCloseCapabilities{},
				Delete:                &acp.SessionDeleteCapabilities{},
				AdditionalDirectories: &acp.SessionAdditionalDirectoriesCapabilities{},
				// UNSTABLE in ACP; clients that do not know it ignore it.
				Fork: &acp.SessionForkCapabilities{},
			},
		},
		AuthMethods: Offered(caps),
		AgentInfo:   &acp.Implementation{Name: name, Title: &title, Version: version},
		Meta:        map[string]any{"steering": map[string]any{"supported": true}},
	}
	if logout {
		resp.AgentCapabilities.Auth = &acp.AgentAuthCapabilities{Logout: &acp.LogoutCapabilities{}}
	}
	return resp
}

// Offered are the methods offered to a client with caps (nil: none known).
func Offered(caps *acp.ClientCapabilities) []acp.AuthMethod {
	envDesc := "Use the API keys in acpd's environment (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, …) or stored by `acpd login`."
	ms := []acp.AuthMethod{{Agent: &acp.AuthMethodAgent{ID: Env, Name: "API key from the environment", Description: &envDesc}}}
	if caps != nil && caps.Meta["terminal-auth"] == true {
		// Zed before terminal auth methods: it runs the command in a
		// terminal, then retries (session/new re-reads stored keys).
		if self, err := os.Executable(); err == nil {
			ms[0].Agent.Meta = map[string]any{"terminal-auth": map[string]any{"label": "acpd login", "command": self, "args": []string{"login"}}}
		}
	}
	if caps != nil && caps.Auth != nil && caps.Auth.Terminal {
		loginDesc := "Choose a provider and enter its API key; acpd stores it for later sessions."
		ms = append(ms, acp.AuthMethod{Terminal: &acp.AuthMethodTerminal{ID: Login, Name: "Log in with an API key", Description: &loginDesc, Args: []string{"login"}}})
	}
	return ms
}

// Check is nil for a method acpd accepts and an invalid-params error
// naming both for any other.
func Check(id acp.AuthMethodID) error {
	switch id {
	case Env, Login:
		return nil
	}
	return &jsonrpc.Error{Code: int(acp.ErrorCodeInvalidParams), Message: fmt.Sprintf("unknown authentication method %q (acpd offers %s and %s)", id, Env, Login)}
}
