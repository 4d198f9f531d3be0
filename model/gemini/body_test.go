package gemini

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

func TestToolMemo(t *testing.T) { ssetest.CheckToolMemo(t, requestPayload) }

func TestMemo(t *testing.T) {
	withModel := func(id string) ssetest.Payload {
		return func(req *model.Request) (*body.Payload, error) {
			r := *req
			r.Model = id
			return payload(&r)
		}
	}
	// Gemini 3 gives unsigned calls the sentinel signature; 2.5 does not.
	ssetest.CheckMemo(t, Provider, withModel("gemini-3-pro-preview"), withModel("gemini-2.5-flash"))
}

func BenchmarkRequestTools80(b *testing.B) { ssetest.BenchmarkTools80(b, requestPayload) }

func TestShared(t *testing.T) {
	withModel := func(id string) ssetest.Payload {
		return func(req *model.Request) (*body.Payload, error) {
			r := *req
			r.Model = id
			return payload(&r)
		}
	}
	// Gemini 3 gives unsigned calls the sentinel signature; 2.5 does not.
	ssetest.CheckShared(t, Provider, false, withModel("gemini-3-pro-preview"), withModel("gemini-2.5-flash"))
}
