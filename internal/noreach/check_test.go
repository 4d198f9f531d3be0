package main

import (
	"slices"
	"strings"
	"testing"
)

// acp's setRequest of before (testdata/bad/setrequest.go) and the other ways
// to reach into unexported state are reported, each at its place.
func TestCheckReportsReaching(t *testing.T) {
	got, err := check("testdata/bad")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`other.go:5:2: imports "unsafe"`,
		`other.go:6:2: imports "unsafe"`,
		`other.go:9:1: //go:linkname`,
		`other.go:13:11: reflect.NewAt`,
		`other.go:13:38: reflect's UnsafeAddr`,
		`setrequest.go:17:40: FieldByName("request") looks up an unexported field`,
		`setrequest.go:21:63: reflect's UnsafePointer`,
	}
	if len(got) != len(want) {
		t.Errorf("got %d findings, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, w) }) {
			t.Errorf("missing finding %q in:\n%s", w, strings.Join(got, "\n"))
		}
	}
}

func TestCheckAcceptsCleanCode(t *testing.T) {
	got, err := check("testdata/good")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 0 {
		t.Errorf("findings in clean code:\n%s", strings.Join(got, "\n"))
	}
}

// The module itself passes (make vet runs the same check).
func TestModuleIsClean(t *testing.T) {
	got, err := check("../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > 0 {
		t.Errorf("the module reaches into unexported state:\n%s", strings.Join(got, "\n"))
	}
}
