package tools

import "testing"

// What the editor shows of a read: a fenced block in the file's language,
// no line numbers, a fence longer than the text's backtick runs.
func TestFenced(t *testing.T) {
	for _, tc := range []struct {
		path  string
		lines []string
		max   int
		want  string
	}{
		{"/p/main.go", []string{"package main", "", "func main() {}"}, 1 << 10, "```go\npackage main\n\nfunc main() {}\n```"},
		{"/p/README.md", []string{"```sh", "make", "```"}, 1 << 10, "````md\n```sh\nmake\n```\n````"},
		{"/p/Makefile", []string{"all:"}, 1 << 10, "```\nall:\n```"},
		{"/p/weird.a b", []string{"x"}, 1 << 10, "```\nx\n```"},
		{"/p/big.txt", []string{"0123456789", "0123456789", "0123456789"}, 15, "```txt\n0123456789\n```"},
	} {
		if got := fenced(tc.path, tc.lines, tc.max); got != tc.want {
			t.Errorf("fenced(%q) = %q, want %q", tc.path, got, tc.want)
		}
	}
}
