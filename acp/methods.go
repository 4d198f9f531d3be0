package acp

import (
	"encoding/json"
	"fmt"
)

// Method names for the stable ACP v1 methods (AgentMethod*, ClientMethod*,
// MethodCancelRequest) are generated from the schema into types_gen.go.

// ProtocolVersion1 is ACP protocol version 1, the version this package speaks.
const ProtocolVersion1 ProtocolVersion = 1

// AgentMethodSessionSetModel is the legacy, unstable "session/set_model"
// method from the early ACP v1 schema (the stable schema replaced it with
// session configuration options, see [AgentMethodSessionSetConfigOption]).
// Its parameters are [SetSessionModelRequest]; its result is
// [SetSessionModelResponse]. Agents handle it.
const AgentMethodSessionSetModel = "session/set_model"

// SetSessionModelRequest is the parameter object of the legacy, unstable
// [AgentMethodSessionSetModel] method: switch the session to another model.
type SetSessionModelRequest struct {
	// The ID of the session to set the model for.
	SessionID SessionID `json:"sessionId"`
	// The ID of the model to set.
	ModelID string `json:"modelId"`
	// Extension point for implementations.
	Meta map[string]any `json:"_meta,omitzero"`
}

// UnmarshalJSON implements [json.Unmarshaler]; it rejects objects missing
// sessionId or modelId.
func (v *SetSessionModelRequest) UnmarshalJSON(data []byte) error {
	type alias SetSessionModelRequest
	if err := genCheckRequired("SetSessionModelRequest", data, []string{"sessionId", "modelId"}, nil); err != nil {
		return err
	}
	if err := json.Unmarshal(data, (*alias)(v)); err != nil {
		return fmt.Errorf("acp: SetSessionModelRequest: %w", err)
	}
	return nil
}

// SetSessionModelResponse is the result of the legacy, unstable
// [AgentMethodSessionSetModel] method.
type SetSessionModelResponse struct {
	// Extension point for implementations.
	Meta map[string]any `json:"_meta,omitzero"`
}
