package responses

import (
	"testing"

	"acpd/model/internal/sse/ssetest"
)

// requestBody is the body requestPayload sends, whole.
var requestBody = ssetest.Whole(requestPayload)

func TestLongAnswer(t *testing.T) { ssetest.CheckLongAnswer(t, Provider, requestPayload) }

func TestMemo(t *testing.T) { ssetest.CheckMemo(t, Provider, requestPayload) }

func TestShared(t *testing.T) { ssetest.CheckShared(t, Provider, true, requestPayload) }
