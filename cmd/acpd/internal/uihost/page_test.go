package uihost

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// Every placeholder of the pages is a whole double-quoted attribute value:
// the one context where page's escaping is all that is needed.
func TestPagePlaceholders(t *testing.T) {
	entries, err := pageFS.ReadDir("page")
	if err != nil {
		t.Fatal(err)
	}
	attr := regexp.MustCompile(` [a-z-]+="\{\{\.[A-Za-z]+\}\}"`)
	n := 0
	for _, e := range entries {
		b, err := pageFS.ReadFile("page/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		all := strings.Count(string(b), "{{")
		ok := len(attr.FindAllIndex(b, -1))
		if all != ok {
			t.Errorf("%s: %d placeholders, %d of them a whole quoted attribute value", e.Name(), all, ok)
		}
		n += all
	}
	if n != 3 {
		t.Errorf("%d placeholders in the pages, want 3 (Name, Version, Host)", n)
	}
}

func TestPageEscapes(t *testing.T) {
	got, err := page("proxy.html", map[string]string{"Host": `http://x" onload="alert(1)&<b>'`})
	if err != nil {
		t.Fatal(err)
	}
	want := `<meta name="acpd-host" content="http://x&#34; onload=&#34;alert(1)&amp;&lt;b&gt;&#39;">`
	if !strings.Contains(string(got), want) {
		t.Errorf("proxy page without %s:\n%s", want, got)
	}
	if strings.Contains(string(got), "{{") {
		t.Errorf("placeholder left: %s", got)
	}
	if _, err := page("index.html", map[string]string{"Name": "n"}); err == nil || !strings.Contains(err.Error(), "Version") {
		t.Errorf("a missing value: err = %v", err)
	}
}

// The served host page carries the host's name and version, escaped.
func TestIndexPage(t *testing.T) {
	h := New(Options{Name: `acpd "run"`, Version: "1<2"})
	resp, err := http.Get(startHost(t, h))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("page: %s %s", resp.Status, resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{`<meta name="acpd-host-name" content="acpd &#34;run&#34;">`, `<meta name="acpd-host-version" content="1&lt;2">`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("page without %s:\n%s", want, b)
		}
	}
}
