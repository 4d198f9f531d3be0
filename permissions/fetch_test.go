package permissions

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"acpd/acp"
)

// fetchTools are testTools plus web_fetch.
var fetchTools = func() map[string]acp.ToolKind {
	m := maps.Clone(testTools)
	m["web_fetch"] = acp.ToolKindFetch
	return m
}()

func fetch(url string) Call {
	return Call{Tool: "web_fetch", Kind: acp.ToolKindFetch, URL: url}
}

func (w workspace) fetchPolicy(t *testing.T, store *Store, rules ...Rule) *Policy {
	t.Helper()
	p, err := NewPolicy(PolicyOptions{Tools: fetchTools, Rules: rules, Protected: []string{w.config, w.state}, Store: store, Project: w.root})
	if err != nil {
		t.Fatalf("NewPolicy: %v", err)
	}
	return p
}

func TestOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://example.com/a?b#c":        "https://example.com",
		"HTTPS://Example.COM./x":           "https://example.com",
		"https://example.com:443/":         "https://example.com",
		"http://example.com:80":            "http://example.com",
		"http://example.com:443":           "http://example.com:443",
		"https://example.com:0080":         "https://example.com:80",
		"http://127.0.0.1:8080/exfil?d=1":  "http://127.0.0.1:8080",
		"http://user:pw@example.com/":      "http://example.com",
		"http://[::1]:9/":                  "http://[::1]:9",
		"http://[::1]/":                    "http://[::1]",
		"file:///etc/passwd":               "",
		"javascript:alert(1)":              "",
		"https:///path":                    "",
		"/relative":                        "",
		"http://example.com:99999/":        "",
		"http://example.com:x/":            "",
		"":                                 "",
		"ftp://example.com":                "",
		"http://%zz":                       "",
		"https://example.com\x00.evil.com": "",
	} {
		if got := Origin(in); got != want {
			t.Errorf("Origin(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestOriginPattern(t *testing.T) {
	cases := []struct {
		pattern string
		match   []string
		nomatch []string
	}{
		{"https://example.com", []string{"https://example.com"}, []string{"http://example.com", "https://example.com:8443", "https://a.example.com", "https://example.com.evil.net", "https://evilexample.com", ""}},
		{"https://example.com:443/", []string{"https://example.com"}, []string{"https://example.com:444"}},
		{"HTTP://Example.com:8080", []string{"http://example.com:8080"}, []string{"http://example.com", "https://example.com:8080"}},
		{"https://*.example.com", []string{"https://a.example.com", "https://a.b.example.com"}, []string{"https://example.com", "https://aexample.com", "https://a.example.com:8443"}},
		{"http://127.0.0.1:*", []string{"http://127.0.0.1", "http://127.0.0.1:8080"}, []string{"http://127.0.0.2:8080", "https://127.0.0.1"}},
		{"https://*", []string{"https://example.com", "https://1.2.3.4"}, []string{"http://example.com", "https://example.com:8443"}},
		{"http://[::1]:9", []string{"http://[::1]:9"}, []string{"http://[::1]", "http://[::2]:9"}},
	}
	for _, c := range cases {
		op, err := compileOriginPattern(c.pattern)
		if err != nil {
			t.Errorf("%q: %v", c.pattern, err)
			continue
		}
		for _, o := range c.match {
			if !op.match(o) {
				t.Errorf("%q does not match %q", c.pattern, o)
			}
		}
		for _, o := range c.nomatch {
			if op.match(o) {
				t.Errorf("%q matches %q", c.pattern, o)
			}
		}
	}
	for _, bad := range []string{"example.com", "ftp://example.com", "https://example.com/docs", "https://example.com?x", "https://u@example.com",
		"https://", "https://ex*mple.com", "https://a.*.com", "https://example.com:", "https://example.com:0", "https://example.com:70000", "https://[zz]", "https://ex ample.com"} {
		if _, err := compileOriginPattern(bad); err == nil {
			t.Errorf("%q compiled", bad)
		}
	}
}

// TestDecideFetch: a fetch asks except in full mode, where it asks too when
// the sandbox keeps commands off the network, naming the URL; rules match
// origins; plan mode refuses it.
func TestDecideFetch(t *testing.T) {
	w := newWorkspace(t)
	p := w.fetchPolicy(t, nil)
	url := "http://127.0.0.1:4242/exfil?data=secret"
	for _, tc := range []struct {
		name string
		call Call
		want byMode
	}{
		{"online", fetch(url), byMode{Ask, Ask, Deny, Allow}},
		{"offline", Call{Tool: "web_fetch", Kind: acp.ToolKindFetch, URL: url, Offline: true}, byMode{Ask, Ask, Deny, Ask}},
		{"no URL", fetch("file:///etc/passwd"), byMode{Ask, Ask, Deny, Ask}},
	} {
		for i, mode := range allModes {
			d := p.Decide(mode, tc.call)
			if d.Action != tc.want[i] {
				t.Errorf("%s in %s mode: %s (%s), want %s", tc.name, mode, d.Action, d.Reason, tc.want[i])
			}
			if d.Action == Ask && tc.call.URL == url && !strings.Contains(d.Reason, url) {
				t.Errorf("%s in %s mode: the reason does not name the URL: %q", tc.name, mode, d.Reason)
			}
			if d.Action == Ask && strings.Contains(d.Reason, "mode") && !strings.Contains(d.Reason, string(mode)) {
				t.Errorf("%s in %s mode: the reason names another mode: %q", tc.name, mode, d.Reason)
			}
		}
	}

	rules := []Rule{
		{Action: Allow, Tool: "web_fetch", Match: "https://docs.example.com"},
		{Action: Deny, Tool: "web_fetch", Match: "https://*.evil.test"},
		{Action: Ask, Tool: "web_*", Match: "https://ask.example.com"},
		{Action: Deny, Tool: "*", Match: "secrets/**"}, // a path rule: no origin, never a fetch
	}
	p = w.fetchPolicy(t, nil, rules...)
	for _, tc := range []struct {
		mode    Mode
		url     string
		offline bool
		want    Action
	}{
		{ModeAsk, "https://docs.example.com/pkg?x=1", false, Allow},
		{ModeFull, "https://docs.example.com/pkg", true, Allow},
		{ModeAsk, "http://docs.example.com/pkg", false, Ask},
		{ModeAsk, "https://docs.example.com:8443/pkg", false, Ask},
		{ModeFull, "https://a.evil.test/", false, Deny},
		{ModeFull, "https://ask.example.com/", false, Ask},
		{ModeFull, "https://secrets/x", false, Allow},
		{ModePlan, "https://docs.example.com/", false, Deny},
	} {
		c := fetch(tc.url)
		c.Offline = tc.offline
		if d := p.Decide(tc.mode, c); d.Action != tc.want {
			t.Errorf("%s %s (offline %v): %s (%s), want %s", tc.mode, tc.url, tc.offline, d.Action, d.Reason, tc.want)
		}
	}
	// A rule naming only fetch tools must have an origin as its Match.
	if _, err := NewPolicy(PolicyOptions{Tools: fetchTools, Rules: []Rule{{Action: Allow, Tool: "web_fetch", Match: "docs/**"}}}); err == nil || !strings.Contains(err.Error(), "origin") {
		t.Errorf("a path Match on web_fetch: %v", err)
	}
}

// TestRememberFetchByOrigin: "always allow" of a fetch remembers its URL's
// origin, which the option's name shows; it covers every URL of that
// origin and nothing else (another host, port, scheme or subdomain asks),
// and lifts the offline ask of full mode. A remembered approval without an
// origin allows nothing; a remembered rejection of an origin denies.
func TestRememberFetchByOrigin(t *testing.T) {
	w := newWorkspace(t)
	store := openTestStore(t, w.state)
	p := w.fetchPolicy(t, store)
	call := fetch("https://example.com/docs/a?q=1")
	d := p.Decide(ModeAsk, call)
	want := []Rule{{Tool: "web_fetch", Match: "https://example.com"}}
	if d.Action != Ask || !slices.Equal(d.Remember, want) {
		t.Fatalf("Decide: %+v, want ask remembering %v", d, want)
	}
	opts := Options(d)
	if len(opts) != 4 || !strings.Contains(opts[1].Name, "https://example.com") || !strings.HasPrefix(opts[1].Name, "Always allow") {
		t.Fatalf("options do not show the origin: %+v", opts)
	}
	// A decision for one URL cannot be stored for another's origin.
	if err := p.Remember(fetch("https://other.example/"), d, true); err == nil {
		t.Fatal("remembered the origin of another call")
	}
	if err := p.Remember(call, d, true); err != nil {
		t.Fatal(err)
	}
	if got := rememberedMatches(t, store, w.root); len(got) != 1 || got["web_fetch https://example.com"] != Allow {
		t.Fatalf("stored %v", got)
	}
	for url, want := range map[string]Action{
		"https://example.com/":             Allow,
		"https://EXAMPLE.com:443/other":    Allow,
		"http://example.com/":              Ask,
		"https://example.com:8443/":        Ask,
		"https://sub.example.com/":         Ask,
		"https://example.com.evil.test/":   Ask,
		"http://127.0.0.1:8080/exfil?d=1":  Ask,
		"https://user@example.com/x":       Allow,
		"https://example.com/../../etc/pw": Allow,
	} {
		if d := p.Decide(ModeAsk, fetch(url)); d.Action != want {
			t.Errorf("%s: %s (%s), want %s", url, d.Action, d.Reason, want)
		}
	}
	offline := fetch("https://example.com/x")
	offline.Offline = true
	if d := p.Decide(ModeFull, offline); d.Action != Allow {
		t.Errorf("offline fetch of the remembered origin in full mode: %s (%s)", d.Action, d.Reason)
	}
	offline.URL = "https://elsewhere.example/"
	if d := p.Decide(ModeFull, offline); d.Action != Ask || !strings.Contains(d.Reason, offline.URL) {
		t.Errorf("offline fetch of another origin in full mode: %s (%s)", d.Action, d.Reason)
	}

	// An unscoped approval, as older versions stored it, allows nothing.
	if err := store.add(w.root, []Rule{{Action: Allow, Tool: "web_fetch"}}); err != nil {
		t.Fatal(err)
	}
	if d := p.Decide(ModeAsk, fetch("https://unscoped.example/")); d.Action != Ask {
		t.Errorf("an unscoped remembered approval allowed a fetch: %s (%s)", d.Action, d.Reason)
	}

	// Always reject of an origin denies it, in full mode too.
	bad := fetch("http://127.0.0.1:9/x")
	d = p.Decide(ModeAsk, bad)
	if err := p.Remember(bad, d, false); err != nil {
		t.Fatal(err)
	}
	if d := p.Decide(ModeFull, fetch("http://127.0.0.1:9/y")); d.Action != Deny {
		t.Errorf("a rejected origin: %s (%s)", d.Action, d.Reason)
	}
	if d := p.Decide(ModeFull, fetch("http://127.0.0.1:10/y")); d.Action != Allow {
		t.Errorf("another port of a rejected origin: %s (%s)", d.Action, d.Reason)
	}

	// A call without an origin cannot be remembered.
	if d := p.Decide(ModeAsk, fetch("file:///etc/passwd")); d.Action != Ask || len(d.Remember) != 0 {
		t.Errorf("no URL: %+v", d)
	}
}

// TestDecideSearch: web_search, a fetch without a URL, is judged on the
// tool: full mode allows it unless commands are kept off the network, the
// other modes ask and remember the tool, rules on the tool decide first,
// and plan mode allows it only as the read-only tool it is not.
func TestDecideSearch(t *testing.T) {
	w := newWorkspace(t)
	tools := maps.Clone(fetchTools)
	tools["web_search"] = acp.ToolKindFetch
	store := openTestStore(t, w.state)
	p, err := NewPolicy(PolicyOptions{Tools: tools, Store: store, Project: w.root})
	if err != nil {
		t.Fatal(err)
	}
	search := Call{Tool: "web_search", Kind: acp.ToolKindFetch}
	offline := search
	offline.Offline = true
	for _, tc := range []struct {
		mode Mode
		c    Call
		want Action
	}{
		{ModeFull, search, Allow}, {ModeFull, offline, Ask}, {ModeAsk, search, Ask}, {ModeAutoEdit, search, Ask}, {ModePlan, search, Deny},
	} {
		if d := p.Decide(tc.mode, tc.c); d.Action != tc.want {
			t.Errorf("%s offline=%v: %s (%s), want %s", tc.mode, tc.c.Offline, d.Action, d.Reason, tc.want)
		}
	}
	d := p.Decide(ModeAsk, search)
	if want := []Rule{{Tool: "web_search"}}; !slices.Equal(d.Remember, want) {
		t.Fatalf("remember %v, want %v", d.Remember, want)
	}
	if err := p.Remember(search, d, true); err != nil {
		t.Fatal(err)
	}
	if d := p.Decide(ModeAsk, search); d.Action != Allow {
		t.Errorf("after always allow: %s (%s)", d.Action, d.Reason)
	}
	deny, err := NewPolicy(PolicyOptions{Tools: tools, Rules: []Rule{{Action: Deny, Tool: "web_search"}}})
	if err != nil {
		t.Fatal(err)
	}
	if d := deny.Decide(ModeFull, search); d.Action != Deny {
		t.Errorf("deny rule: %s (%s)", d.Action, d.Reason)
	}
}
