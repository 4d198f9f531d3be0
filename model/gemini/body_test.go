package gemini

import (
	"testing"

	"acpd/model"
	"acpd/model/internal/sse/ssetest"
)

// requestBody is the body requestPayload sends, whole.
func requestBody(req *model.Request) ([]byte, error) {
	p, err := requestPayload(req)
	if err != nil {
		return nil, err
	}
	return p.Bytes(), nil
}

func TestLongAnswer(t *testing.T) { ssetest.CheckLongAnswer(t, Provider, requestPayload) }
