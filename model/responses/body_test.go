package responses

import (
	"testing"

	"acpd/model"
	"acpd/model/internal/body"
	"acpd/model/internal/sse/ssetest"
)

// testTools is the tool memo of the package's tests, shared as a
// Backend's is by its requests.
var testTools body.ToolMemo

// payload is requestPayload with testTools.
func payload(req *model.Request) (*body.Payload, error) { return requestPayload(&testTools, req) }

// requestBody is the body requestPayload sends, whole.
var requestBody = ssetest.Whole(payload)

func TestLongAnswer(t *testing.T) { ssetest.CheckLongAnswer(t, Provider, payload) }

func TestMemo(t *testing.T) { ssetest.CheckMemo(t, Provider, payload) }

func TestToolMemo(t *testing.T) { ssetest.CheckToolMemo(t, requestPayload) }

func BenchmarkRequestTools80(b *testing.B) { ssetest.BenchmarkTools80(b, requestPayload) }

func TestShared(t *testing.T) { ssetest.CheckShared(t, Provider, true, payload) }
