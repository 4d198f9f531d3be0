package run

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"acpd/acp"
	"acpd/tools"
)

// content renders a form's content as JSON, for comparing.
func content(t *testing.T, c map[string]acp.ElicitationContentValue) string {
	t.Helper()
	if c == nil {
		return "decline"
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestFormContent: an --answers answer fills ask_user's forms (a choice by
// value, title or number, several choices, words of one's own) and any
// other form by its fields; what fits no field is an error, and null or
// an empty answer declines.
func TestFormContent(t *testing.T) {
	single := tools.AskForm([]string{"Postgres", "SQLite"}, true, false)
	only := tools.AskForm([]string{"Postgres", "SQLite"}, false, false)
	multi := tools.AskForm([]string{"a", "b", "c"}, false, true)
	free := tools.AskForm(nil, true, false)
	var other acp.ElicitationSchema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},"ok":{"type":"boolean"}},"required":["name"]}`), &other); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		schema acp.ElicitationSchema
		answer string
		want   string // the content, "decline", or "error: …"
	}{
		{single, `"sqlite"`, `{"question_0":"SQLite"}`},
		{single, `"2"`, `{"question_0":"SQLite"}`},
		{single, `"DuckDB, in memory"`, `{"question_0_custom":"DuckDB, in memory"}`},
		{single, `null`, "decline"},
		{single, `""`, "decline"},
		{only, `"DuckDB"`, `error: "DuckDB" is none of the choices (Postgres, SQLite)`},
		{multi, `"a, 3"`, `{"question_0":["a","c"]}`},
		{multi, `["b","c"]`, `{"question_0":["b","c"]}`},
		{multi, `["b","z"]`, `error: z is none of the choices`},
		{only, `["Postgres"]`, "error: an array answers a question that takes several choices"},
		{free, `"blue"`, `{"question_0":"blue"}`},
		{other, `{"name":"Ada","age":36,"ok":true}`, `{"age":36,"name":"Ada","ok":true}`},
		{other, `{"age":36}`, `error: the required field "name" has no answer`},
		{other, `{"nick":"A"}`, `error: the form has no field "nick"`},
		{other, `{"name":"Ada","age":3.5}`, "error: age: want a whole number"},
		{other, `"Ada"`, "error: the form has the fields age, name, ok"},
	} {
		got, err := formContent(tc.schema, json.RawMessage(tc.answer))
		g := ""
		if err != nil {
			g = "error: " + err.Error()
		} else {
			g = content(t, got)
		}
		if !strings.HasPrefix(g, tc.want) {
			t.Errorf("answer %s: %s, want %s", tc.answer, g, tc.want)
		}
	}
}

// TestLoadAnswers: the JSON form answers by question (or "*"), the line
// form in order, skipping blank lines and comments; other values are
// refused.
func TestLoadAnswers(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, err := loadAnswers(write("a.json", ` {"Which database?": "SQLite", "*": null}`))
	if err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{"Which database?": `"SQLite"`, " Which database? ": `"SQLite"`, "Other?": "null"} {
		if v, ok := a.next(q); !ok || string(v) != want {
			t.Errorf("next(%q) = %s %v, want %s", q, v, ok, want)
		}
	}
	a, err = loadAnswers(write("a.txt", "# answers\nSQLite\n\n  2, 3 \n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"SQLite"`, `"2, 3"`} {
		if v, ok := a.next("any"); !ok || string(v) != want {
			t.Errorf("next = %s %v, want %s", v, ok, want)
		}
	}
	if _, ok := a.next("any"); ok {
		t.Error("an answer after the last line")
	}
	for _, bad := range []string{`{"q": 3}`, `{"q": [1]}`, `{"q": `, "# only a comment\n"} {
		if _, err := loadAnswers(write("bad", bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
