package permissions

import "testing"

// TestWindowsAbsolutePatterns: a rule written as a Windows absolute path
// matches that path as the policy renders it (slashAbs), on every OS: read
// as a relative pattern it would match nothing and a deny rule would fail
// open.
func TestWindowsAbsolutePatterns(t *testing.T) {
	for _, pat := range []string{`C:/Users/me/secret/**`, `c:/Users/me/secret/**`, `C:\Users\me\secret\**`} {
		g, err := compilePathGlob(pat)
		if err != nil {
			t.Fatalf("%s: %v", pat, err)
		}
		if !g.abs {
			t.Errorf("%s: not an absolute pattern", pat)
		}
		for _, p := range []string{"/C:/Users/me/secret/key.pem", "/C:/Users/me/secret/a/b"} {
			if !g.match("", p) {
				t.Errorf("%s does not match %s", pat, p)
			}
		}
		if g.match("", "/C:/Users/me/public/x") || g.match("Users/me/secret/x", "/D:/Users/me/secret/x") {
			t.Errorf("%s matches too much", pat)
		}
	}
	if got := slashAbs("c:/Users/me"); got != "/C:/Users/me" && got != "/c:/Users/me" {
		t.Errorf("slashAbs: %q", got)
	}
	if g, _ := compilePathGlob("src/**"); g.abs {
		t.Error("a relative pattern became absolute")
	}
}
