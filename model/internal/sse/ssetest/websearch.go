package ssetest

import (
	"encoding/json"
	"testing"

	"acpd/model"
)

// WebSearch checks a dialect's Request.WebSearch: newBackend's request for
// modelID, against a server replaying fixture under basePath, matches
// testdata/websearch_request.golden.json (the provider's search tool), and
// the stream's search queries and sources come back as EventSearch and
// EventSource events.
func WebSearch(t *testing.T, newBackend func(model.HTTPOptions) model.Backend, fixture, basePath, modelID string) {
	t.Helper()
	o, got := Capture(t, fixture, basePath)
	b := newBackend(o)
	req := &model.Request{Model: modelID, System: "Search the web.", WebSearch: true,
		Messages: []model.Message{{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: "go 1.26"}}}}}
	res := Collect(t, b.Stream(t.Context(), req))
	if res.Error != nil {
		t.Fatalf("stream error: %+v", res.Error)
	}
	c := <-got
	Golden(t, "testdata/websearch_request.golden.json", json.RawMessage(c.Body), *Update)
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
