// Command noreach fails when code of this module reaches into another
// package's unexported state, which no version of that package promises to
// keep: a dependency upgrade would then break acpd at run time instead of at
// build time. `make vet` runs it over the module (`go run ./internal/noreach`).
//
// It reports, in every .go file under the given directory (default ".";
// testdata, node_modules, hidden directories and the build outputs bin and
// dist at the top skipped), tests included:
//
//   - an import of "unsafe" outside the files listed in allowUnsafe, each
//     with its reason (Windows API structures passed by pointer);
//   - a call of reflect.NewAt or of a method named UnsafePointer or
//     UnsafeAddr: the ways reflect turns a value, an unexported field's
//     included, into a writable pointer;
//   - a FieldByName call whose argument is a string literal naming an
//     unexported field;
//   - a //go:linkname directive.
//
// The checks are syntactic on purpose: they need no type information, so
// they run on every platform's files at once, whatever the build tags.
package main

import (
	"fmt"
	"os"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	findings, err := check(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "noreach:", err)
		os.Exit(2)
	}
	for _, f := range findings {
		fmt.Fprintln(os.Stderr, f)
	}
	if len(findings) > 0 {
		fmt.Fprintf(os.Stderr, "noreach: %d place(s) reach into another package's unexported state\n", len(findings))
		os.Exit(1)
	}
}
