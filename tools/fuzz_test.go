package tools

import (
	"encoding/json"
	"testing"

	"acpd/acp"
)

// FuzzToolInput: arguments from the model are decoded strictly and never
// panic; what decodes re-encodes to JSON the decoder accepts again.
func FuzzToolInput(f *testing.F) {
	for _, s := range []string{
		`{"path":"a.txt","offset":3,"limit":2}`,
		`{"path":"a","old_string":"x","new_string":"y","replace_all":true}`,
		`{"command":"ls","timeout_ms":5}`,
		`{"Path":"a"}`, `{"path":1}`, `[]`, `null`, `{"path":"a","extra":1}`,
	} {
		f.Add([]byte(s))
	}
	type edit struct {
		Path       string `json:"path"`
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := DecodeInput[edit](data)
		if err != nil {
			return
		}
		out, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeInput[edit](out); err != nil {
			t.Fatalf("re-decoding %s: %v", out, err)
		}
		var probe map[string]json.RawMessage
		if acp.Unmarshal(data, &probe) == nil {
			for k := range probe {
				switch k {
				case "path", "old_string", "new_string", "replace_all":
				default:
					// Only the documented aliases of the fields are
					// accepted besides the fields.
					known := snakeCase(k) == "replace_all" || snakeCase(k) == "old_string" || snakeCase(k) == "new_string"
					for _, to := range argAliases.Get()[k] {
						known = known || to == "path" || to == "old_string" || to == "new_string"
					}
					if !known {
						t.Fatalf("unknown argument %q was accepted", k)
					}
				}
			}
		}
	})
}
