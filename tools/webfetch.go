package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"acpd/acp"
	"acpd/model"
	"acpd/permissions"
	"acpd/tools/clip"
)

// web_fetch limits.
const (
	fetchTimeout  = 30 * time.Second
	maxFetchBytes = 5 << 20
)

func webFetchTool() *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name: "web_fetch",
			Description: "Fetch a web page (http or https) and return its text: HTML is turned into plain text (scripts and styles dropped, links kept as [text](url)); other text types are returned as they are. " +
				"The result is cut to its first and last 30 KB. Use it for documentation and references the task needs; each fetch asks the user's permission unless the mode allows it.",
			InputSchema: schema(`{"type":"object","properties":{"url":{"type":"string","description":"The http or https URL"}},"required":["url"],"additionalProperties":false}`),
		},
		Kind:  acp.ToolKindFetch,
		Title: func(in json.RawMessage) string { return "Fetch " + urlOf(in) },
		Run:   runWebFetch,
	}
}

func urlOf(in json.RawMessage) string {
	v, _ := DecodeInput[struct {
		URL string `json:"url"`
	}](in)
	return Truncate(v.URL, 100)
}

func runWebFetch(ctx context.Context, env Env, c *Call) Result {
	in, err := DecodeInput[struct {
		URL string `json:"url"`
	}](c.Input)
	if err != nil {
		return Errorf("invalid web_fetch arguments: %v", err)
	}
	u, err := url.Parse(in.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Errorf("url must be an absolute http or https URL, got %q", in.URL)
	}
	title := "Fetch " + Truncate(in.URL, 100)
	kind := acp.ToolKindFetch
	upd := acp.ToolCallUpdate{Title: &title, Kind: &kind, RawInput: c.Input}
	if ok, why := env.Authorize(ctx, c, permissions.Call{Tool: c.Name, Kind: kind}, upd); !ok {
		return Errorf("%s", why)
	}
	text, err := fetchText(ctx, u.String())
	if err != nil {
		return Errorf("fetching %s: %v", in.URL, err)
	}
	shown, _ := clip.HeadTail(text, clip.OutputBytes, "")
	return Result{Text: shown, Bounded: true}
}

// fetchText GETs rawURL and returns its body as text (HTML converted).
func fetchText(ctx context.Context, rawURL string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("User-Agent", "acpd (coding agent)")
	req.Header.Set("Accept", "text/html, text/plain, text/markdown, application/json;q=0.9, */*;q=0.5")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("the server answered %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxFetchBytes+1))
	if err != nil {
		return "", err
	}
	if len(body) > maxFetchBytes {
		body = body[:maxFetchBytes]
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml" || mt == "" && strings.Contains(strings.ToLower(string(body[:min(len(body), 512)])), "<html"):
		return htmlText(string(body)), nil
	case strings.HasPrefix(mt, "text/"), mt == "application/json", strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"), mt == "application/xml":
		return string(body), nil
	}
	return "", errors.New("the response is " + mt + ", not text")
}

// hrefAttr finds a tag's href attribute.
var hrefAttr = regexp.MustCompile(`(?is)\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))`)

// htmlText renders an HTML document as plain text: block elements start
// new lines, links become [text](href), script, style and similar elements
// and comments are dropped, entities are decoded, and runs of blank lines
// are collapsed. It is a forgiving scanner, not a full HTML parser.
func htmlText(doc string) string {
	var b strings.Builder
	var hrefs []string
	text := func(t string) {
		t = html.UnescapeString(t)
		f := strings.Fields(t)
		if len(f) == 0 {
			if t != "" {
				b.WriteByte(' ')
			}
			return
		}
		if t[0] == ' ' || t[0] == '\n' || t[0] == '\t' {
			b.WriteByte(' ')
		}
		b.WriteString(strings.Join(f, " "))
		if c := t[len(t)-1]; c == ' ' || c == '\n' || c == '\t' {
			b.WriteByte(' ')
		}
	}
	for len(doc) > 0 {
		i := strings.IndexByte(doc, '<')
		if i < 0 {
			text(doc)
			break
		}
		text(doc[:i])
		doc = doc[i:]
		if strings.HasPrefix(doc, "<!--") {
			end := strings.Index(doc, "-->")
			if end < 0 {
				break
			}
			doc = doc[end+3:]
			continue
		}
		end := strings.IndexByte(doc, '>')
		if end < 0 {
			break
		}
		tagText := doc[1:end]
		doc = doc[end+1:]
		closing := strings.HasPrefix(tagText, "/")
		name := strings.ToLower(strings.TrimLeft(tagText, "/"))
		if k := strings.IndexAny(name, " \t\n\r/"); k >= 0 {
			name = name[:k]
		}
		switch name {
		case "script", "style", "noscript", "svg", "template", "head":
			if !closing {
				// Skip to the matching end tag.
				k := strings.Index(strings.ToLower(doc), "</"+name)
				if k < 0 {
					doc = ""
				} else {
					doc = doc[k:]
				}
			}
			continue
		case "a":
			if !closing {
				href := ""
				if m := hrefAttr.FindStringSubmatch(tagText); m != nil {
					href = html.UnescapeString(m[1] + m[2] + m[3])
				}
				hrefs = append(hrefs, href)
				b.WriteString("[")
			} else if len(hrefs) > 0 {
				href := hrefs[len(hrefs)-1]
				hrefs = hrefs[:len(hrefs)-1]
				if href != "" && !strings.HasPrefix(href, "#") && !strings.HasPrefix(strings.ToLower(href), "javascript:") {
					fmt.Fprintf(&b, "](%s)", href)
				} else {
					b.WriteString("]")
				}
			}
		case "br":
			b.WriteString("\n")
		case "li":
			if !closing {
				b.WriteString("\n- ")
			}
		case "h1", "h2", "h3", "h4", "h5", "h6":
			if !closing {
				b.WriteString("\n\n" + strings.Repeat("#", int(name[1]-'0')) + " ")
			} else {
				b.WriteString("\n\n")
			}
		case "p", "div", "section", "article", "header", "footer", "main", "nav", "table", "tr", "ul", "ol", "pre", "blockquote", "hr", "dl", "dt", "dd", "title":
			b.WriteString("\n\n")
		case "td", "th":
			if !closing {
				b.WriteString(" | ")
			}
		}
	}
	return collapse(b.String())
}

// collapse trims lines and keeps at most one blank line in a row.
func collapse(s string) string {
	var out []string
	blank := true
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			if !blank {
				out = append(out, "")
			}
			blank = true
			continue
		}
		out = append(out, l)
		blank = false
	}
	return strings.TrimSpace(strings.Join(out, "\n")) + "\n"
}
