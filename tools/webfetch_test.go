package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"acpd/acp"
	"acpd/permissions"
	"acpd/sandbox"
)

func TestHTMLText(t *testing.T) {
	doc := `<!doctype html><html><head><title>T</title><style>p{color:red}</style></head>
<body><h1>Install</h1><!-- hidden --><p>Run <code>go&nbsp;install</code> &amp; enjoy.</p>
<script>alert("x<p>")</script><ul><li>one</li><li><a href="/docs?a=1&amp;b=2">the docs</a></li></ul>
<table><tr><td>a</td><td>b</td></tr></table></body></html>`
	want := "# Install\n\nRun go install & enjoy.\n\n- one\n- [the docs](/docs?a=1&b=2)\n\n| a | b\n"
	if got := htmlText(doc); got != want {
		t.Errorf("htmlText:\n%q\nwant\n%q", got, want)
	}
}

// TestHTMLMarkdown: code blocks stay fenced code with their lines as
// written, lists nest, links resolve against the page, and what a reader
// does not see is dropped.
func TestHTMLMarkdown(t *testing.T) {
	base, _ := url.Parse("https://example.com/docs/guide/")
	cases := []struct{ name, doc, want string }{
		{"code block with language",
			"<p>Install:</p><pre><code class=\"language-go\">func main() {\n\tfmt.Println(\"&lt;hi&gt;\")\n\n\n\n}\n</code></pre><p>Done.</p>",
			"Install:\n\n```go\nfunc main() {\n\tfmt.Println(\"<hi>\")\n\n}\n```\n\nDone.\n"},
		{"code block with highlighting spans and a leading newline",
			"<pre class=\"lang-sh\">\n<span class=k>make</span>   test<br><b>go</b> vet ./...</pre>",
			"```sh\nmake   test\ngo vet ./...\n```\n"},
		{"backticks in code lengthen the fence",
			"<pre>a ``` b\n````</pre>", "`````\na ``` b\n````\n`````\n"},
		{"unclosed pre", "<pre>x\n  y", "```\nx\n  y\n```\n"},
		{"nested and ordered lists",
			"<ul><li>a<ul><li>b</li><li>c<ol start=3><li>d</li><li>e</li></ol></li></ul></li><li>f</li></ul><p>after</p>",
			"- a\n  - b\n  - c\n    3. d\n    4. e\n- f\n\nafter\n"},
		{"paragraphs in an item", "<ol><li><p>one</p><p>more</p></li><li>two</li></ol>",
			"1. one\n\n  more\n\n2. two\n"},
		{"code in an item", "<ul><li><pre>x\ny</pre></li></ul>", "- ```\n  x\n  y\n  ```\n"},
		{"headings", "<h2> Title </h2>text<h3>Sub<a href='#s'>¶</a></h3>", "## Title\n\ntext\n\n### Sub¶\n"},
		{"links resolve against the page",
			"<p>See <a href=\"../api#x\">the API</a>, <a href=\"https://other.test/a b\">other</a> and <a href=\"javascript:go()\">js</a>.</p>",
			"See [the API](https://example.com/docs/api#x), [other](https://other.test/a%20b) and js.\n"},
		{"a link with only an image is dropped", "<p>x <a href=\"/a\"><img src=i.png></a> y</p>", "x y\n"},
		{"blockquote", "<blockquote><p>one</p><p>two</p></blockquote>", "> one\n>\n> two\n"},
		{"head without an end tag", "<html><head><title>T</title><body>visible", "visible\n"},
		{"unclosed script drops only the rest", "<p>before</p><script>if (a < b) { x('</p>') }", "before\n"},
		{"nested svg", "a <svg><g><svg></svg>hidden</g></svg>b", "a b\n"},
		{"br", "one<br>two<br><br>three", "one\ntwo\n\nthree\n"},
		{"whitespace collapses", "  a \n\t b  <b> c </b>d  ", "a b c d\n"},
		{"empty", "<html><head></head><body> </body></html>", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := htmlMarkdown(context.Background(), strings.NewReader(c.doc), base)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got\n%s\n%q\nwant\n%q", got, got, c.want)
			}
		})
	}
}

// endlessHTML is an endless HTML document that cancels its context once
// it has given limit bytes.
type endlessHTML struct {
	cancel context.CancelFunc
	limit  int
	read   int
}

func (r *endlessHTML) Read(p []byte) (int, error) {
	const chunk = "<p>more <a href=/x>text</a></p><script>var x = 1;</script>\n"
	n := 0
	for n+len(chunk) <= len(p) {
		n += copy(p[n:], chunk)
	}
	if n == 0 {
		n = copy(p, chunk)
	}
	r.read += n
	if r.read >= r.limit {
		r.cancel()
	}
	return n, nil
}

// TestHTMLMarkdownCancel: the converter stops soon after its context is
// cancelled, with the context's error, even on a document without end.
func TestHTMLMarkdownCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := &endlessHTML{cancel: cancel, limit: 1 << 20}
	text, err := htmlMarkdown(ctx, r, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if r.read > r.limit+1<<20 {
		t.Errorf("read %d bytes after the cancel at %d", r.read-r.limit, r.limit)
	}
	if !strings.HasPrefix(text, "more [text](/x)\n\nmore") {
		t.Errorf("text so far: %.80q", text)
	}
}

func FuzzHTMLText(f *testing.F) {
	f.Add(`<p>a <a href='x'>b</a></p><script>`)
	f.Add(`<<<>>><!-- <a href="`)
	f.Add("<pre><code class=language-go>a\n\n\n\tb ``` c</code></pre><ul><li>x<ol><li>y</li></ol></li></ul>")
	f.Add("<blockquote><pre>q\n\nr</pre><a href=\"\x00\"><img></a></blockquote><table><tr><th>h<td>d")
	f.Add("<head><body><h1>t</h1><svg><svg></svg>x")
	f.Add("plain text, no tags at all\n\n  indented")
	f.Fuzz(func(t *testing.T, doc string) {
		out := htmlText(doc)
		if utf8.ValidString(doc) && !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 from valid input: %q", out)
		}
		if strings.Contains(out, "\n\n\n") {
			t.Fatalf("blank lines not collapsed: %q", out)
		}
		if out != "" && (!strings.HasSuffix(out, "\n") || strings.HasSuffix(out, "\n\n") || strings.TrimSpace(out[:1]) == "") {
			t.Fatalf("not trimmed to one final newline: %q", out)
		}
		// Text without markup keeps its words, in order.
		if !strings.ContainsAny(doc, "<&\x00\r") && utf8.ValidString(doc) {
			if got, want := strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(doc), " "); got != want {
				t.Fatalf("plain text changed:\n%q\nwant\n%q", got, want)
			}
		}
		// Inside <pre>, every line of plain text is kept as written, in a
		// fenced block.
		code := "<pre>" + doc + "</pre>"
		if !strings.ContainsAny(doc, "<&\x00\r") && utf8.ValidString(doc) {
			out := htmlText(code)
			lines := strings.Split(out, "\n")
			if strings.TrimSpace(doc) != "" && (len(lines) < 3 || !strings.HasPrefix(lines[0], "```") || lines[len(lines)-2] != lines[0][:len(lines[0])-len(strings.TrimLeft(lines[0], "`"))]) {
				t.Fatalf("not fenced: %q", out)
			}
			for _, l := range strings.Split(doc, "\n") {
				if l = strings.TrimRight(l, " \t\n\v\f\u0085\u00a0\u2028\u2029\u3000\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f"); l != "" && !strings.Contains(out, "\n"+l+"\n") {
					t.Fatalf("code line %q lost:\n%q", l, out)
				}
			}
		}
	})
}

// fetchEnv is the part of a session web_fetch uses: a real permission
// policy with remembered choices, a sandbox policy, and a user who answers
// every permission request with answer.
type fetchEnv struct {
	Env     // the rest is not used by web_fetch
	policy  *permissions.Policy
	mode    permissions.Mode
	sandbox sandbox.Policy
	answer  permissions.OptionKind

	mu    sync.Mutex
	asked []asked
}

// asked is one permission request the user saw.
type asked struct {
	url, title, notes string
	options           []permissions.Option
}

func newFetchEnv(t *testing.T, mode permissions.Mode, network bool, rules ...permissions.Rule) *fetchEnv {
	t.Helper()
	store, err := permissions.OpenStore(filepath.Join(t.TempDir(), "permissions.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := permissions.NewPolicy(permissions.PolicyOptions{Rules: rules, Store: store, Project: t.TempDir(),
		Tools: map[string]acp.ToolKind{"web_fetch": acp.ToolKindFetch}})
	if err != nil {
		t.Fatal(err)
	}
	return &fetchEnv{policy: p, mode: mode, answer: permissions.RejectOnce,
		sandbox: sandbox.Policy{Mode: sandbox.WorkspaceWrite, Network: network}}
}

func (e *fetchEnv) Sandbox() sandbox.Policy { return e.sandbox }

func (e *fetchEnv) Authorize(ctx context.Context, c *Call, req permissions.Call, upd acp.ToolCallUpdate) (bool, string) {
	return e.AuthorizeShowing(ctx, c, req, upd, nil)
}

// AuthorizeShowing decides as the agent does: the policy first, then the
// user, whose "always" answers are remembered.
func (e *fetchEnv) AuthorizeShowing(ctx context.Context, c *Call, req permissions.Call, upd acp.ToolCallUpdate, preview func() []acp.ToolCallContent) (bool, string) {
	d := e.policy.Decide(e.mode, req)
	switch d.Action {
	case permissions.Allow:
		return true, ""
	case permissions.Deny:
		return false, "Not allowed: " + d.Reason
	}
	a := asked{url: req.URL, title: *upd.Title, options: permissions.Options(d)}
	if preview != nil {
		for _, c := range preview() {
			a.notes += c.Content.Content.Text.Text
		}
	}
	e.mu.Lock()
	e.asked = append(e.asked, a)
	e.mu.Unlock()
	allowed, remember, _ := permissions.Verdict(a.options, "selected", string(e.answer), ctx.Err() != nil)
	if remember {
		if err := e.policy.Remember(req, d, allowed); err != nil {
			return false, err.Error()
		}
	}
	if !allowed {
		return false, "The user rejected this web_fetch call."
	}
	return true, ""
}

func (e *fetchEnv) requests() []asked {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]asked(nil), e.asked...)
}

func fetchCall(u string) *Call {
	return &Call{ID: "c1", Name: "web_fetch", Input: []byte(fmt.Sprintf(`{"url":%q}`, u))}
}

// countingServer serves an HTML page and counts the requests it sees.
func countingServer(t *testing.T, page string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestWebFetchOffline: in full mode with the sandbox's network off, a
// fetch asks, naming the URL; refused, the server sees no request. An
// origin allowed by a rule is fetched without asking; with the network on
// full mode fetches without asking.
func TestWebFetchOffline(t *testing.T) {
	srv, hits := countingServer(t, "<h1>secret sink</h1>")
	target := srv.URL + "/exfil?data=k3y"

	env := newFetchEnv(t, permissions.ModeFull, false)
	res := runWebFetch(t.Context(), env, fetchCall(target))
	asked := env.requests()
	if !res.IsError || len(asked) != 1 || asked[0].url != target || !strings.Contains(asked[0].title, target) || !strings.Contains(asked[0].notes, "off the network") {
		t.Fatalf("result %+v, requests %+v", res, asked)
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the refused fetch reached the server (%d requests)", n)
	}

	env = newFetchEnv(t, permissions.ModeFull, false, permissions.Rule{Action: permissions.Allow, Tool: "web_fetch", Match: srv.URL})
	res = runWebFetch(t.Context(), env, fetchCall(target))
	if res.IsError || res.Text != "# secret sink\n" || len(env.requests()) != 0 || hits.Load() != 1 {
		t.Fatalf("allowed origin: %+v, %d requests asked, %d served", res, len(env.requests()), hits.Load())
	}

	env = newFetchEnv(t, permissions.ModeFull, true)
	if res := runWebFetch(t.Context(), env, fetchCall(target)); res.IsError || len(env.requests()) != 0 || hits.Load() != 2 {
		t.Fatalf("network on: %+v, %d asked", res, len(env.requests()))
	}
	// Sandbox off: commands have the network, so fetches do too.
	env = newFetchEnv(t, permissions.ModeFull, false)
	env.sandbox.Mode = sandbox.Off
	if res := runWebFetch(t.Context(), env, fetchCall(target)); res.IsError || len(env.requests()) != 0 {
		t.Fatalf("sandbox off: %+v, %d asked", res, len(env.requests()))
	}
}

// TestWebFetchRemembersOrigin: "Always allow" names and stores the origin:
// other pages of it are fetched without asking, another port asks.
func TestWebFetchRemembersOrigin(t *testing.T) {
	srv, _ := countingServer(t, "<p>page</p>")
	other, otherHits := countingServer(t, "<p>other</p>")
	env := newFetchEnv(t, permissions.ModeAsk, true)
	env.answer = permissions.AllowAlways
	if res := runWebFetch(t.Context(), env, fetchCall(srv.URL+"/a")); res.IsError || res.Text != "page\n" {
		t.Fatalf("first fetch: %+v", res)
	}
	asked := env.requests()
	if len(asked) != 1 || asked[0].options[1].Kind != permissions.AllowAlways || !strings.Contains(asked[0].options[1].Name, srv.URL) {
		t.Fatalf("the always option does not name the origin: %+v", asked)
	}
	if res := runWebFetch(t.Context(), env, fetchCall(srv.URL+"/b?c=d")); res.IsError || len(env.requests()) != 1 {
		t.Fatalf("same origin asked again: %+v, %d requests", res, len(env.requests()))
	}
	env.answer = permissions.RejectOnce
	if res := runWebFetch(t.Context(), env, fetchCall(other.URL+"/")); !res.IsError || len(env.requests()) != 2 || otherHits.Load() != 0 {
		t.Fatalf("another origin: %+v, %d requests, %d served", res, len(env.requests()), otherHits.Load())
	}
}

// TestWebFetchRedirect: a redirect to another origin is judged again (and
// asks in full mode with the network off); refused, the other server sees
// nothing. A redirect within the origin is followed; one to another scheme
// and endless redirects fail clearly.
func TestWebFetchRedirect(t *testing.T) {
	dest, destHits := countingServer(t, "<p>destination</p>")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, dest.URL+"/landing", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/page", http.StatusMovedPermanently)
		case "/file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<p>origin page</p>")
		}
	}))
	defer srv.Close()
	allowSrv := permissions.Rule{Action: permissions.Allow, Tool: "web_fetch", Match: srv.URL}

	env := newFetchEnv(t, permissions.ModeFull, false, allowSrv)
	res := runWebFetch(t.Context(), env, fetchCall(srv.URL+"/away"))
	asked := env.requests()
	if !res.IsError || !strings.Contains(res.Text, "redirected to "+dest.URL+"/landing") || !strings.Contains(res.Text, "rejected") {
		t.Fatalf("refused redirect: %+v", res)
	}
	if len(asked) != 1 || asked[0].url != dest.URL+"/landing" || !strings.Contains(asked[0].title, "redirected from "+srv.URL+"/away") {
		t.Fatalf("the redirect was not asked about: %+v", asked)
	}
	if n := destHits.Load(); n != 0 {
		t.Fatalf("the refused redirect reached the other origin (%d requests)", n)
	}

	env.answer = permissions.AllowOnce
	if res := runWebFetch(t.Context(), env, fetchCall(srv.URL+"/away")); res.IsError || res.Text != "destination\n" || destHits.Load() != 1 {
		t.Fatalf("approved redirect: %+v", res)
	}

	// A deny rule on the destination refuses the hop without asking.
	env = newFetchEnv(t, permissions.ModeFull, true, permissions.Rule{Action: permissions.Deny, Tool: "web_fetch", Match: dest.URL})
	if res := runWebFetch(t.Context(), env, fetchCall(srv.URL+"/away")); !res.IsError || !strings.Contains(res.Text, "denied by rule") || destHits.Load() != 1 || len(env.requests()) != 0 {
		t.Fatalf("denied redirect: %+v", res)
	}

	env = newFetchEnv(t, permissions.ModeFull, false, allowSrv)
	for path, want := range map[string]string{
		"/here": "origin page\n",
		"/file": "not an http or https URL",
		"/loop": "at most 10 redirects",
	} {
		res := runWebFetch(t.Context(), env, fetchCall(srv.URL+path))
		if !strings.Contains(res.Text, want) || res.IsError != (path != "/here") {
			t.Errorf("%s: %+v, want %q", path, res, want)
		}
	}
	if n := len(env.requests()); n != 0 {
		t.Errorf("%d requests for redirects within the origin", n)
	}
}

// TestWebFetchCancel: cancelling the call stops a page that never ends.
func TestWebFetchCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		for i := 0; r.Context().Err() == nil; i++ {
			if _, err := io.WriteString(w, "<p>more</p>"); err != nil {
				return
			}
			if i == 1000 {
				w.(http.Flusher).Flush()
				cancel()
			}
		}
	}))
	defer srv.Close()
	env := newFetchEnv(t, permissions.ModeFull, true)
	res := runWebFetch(ctx, env, fetchCall(srv.URL))
	if !res.IsError || !strings.Contains(res.Text, "context canceled") {
		t.Fatalf("cancelled fetch: %+v", res)
	}
}

// TestWebFetchBodies: text types are returned as they are, others refused;
// a page over the size limit is cut with a note.
func TestWebFetchBodies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"a": "<b>"}`)
		case "/png":
			w.Header().Set("Content-Type", "image/png")
			io.WriteString(w, "\x89PNG")
		case "/sniffed":
			w.Header()["Content-Type"] = nil
			io.WriteString(w, "<!DOCTYPE html><HTML><body><h1>x</h1>")
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, strings.Repeat("line\n", maxFetchBytes/5+10))
		case "/404":
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	env := newFetchEnv(t, permissions.ModeFull, true)
	for path, want := range map[string]string{
		"/json":    `{"a": "<b>"}`,
		"/png":     "image/png, not text",
		"/sniffed": "# x\n",
		"/big":     "only the first 5 MB of the page were read",
		"/404":     "404 Not Found",
	} {
		if res := runWebFetch(t.Context(), env, fetchCall(srv.URL+path)); !strings.Contains(res.Text, want) {
			t.Errorf("%s: %.300q, want %q", path, res.Text, want)
		}
	}
	for _, bad := range []string{"file:///etc/passwd", "http://", "ftp://x/", "http://x:99999/"} {
		if res := runWebFetch(t.Context(), env, fetchCall(bad)); !res.IsError || !strings.Contains(res.Text, "http or https") {
			t.Errorf("%s: %+v", bad, res)
		}
	}
}
