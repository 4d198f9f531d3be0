package textedit

import (
	"errors"
	"strings"
	"testing"
)

func TestReplace(t *testing.T) {
	for _, tc := range []struct {
		name, content, old, new string
		all                     bool
		want, matcher           string
		first, last             int
	}{
		{"exact", "a\nb\nc\n", "b", "B", false, "a\nB\nc\n", Exact, 2, 2},
		{"crlf across lines", "a\r\nb\r\nc\r\n", "a\nb", "x\ny\nz", false, "x\r\ny\r\nz\r\nc\r\n", Exact, 1, 3},
		{"crlf old_string", "a\r\nb\r\n", "a\r\nb", "ab", false, "ab\r\n", Exact, 1, 1},
		{"bom kept", "\ufeffa\r\nb\r\n", "b", "c", false, "\ufeffa\r\nc\r\n", Exact, 2, 2},
		{"trailing whitespace", "func f() {  \n\treturn 1\t\n}\n", "func f() {\n\treturn 1\n", "func f() {\n\treturn 2\n", false, "func f() {\n\treturn 2\n}\n", TrailingWhitespace, 1, 2},
		{"indentation", "func g() {\n\t\tif x {\n\t\t\ty()\n\t\t}\n}\n", "if x {\n\ty()\n}", "if x {\n\tz()\n}\nw()", false, "func g() {\n\t\tif x {\n\t\t\tz()\n\t\t}\n\t\tw()\n}\n", Indentation, 2, 5},
		{"indentation, deeper old", "  a:\n    b: 1\n", "      a:\n        b: 1", "      a:\n        b: 2", false, "  a:\n    b: 2\n", Indentation, 1, 2},
		{"unicode quotes and dashes", "  say “hi” — ok\nnext\n", "say \"hi\" - ok", "say \"bye\"", false, "  say \"bye\"\nnext\n", Punctuation, 1, 1},
		{"line-number prefixes", "a\nb\nc\nd\n", "     2\tb\n     3\tc", "     2\tB\n     3\tc", false, "a\nB\nc\nd\n", LineNumbers + Exact, 2, 3},
		{"line-number prefixes and trailing whitespace", "a  \nb\n", "     1\ta\n     2\tb", "     1\tA\n     2\tb", false, "A\nb\n", LineNumbers + TrailingWhitespace, 1, 2},
		{"replace all", "x\ny\nx\n", "x", "z", true, "z\ny\nz\n", Exact, 1, 1},
		{"delete whole lines", "a\nb\nc\n", "b  \n", "", false, "a\nc\n", TrailingWhitespace, 2, 1},
		{"no final newline", "a\nb  ", "b\n", "c\n", false, "a\nc", TrailingWhitespace, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Replace(tc.content, tc.old, tc.new, tc.all)
			if err != nil {
				t.Fatal(err)
			}
			if r.Content != tc.want || r.Matcher != tc.matcher || r.First != tc.first || r.Last != tc.last {
				t.Errorf("got %q %q lines %d-%d, want %q %q lines %d-%d", r.Content, r.Matcher, r.First, r.Last, tc.want, tc.matcher, tc.first, tc.last)
			}
		})
	}
}

func TestReplaceSnippet(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 20; i++ {
		b.WriteString("line " + string(rune('a'+i)) + "\n")
	}
	r, err := Replace(b.String(), "line k\n", "new 1\nnew 2\n", false)
	if err != nil {
		t.Fatal(err)
	}
	want := "     7\tline h\n     8\tline i\n     9\tline j\n    10\tnew 1\n    11\tnew 2\n    12\tline l\n    13\tline m\n    14\tline n\n"
	if r.Snippet != want {
		t.Errorf("snippet\n%s\nwant\n%s", r.Snippet, want)
	}
}

func TestReplaceErrors(t *testing.T) {
	for _, tc := range []struct {
		name, content, old, new string
		want                    string
	}{
		{"empty", "a", "", "b", "old_string is empty"},
		{"same", "a", "a", "a", "nothing to change"},
		{"ambiguous", "x\nx\n", "x", "y", "old_string occurs 2 times (at lines 1, 2); include more surrounding lines"},
		{"ambiguous loose match", "  a\n\ta\n", "a ", "b", "occurs 2 times (at lines 1, 2)"},
		{"not found shows the closest lines", "func main() {\n\tfmt.Println(\"hi\")\n\treturn\n}\n", "func main() {\n\tfmt.Println(\"bye\")\n\treturn\n}", "x",
			"old_string was not found in the file. The closest lines (3 of 4 lines of old_string similar) are:\n     1\tfunc main() {\n     2\t\tfmt.Println(\"hi\")\n     3\t\treturn\n     4\t}\nRead the file again"},
		{"nothing similar", "a\n", "zzz", "y", "No line of old_string occurs in the file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Replace(tc.content, tc.old, tc.new, false)
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(e.Msg, tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestReplaceEach(t *testing.T) {
	got, rs, err := ReplaceEach("a\r\nb\r\nc\r\n", []Edit{{Old: "a", New: "A"}, {Old: "A\nb", New: "AB"}})
	if err != nil || got != "AB\r\nc\r\n" || len(rs) != 2 {
		t.Fatalf("got %q %v %v", got, rs, err)
	}
	_, _, err = ReplaceEach("a\nb\n", []Edit{{Old: "a", New: "A"}, {Old: "zz", New: "y"}})
	if err == nil || !strings.HasPrefix(err.Error(), "edit 2 of 2: old_string was not found") || !strings.Contains(err.Error(), "no edit was applied") {
		t.Fatalf("err %v", err)
	}
}
