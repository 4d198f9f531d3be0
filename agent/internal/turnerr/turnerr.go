// Package turnerr holds the JSON-RPC errors a prompt turn fails with, each
// telling the user what to do: no model ([NoModel]), a failed model
// request ([Model]), a session log that could not be written
// ([NotSaved]) and an overlapping prompt ([InProgress]). Errors are
// *jsonrpc.Error values; the package keeps no state.
package turnerr

import (
	"errors"
	"fmt"
	"strings"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/model"
)

// InProgress answers a prompt that finds the running turn's queue full
// (invalid params).
var InProgress = &jsonrpc.Error{Code: int(acp.ErrorCodeInvalidParams), Message: "turn in progress and too many prompts queued behind it: wait for them, or send session/cancel to drop them"}

// NoModel is the authentication-required error for a session without a
// model: ref, when not "", is the model that did not resolve, with err why.
// The message says how to configure one; for an explicit model it is one
// sentence: the model asked for, why it cannot be served, what to do.
func NoModel(ref string, err error) error {
	msg := "No model is configured. Set ANTHROPIC_API_KEY, OPENAI_API_KEY (with OPENAI_BASE_URL for compatible servers) or GEMINI_API_KEY in acpd's environment, run `acpd login`, or start a local model server (Ollama, LM Studio, llama.cpp, vLLM); choose a model with ACPD_MODEL=provider/model (or --model), then send the prompt again."
	if ref != "" {
		msg = fmt.Sprintf("Model %q cannot be used: %s; choose another in the model selector (or with ACPD_MODEL=provider/model or --model), or fix its provider, and send the prompt again.", ref, Reason(err))
	}
	return &jsonrpc.Error{Code: int(acp.ErrorCodeAuthenticationRequired), Message: msg}
}

// sentinels are the wrapping words of the model resolver's errors, which
// say nothing the reason does not ("no model configured: model
// unavailable: openai needs an API key").
var sentinels = []string{"no model configured: ", "model unavailable: ", "no model configured", "model unavailable"}

// Reason is err's message without the resolver's wrapping sentinels and a
// trailing period: the part that says why.
func Reason(err error) string {
	if err == nil {
		return "it is not available"
	}
	msg := err.Error()
	for again := true; again; {
		again = false
		for _, p := range sentinels {
			if rest, ok := strings.CutPrefix(msg, p); ok {
				msg, again = rest, true
			}
		}
	}
	msg = strings.TrimRight(strings.TrimSpace(msg), ".")
	if msg == "" {
		return "no backend serves it"
	}
	return msg
}

// NotSaved is the error of a turn that could not write the session log
// (err says why: a full disk, a record that does not encode): the user
// learns that a resumed or loaded session would differ from what they saw.
func NotSaved(err error) error {
	return &jsonrpc.Error{Code: int(acp.ErrorCodeInternalError), Message: "The session could not be saved: " + err.Error() +
		". What was not saved is missing when the session is resumed or loaded; free disk space (or fix the state directory) and send the prompt again."}
}

// Model turns a failed model request into the turn's error: a *model.Error
// with its hint, authentication required for model.ErrAuth and internal
// otherwise; any other error is internal ("model request failed: ...").
func Model(err error) error {
	var me *model.Error
	if !errors.As(err, &me) {
		return &jsonrpc.Error{Code: int(acp.ErrorCodeInternalError), Message: "model request failed: " + err.Error()}
	}
	code := acp.ErrorCodeInternalError
	if me.Kind == model.ErrAuth {
		code = acp.ErrorCodeAuthenticationRequired
	}
	return &jsonrpc.Error{Code: int(code), Message: me.Error() + ": " + me.Hint()}
}

// ModelOf is Model for a request to the model ref ("provider/model"): a
// refused key also says how to store another (`acpd login PROVIDER`),
// since the provider's answer alone does not.
func ModelOf(ref string, err error) error {
	e := Model(err)
	var me *model.Error
	var ae *jsonrpc.Error
	prov, _, perr := model.ParseRef(ref)
	if perr != nil || !errors.As(err, &me) || me.Kind != model.ErrAuth || !errors.As(e, &ae) {
		return e
	}
	return &jsonrpc.Error{Code: ae.Code, Message: fmt.Sprintf("%s. Store a key for %s with `acpd login %s`, or set its API key in acpd's environment.", strings.TrimRight(ae.Message, ". "), prov, prov)}
}
