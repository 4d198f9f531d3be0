package gemini

import (
	"testing"

	"acpd/model"
	"acpd/model/internal/body"
	"acpd/model/internal/sse/ssetest"
)

// requestBody is the body requestPayload sends, whole.
var requestBody = ssetest.Whole(requestPayload)

func TestLongAnswer(t *testing.T) { ssetest.CheckLongAnswer(t, Provider, requestPayload) }

func TestMemo(t *testing.T) {
	withModel := func(id string) ssetest.Payload {
		return func(req *model.Request) (*body.Payload, error) {
			r := *req
			r.Model = id
			return requestPayload(&r)
		}
	}
	// Gemini 3 gives unsigned calls the sentinel signature; 2.5 does not.
	ssetest.CheckMemo(t, Provider, withModel("gemini-3-pro-preview"), withModel("gemini-2.5-flash"))
}

func TestShared(t *testing.T) {
	withModel := func(id string) ssetest.Payload {
		return func(req *model.Request) (*body.Payload, error) {
			r := *req
			r.Model = id
			return requestPayload(&r)
		}
	}
	// Gemini 3 gives unsigned calls the sentinel signature; 2.5 does not.
	ssetest.CheckShared(t, Provider, false, withModel("gemini-3-pro-preview"), withModel("gemini-2.5-flash"))
}
