package frontmatter

import "testing"

func TestSplit(t *testing.T) {
	keys, body, ok := Split("---\nname: pdf\ndescription: \"Fill: forms\"\nhint: '[x]'\n  nested: skipped\n- item\n---\n\nThe body.\n")
	if !ok || keys["name"] != "pdf" || keys["description"] != "Fill: forms" || keys["hint"] != "[x]" || len(keys) != 3 || body != "The body." {
		t.Errorf("Split = %v %q %v", keys, body, ok)
	}
	if _, body, ok := Split("no header\n"); ok || body != "no header\n" {
		t.Errorf("without a header: %q %v", body, ok)
	}
	if _, _, ok := Split("---\nunclosed: x\n"); ok {
		t.Error("an unclosed header was read")
	}
	if keys, body, ok := Split("---\r\na: b\r\n---"); !ok || keys["a"] != "b" || body != "" {
		t.Errorf("CRLF, no body: %v %q %v", keys, body, ok)
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("---\na: b\n---\nbody")
	f.Add("---\n---")
	f.Fuzz(func(t *testing.T, s string) { _, _, _ = Split(s) })
}
