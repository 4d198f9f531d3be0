package openai

import (
	"testing"

	"acpd/model"
	"acpd/model/internal/sse/ssetest"
)

// requestBody is the body requestPayload sends, whole.
func (b *Backend) requestBody(req *model.Request) ([]byte, error) {
	return ssetest.Whole(b.requestPayload)(req)
}

func TestLongAnswer(t *testing.T) {
	ssetest.CheckLongAnswer(t, "", New(Options{ReasoningContent: true}).requestPayload)
}

func TestMemo(t *testing.T) {
	ssetest.CheckMemo(t, "openai", New(Options{}).requestPayload, New(Options{ReasoningContent: true}).requestPayload,
		New(Options{MaxTokensField: "max_tokens"}).requestPayload)
}

func TestShared(t *testing.T) {
	ssetest.CheckShared(t, "openai", true, New(Options{}).requestPayload, New(Options{ReasoningContent: true}).requestPayload,
		New(Options{MaxTokensField: "max_tokens"}).requestPayload)
}
