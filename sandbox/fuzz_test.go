package sandbox

import (
	"encoding/json"
	"testing"
)

// FuzzUnwrap feeds arbitrary helper arguments, as another agent's
// terminal/create may send them, to Unwrap: it must not panic, and what it
// accepts is only the inner command (never a policy or an unconfined flag).
func FuzzUnwrap(f *testing.F) {
	f.Add(stage1Arg, `{"path":"/bin/sh","args":["sh","-c","id"],"unconfined":true,"plan":{"writable":["/"]}}`)
	f.Add(stage1Arg, `{"path":"","args":[]}`)
	f.Add("x", "{}")
	f.Add(stage1Arg, `[1,2`)
	f.Fuzz(func(t *testing.T, a0, a1 string) {
		path, argv, ok := Unwrap("acpd", []string{a0, a1})
		if !ok {
			return
		}
		if a0 != stage1Arg || path == "" || len(argv) == 0 {
			t.Fatalf("accepted %q %q as %q %q", a0, a1, path, argv)
		}
		var req helperRequest
		if err := json.Unmarshal([]byte(a1), &req); err != nil || req.Path != path {
			t.Fatalf("accepted %q without decoding it to that path", a1)
		}
	})
}
