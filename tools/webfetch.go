package tools

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"acpd/acp"
	"acpd/model"
	"acpd/permissions"
	"acpd/sandbox"
	"acpd/tools/clip"
)

// web_fetch limits.
const (
	fetchTimeout  = 30 * time.Second
	maxFetchBytes = 5 << 20
	maxRedirects  = 10
)

func webFetchTool() *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name: "web_fetch",
			Description: "Fetch a web page (http or https) and return its text: HTML is turned into Markdown (headings, links as [text](url), lists, code blocks fenced; scripts and styles dropped); other text types are returned as they are. " +
				"The result is cut to its first and last 30 KB. Use it for documentation and references the task needs; each fetch asks the user's permission unless the mode or a remembered choice for the site allows it, and a redirect to another site is checked again.",
			InputSchema: schema(`{"type":"object","properties":{"url":{"type":"string","description":"The http or https URL"}},"required":["url"],"additionalProperties":false}`),
		},
		Kind:  acp.ToolKindFetch,
		Title: func(in json.RawMessage) string { return "Fetch " + urlOf(in) },
		Run:   runWebFetch,
	}
}

// fetchInput is web_fetch's arguments.
type fetchInput struct {
	URL string `json:"url"`
}

func urlOf(in json.RawMessage) string {
	v, _ := DecodeInput[fetchInput](in)
	return Truncate(v.URL, 100)
}

// authorizeURL asks the policy (and the user when it says so) whether
// target may be fetched; from is the URL that redirected to it, or "".
type authorizeURL func(ctx context.Context, target, from string) (ok bool, why string)

// runWebFetch fetches the URL after the policy allows it. The policy
// judges the URL's origin (remembered approvals are per origin) and knows
// whether the session's sandbox keeps commands off the network, in which
// case full mode asks too. Every redirect to an origin not yet allowed in
// this call is judged again before it is followed.
func runWebFetch(ctx context.Context, env Env, c *Call) Result {
	in, err := DecodeInput[fetchInput](c.Input)
	if err != nil {
		return Errorf("invalid web_fetch arguments: %v", err)
	}
	u, err := url.Parse(in.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || permissions.Origin(in.URL) == "" {
		return Errorf("url must be an absolute http or https URL, got %q", in.URL)
	}
	sb := env.Sandbox()
	offline := sb.Mode != sandbox.Off && !sb.Network
	authorize := func(ctx context.Context, target, from string) (bool, string) {
		title := "Fetch " + Truncate(target, 100)
		if from != "" {
			title += " (redirected from " + Truncate(from, 100) + ")"
		}
		kind := acp.ToolKindFetch
		upd := acp.ToolCallUpdate{Title: &title, Kind: &kind, RawInput: c.Input}
		req := permissions.Call{Tool: c.Name, Kind: kind, URL: target, Offline: offline}
		return env.AuthorizeShowing(ctx, c, req, upd, func() []acp.ToolCallContent {
			return fetchNotes(target, from, offline)
		})
	}
	if ok, why := authorize(ctx, u.String(), ""); !ok {
		return Errorf("%s", why)
	}
	text, err := fetchText(ctx, u, authorize)
	if err != nil {
		var re *redirectError
		if errors.As(err, &re) {
			return Errorf("%s", re)
		}
		return Errorf("fetching %s: %v", in.URL, err)
	}
	shown, _ := clip.HeadTail(text, clip.OutputBytes, "")
	return Result{Text: shown, Bounded: true}
}

// fetchNotes is what a permission request for a fetch shows besides its
// title: where a redirect came from, and that the network is off.
func fetchNotes(target, from string, offline bool) []acp.ToolCallContent {
	var notes []string
	if from != "" {
		notes = append(notes, fmt.Sprintf("%s redirected to %s.", from, target))
	}
	if offline {
		notes = append(notes, fmt.Sprintf("The sandbox keeps commands off the network, so acpd asks before it fetches %s itself.", target))
	}
	if len(notes) == 0 {
		return nil
	}
	return []acp.ToolCallContent{TextContent(strings.Join(notes, "\n"))}
}

// redirectError is a redirect that was not followed.
type redirectError struct {
	from, to, why string
}

func (e *redirectError) Error() string {
	return fmt.Sprintf("%s redirected to %s, which was not fetched: %s", e.from, e.to, e.why)
}

// fetchText GETs u and returns its body as text (HTML as Markdown).
// Redirects to an origin not seen yet in this fetch are followed only when
// authorize allows them.
func fetchText(ctx context.Context, u *url.URL, authorize authorizeURL) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	allowed := []string{permissions.Origin(u.String())}
	client := &http.Client{CheckRedirect: func(req *http.Request, via []*http.Request) error {
		from, to := via[len(via)-1].URL.String(), req.URL.String()
		if len(via) >= maxRedirects {
			return &redirectError{from, to, fmt.Sprintf("web_fetch follows at most %d redirects", maxRedirects)}
		}
		origin := permissions.Origin(to)
		if origin == "" {
			return &redirectError{from, to, "it is not an http or https URL"}
		}
		if slices.Contains(allowed, origin) {
			return nil
		}
		if ok, why := authorize(req.Context(), to, from); !ok {
			return &redirectError{from, to, why}
		}
		allowed = append(allowed, origin)
		return nil
	}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("User-Agent", "acpd (coding agent)")
	req.Header.Set("Accept", "text/html, text/plain, text/markdown, application/json;q=0.9, */*;q=0.5")
	resp, err := client.Do(req)
	if err != nil {
		var re *redirectError
		if errors.As(err, &re) {
			return "", re
		}
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("the server answered %s", resp.Status)
	}
	limited := &io.LimitedReader{R: resp.Body, N: maxFetchBytes}
	body := bufio.NewReader(limited)
	head, _ := body.Peek(512)
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	var text string
	switch {
	case mt == "text/html" || mt == "application/xhtml+xml" || mt == "" && bytes.Contains(bytes.ToLower(head), []byte("<html")):
		if text, err = htmlMarkdown(ctx, body, resp.Request.URL); err != nil {
			return "", err
		}
	case strings.HasPrefix(mt, "text/"), mt == "application/json", strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"), mt == "application/xml":
		b, err := io.ReadAll(body)
		if err != nil {
			return "", err
		}
		text = string(b)
	default:
		return "", errors.New("the response is " + cmp.Or(mt, "of no type") + ", not text")
	}
	if limited.N == 0 {
		if n, _ := io.ReadFull(resp.Body, make([]byte, 1)); n > 0 {
			text += fmt.Sprintf("\n[… only the first %d MB of the page were read …]\n", maxFetchBytes>>20)
		}
	}
	return text, nil
}
