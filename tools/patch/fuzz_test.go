package patch

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics, and what it accepts survives the round trip
// through the canonical form and applies to any content without panicking.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/parse/*.patch")
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b), "a\nb\nc\n")
		}
	}
	f.Add("*** Begin Patch\n*** Update File: x\n@@\n-\n+\n*** End of File\n*** End Patch", "\r\n\r\n")
	f.Fuzz(func(t *testing.T, text, content string) {
		p, err := Parse(text)
		if err != nil {
			return
		}
		q, err := Parse(p.String())
		if err != nil {
			t.Fatalf("canonical form does not parse: %v\n%s", err, p.String())
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip changed the patch:\n%#v\n%#v", p, q)
		}
		for _, h := range p.Hunks {
			if h.Op != Update {
				continue
			}
			out, err := UpdateText(content, h.Chunks, h.Path)
			if err == nil && out != "" && !strings.HasSuffix(out, "\n") {
				t.Fatalf("result does not end with a newline: %q", out)
			}
		}
	})
}
