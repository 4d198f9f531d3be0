package anthropic

import (
	"encoding/json"
	"reflect"
	"testing"
)

var eventSeeds = []string{
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"hm \u00e9\n"}}`,
	`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"EqQB"}}`,
	`{"type":"content_block_stop","index":0}`,
	`{"type":"ping"}`,
	`{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":15}}`,
	`{"type":"message_start","message":{"id":"msg_1","usage":{"input_tokens":3}}}`,
	`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"url":"u","title":"t"}}}`,
	`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
	`{"Type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":0,"index":1,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":null,"delta":null}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}} x`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":null,"extra":[1,{"b":false}]}}`,
}

// FuzzFastEvent: an event the fast path decodes is what encoding/json
// decodes from it, and text it accepts is text encoding/json accepts.
func FuzzFastEvent(f *testing.F) {
	for _, s := range eventSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		var d decoder
		var fast streamEvent
		if !d.fastEvent(data, &fast) {
			return
		}
		var want streamEvent
		if err := json.Unmarshal([]byte(data), &want); err != nil {
			t.Fatalf("the fast path decoded %q, which encoding/json refuses: %v", data, err)
		}
		if !reflect.DeepEqual(fast, want) {
			g, _ := json.Marshal(fast)
			w, _ := json.Marshal(want)
			t.Fatalf("fast path %s\nencoding/json %s\nfrom %q", g, w, data)
		}
	})
}

// TestFastEventTakes pins which events take the fast path.
func TestFastEventTakes(t *testing.T) {
	for i, want := range []bool{true, true, true, true, true, true, false, false, false, false, false, false, false, true, false, true} {
		var d decoder
		if got := d.fastEvent(eventSeeds[i], &streamEvent{}); got != want {
			t.Errorf("fastEvent(%.80q) = %v, want %v", eventSeeds[i], got, want)
		}
	}
}
