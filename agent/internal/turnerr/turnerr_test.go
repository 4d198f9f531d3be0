package turnerr

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"acpd/acp"
	"acpd/acp/jsonrpc"
	"acpd/model"
)

func code(t *testing.T, err error) (int, string) {
	t.Helper()
	var ae *jsonrpc.Error
	if !errors.As(err, &ae) {
		t.Fatalf("%v is not an *jsonrpc.Error", err)
	}
	return ae.Code, ae.Message
}

// A missing model asks for authentication and says how to configure one;
// a model's auth failure asks for authentication too, with the hint; any
// other failure is internal.
func TestErrors(t *testing.T) {
	if c, msg := code(t, NoModel("", nil)); c != int(acp.ErrorCodeAuthenticationRequired) || !strings.HasPrefix(msg, "No model is configured.") {
		t.Errorf("NoModel: %d %q", c, msg)
	}
	if _, msg := code(t, NoModel("x/y", errors.New("gone"))); !strings.HasPrefix(msg, `Model "x/y" cannot be used: gone; choose another in the model selector`) {
		t.Errorf("NoModel(ref): %q", msg)
	}
	// The resolver's wrapping words are dropped: one sentence, no
	// "No model is configured" after an explicit model.
	wrapped := fmt.Errorf("%w: %w", errors.New("no model configured"), errors.New("model unavailable: openai needs an API key: set OPENAI_API_KEY, or store one with `acpd login openai`"))
	want := "Model \"openai/x\" cannot be used: openai needs an API key: set OPENAI_API_KEY, or store one with `acpd login openai`; choose another in the model selector (or with ACPD_MODEL=provider/model or --model), or fix its provider, and send the prompt again."
	if _, msg := code(t, NoModel("openai/x", wrapped)); msg != want {
		t.Errorf("NoModel(wrapped):\n got %q\nwant %q", msg, want)
	}
	auth := &model.Error{Kind: model.ErrAuth, Message: "bad key"}
	if c, msg := code(t, Model(fmt.Errorf("turn: %w", auth))); c != int(acp.ErrorCodeAuthenticationRequired) || msg != auth.Error()+": "+auth.Hint() {
		t.Errorf("Model(auth): %d %q", c, msg)
	}
	if c, msg := code(t, ModelOf("openai/x", fmt.Errorf("turn: %w", auth))); c != int(acp.ErrorCodeAuthenticationRequired) || !strings.Contains(msg, "`acpd login openai`") || !strings.HasPrefix(msg, auth.Error()) {
		t.Errorf("ModelOf(auth): %d %q", c, msg)
	}
	if _, msg := code(t, ModelOf("openai/x", errors.New("boom"))); msg != "model request failed: boom" {
		t.Errorf("ModelOf(other): %q", msg)
	}
	if c, msg := code(t, NotSaved(errors.New("disk full"))); c != int(acp.ErrorCodeInternalError) || !strings.HasPrefix(msg, "The session could not be saved: disk full. ") || !strings.Contains(msg, "resumed or loaded") {
		t.Errorf("NotSaved: %d %q", c, msg)
	}
	if c, msg := code(t, Model(errors.New("boom"))); c != int(acp.ErrorCodeInternalError) || msg != "model request failed: boom" {
		t.Errorf("Model(other): %d %q", c, msg)
	}
}
