package openai

import (
	"net/http"

	"acpd/model"
	"acpd/model/internal/openaierr"
)

// The error parsing and classification is shared with the Responses API
// backend (package responses) through internal/openaierr.

// apiError is the error object of OpenAI and of compatible servers.
type apiError = openaierr.APIError

// maxErrorMessage bounds the message kept from an error body.
const maxErrorMessage = openaierr.MaxMessage

// parseAPIError extracts an error from a response body (see
// [openaierr.Parse]); nil when raw holds none.
func parseAPIError(raw []byte) *apiError { return openaierr.Parse(raw) }

// classify turns an error answer into a *model.Error. status is the HTTP
// status, 0 for an error inside a stream; h supplies Retry-After.
func classify(status int, h http.Header, e *apiError) *model.Error {
	return openaierr.Classify(status, h, e)
}
