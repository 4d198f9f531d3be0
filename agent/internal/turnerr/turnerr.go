// Package turnerr holds the JSON-RPC errors a prompt turn fails with, each
// telling the user what to do: no model ([NoModel]), a failed model
// request ([Model]), and an overlapping prompt ([InProgress]). Errors are
// *acp.Error values; the package keeps no state.
package turnerr

import (
	"errors"
	"fmt"

	"acpd/acp"
	"acpd/model"
)

// InProgress answers a prompt that overlaps a running, uncancelled turn
// (invalid params).
var InProgress = &acp.Error{Code: int(acp.ErrorCodeInvalidParams), Message: "turn in progress: wait for the running prompt to finish or send session/cancel first"}

// NoModel is the authentication-required error for a session without a
// model: ref, when not "", is the model that did not resolve, with err why.
// The message says how to configure one.
func NoModel(ref string, err error) error {
	msg := "No model is configured. Set ANTHROPIC_API_KEY, OPENAI_API_KEY (with OPENAI_BASE_URL for compatible servers) or GEMINI_API_KEY, or OLLAMA_HOST for a local Ollama, and choose a model with ACPD_MODEL=provider/model (or --model)."
	if ref != "" {
		msg = fmt.Sprintf("Model %q is not available: %v. %s", ref, err, msg)
	}
	return &acp.Error{Code: int(acp.ErrorCodeAuthenticationRequired), Message: msg}
}

// Model turns a failed model request into the turn's error: a *model.Error
// with its hint, authentication required for model.ErrAuth and internal
// otherwise; any other error is internal ("model request failed: ...").
func Model(err error) error {
	var me *model.Error
	if !errors.As(err, &me) {
		return &acp.Error{Code: int(acp.ErrorCodeInternalError), Message: "model request failed: " + err.Error()}
	}
	code := acp.ErrorCodeInternalError
	if me.Kind == model.ErrAuth {
		code = acp.ErrorCodeAuthenticationRequired
	}
	return &acp.Error{Code: int(code), Message: me.Error() + ": " + me.Hint()}
}
