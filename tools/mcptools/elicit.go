package mcptools

import (
	"encoding/json"
	"fmt"

	"acpd/acp"
)

// ElicitationSchema maps an MCP requestedSchema (untrusted) to ACP's form
// schema. It fails for anything but an object of properties of the types
// ACP defines (string, number, integer, boolean, multi-select array).
func ElicitationSchema(raw json.RawMessage) (acp.ElicitationSchema, error) {
	out := acp.ElicitationSchema{Type: acp.ElicitationSchemaTypeObject}
	if len(raw) == 0 {
		return out, nil
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return acp.ElicitationSchema{}, fmt.Errorf("requestedSchema: %w", err)
	}
	if out.Type != acp.ElicitationSchemaTypeObject {
		return acp.ElicitationSchema{}, fmt.Errorf("requestedSchema: type %q is not \"object\"", out.Type)
	}
	for name, p := range out.Properties {
		if p.String == nil && p.Number == nil && p.Integer == nil && p.Boolean == nil && p.Array == nil {
			return acp.ElicitationSchema{}, fmt.Errorf("requestedSchema: property %q has an unsupported type", name)
		}
	}
	for _, name := range out.Required {
		if _, ok := out.Properties[name]; !ok {
			return acp.ElicitationSchema{}, fmt.Errorf("requestedSchema: required property %q is not defined", name)
		}
	}
	return out, nil
}

// ElicitationContent converts the editor's answer to an elicitation to
// the JSON values MCP carries.
func ElicitationContent(in map[string]acp.ElicitationContentValue) (map[string]any, error) {
	if len(in) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("elicitation content: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("elicitation content: %w", err)
	}
	return out, nil
}
