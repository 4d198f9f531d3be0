package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"acpd/acp"
	"acpd/model"
	"acpd/permissions"
	"acpd/sandbox"
)

// WebSearchTool is web_search's name: the agent offers the tool only with
// a model whose provider has a web search of its own.
const WebSearchTool = "web_search"

// web_search limits.
const (
	searchTimeout    = 90 * time.Second
	maxSearchSources = 20
	searchMaxOutput  = 4096
)

// Searcher is what web_search needs from the session (an Env that
// implements it): the session's model, when its provider has a web
// search of its own (model.ModelInfo.WebSearch), and the provider's name
// for the permission request.
type Searcher interface {
	WebSearch() (b model.Backend, modelID, provider string, ok bool)
}

const searchPrompt = `You are the web search step of a coding agent. Search the web for what the query asks, then answer in a few short paragraphs or a list with the facts found (versions, dates, API names, commands), citing the pages they come from. Say plainly when the search found nothing reliable. Do not make things up.`

func webSearchTool() *Tool {
	return &Tool{
		Def: model.ToolDef{
			Name: WebSearchTool,
			Description: "Search the web with the model provider's own search and get a short answer with its sources (URLs). " +
				"Use it for current information the task needs (new releases, documentation, error messages); read a source whole with web_fetch. " +
				"Each search asks the user's permission unless the mode or a remembered choice allows it.",
			InputSchema: schema(`{"type":"object","properties":{"query":{"type":"string","description":"What to search for"}},"required":["query"],"additionalProperties":false}`),
		},
		Kind:  acp.ToolKindFetch,
		Title: func(in json.RawMessage) string { return "Search the web: " + queryOf(in) },
		Run:   runWebSearch,
	}
}

// searchInput is web_search's arguments.
type searchInput struct {
	Query string `json:"query"`
}

func queryOf(in json.RawMessage) string {
	v, _ := DecodeInput[searchInput](in)
	return Truncate(v.Query, 100)
}

// source is one page a search found or the answer cites.
type source struct {
	URL   string `json:"url"`
	Title string `json:"title,omitempty"`
}

// runWebSearch asks the policy (web_search is a fetch: full mode asks too
// while the sandbox keeps commands off the network), then makes one
// request to the session's model with the provider's search on, and
// returns its answer with the queries run and the sources.
func runWebSearch(ctx context.Context, env Env, c *Call) Result {
	in, err := DecodeInput[searchInput](c.Input)
	if err != nil {
		return Errorf("invalid web_search arguments: %v", err)
	}
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return Errorf("query is empty")
	}
	s, ok := env.(Searcher)
	if !ok {
		return Errorf("web search is not available here")
	}
	b, modelID, provider, ok := s.WebSearch()
	if !ok {
		return Errorf("web search is not available with this model: its provider has no web search of its own")
	}
	sb := env.Sandbox()
	offline := sb.Mode != sandbox.Off && !sb.Network
	title := "Search the web: " + Truncate(q, 100)
	kind := acp.ToolKindFetch
	upd := acp.ToolCallUpdate{Title: &title, Kind: &kind, RawInput: c.Input}
	req := permissions.Call{Tool: c.Name, Kind: kind, Offline: offline}
	if ok, why := env.AuthorizeShowing(ctx, c, req, upd, func() []acp.ToolCallContent {
		note := fmt.Sprintf("The query goes to %s's web search, and the pages it finds reach the model.", provider)
		if offline {
			note += " The sandbox keeps commands off the network, so acpd asks before it searches."
		}
		return []acp.ToolCallContent{TextContent(note)}
	}); !ok {
		return Errorf("%s", why)
	}
	ctx, cancel := context.WithTimeout(ctx, searchTimeout)
	defer cancel()
	mreq := &model.Request{Model: modelID, System: searchPrompt, WebSearch: true, MaxOutputTokens: searchMaxOutput,
		Messages: []model.Message{{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: q}}}}}
	var answer strings.Builder
	var queries []string
	var sources []source
	seen := map[string]bool{}
	finished := false
	for ev, err := range b.Stream(ctx, mreq) {
		if err != nil {
			return Errorf("the web search failed: %v", err)
		}
		switch ev.Type {
		case model.EventText:
			answer.WriteString(ev.Text)
		case model.EventSearch:
			queries = append(queries, ev.Text)
		case model.EventSource:
			if !seen[ev.URL] && len(sources) < maxSearchSources {
				seen[ev.URL] = true
				sources = append(sources, source{URL: ev.URL, Title: strings.TrimSpace(ev.Text)})
			} else if ev.Text != "" {
				for i := range sources {
					if sources[i].URL == ev.URL && sources[i].Title == "" {
						sources[i].Title = strings.TrimSpace(ev.Text)
					}
				}
			}
		case model.EventFinish:
			finished = true
		}
	}
	if !finished {
		return Errorf("the web search's response ended without finishing")
	}
	text := searchText(q, queries, strings.TrimSpace(answer.String()), sources)
	raw, _ := json.Marshal(map[string]any{"queries": queries, "sources": sources})
	return Result{Text: Bound(text), Bounded: true, Raw: json.RawMessage(raw), Content: []acp.ToolCallContent{TextContent(text)}}
}

// searchText is the result the model and the editor see: what was
// searched, the answer, and the sources as Markdown links.
func searchText(q string, queries []string, answer string, sources []source) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Web search for %q", q)
	if len(queries) > 0 {
		quoted := make([]string, len(queries))
		for i, s := range queries {
			quoted[i] = fmt.Sprintf("%q", s)
		}
		fmt.Fprintf(&b, " (searched: %s)", strings.Join(quoted, ", "))
	}
	b.WriteString("\n\n")
	if answer == "" {
		answer = "(the search gave no answer)"
	}
	b.WriteString(answer)
	if len(sources) == 0 {
		b.WriteString("\n\nNo sources were reported.")
		return b.String()
	}
	b.WriteString("\n\nSources:")
	for i, s := range sources {
		t := s.Title
		if t == "" {
			t = s.URL
		}
		fmt.Fprintf(&b, "\n%d. [%s](%s)", i+1, strings.ReplaceAll(t, "]", ")"), s.URL)
	}
	return b.String()
}
