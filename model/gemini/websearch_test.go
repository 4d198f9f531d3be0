package gemini

import (
	"encoding/json"
	"testing"

	"acpd/model"
	"acpd/model/internal/sse/ssetest"
)

// TestWebSearchRequest: Request.WebSearch adds Google Search grounding (google_search) to the request (golden
// file), and the search's queries and sources come back as events.
func TestWebSearchRequest(t *testing.T) {
	o, got := ssetest.Capture(t, "testdata/grounding.sse", "/v1beta/")
	b := New(Options{HTTPOptions: o})
	req := &model.Request{Model: "gemini-2.5-flash", System: "Search the web.", WebSearch: true,
		Messages: []model.Message{{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "go 1.26"}}}}}
	res := ssetest.Collect(t, b.Stream(t.Context(), req))
	if res.Error != nil {
		t.Fatalf("stream error: %+v", res.Error)
	}
	c := <-got
	ssetest.Golden(t, "testdata/websearch_request.golden.json", json.RawMessage(c.Body), *ssetest.Update)
	var searches, sources int
	for _, ev := range res.Events {
		switch ev.Type {
		case model.EventSearch:
			searches++
		case model.EventSource:
			sources++
			if ev.URL == "" {
				t.Errorf("a source without a URL: %+v", ev)
			}
		}
	}
	if searches == 0 || sources == 0 {
		t.Errorf("%d searches and %d sources reported, want both", searches, sources)
	}
}
