package openai

import (
	"encoding/json"
	"reflect"
	"testing"

	"acpd/model/internal/sse"
)

var chunkSeeds = []string{
	`{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1754000000,"model":"gpt-4.1","system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":"token"},"logprobs":null,"finish_reason":null}],"usage":null,"obfuscation":"q1Zr"}`,
	`{"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a\nb \"q\" \u00e9\ud83d\ude00 \ud83d"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning_content":"think"}}]}`,
	`{"choices":[{"index":0,"delta":{"reasoning":"think","content":null}}]}`,
	`{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
	`{"choices":[{"index":0,"delta":{"refusal":"no"}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c","function":{"name":"f","arguments":"{"}}]}}]}`,
	`{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5}}`,
	`{"choices":[{"index":0,"delta":{"Content":"case"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"a","content":"b"}}]}`,
	`{"choices":[{"index":1,"delta":{"content":"x"}},{"index":0,"delta":{"content":"y"}}]}`,
	`{"choices":[{"index":0,"delta":null}],"error":null,"x_groq":null}`,
	`{"choices":[{"index":0,"delta":{"content":"x"}}],"error":{"message":"boom"}}`,
	`{"choices":[{"index":0.0,"delta":{"content":"x"}}]}`,
	`{"choices":[{"index":0,"delta":{"content":"x"}}]}trailing`,
	`{"choices":[{"index":0,"delta":{"content":"x"}}],"extra":{"deep":[1,{"a":[true,null]}],"n":-1.5e3}}`,
	"{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"bad \xff\"}}]}",
	`{"choices":null}`,
	`{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"mcp__s0__echo","arguments":""}}]},"finish_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"message\":\"x1\"}"}}]},"finish_reason":null}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":null,"id":null,"function":null},{"index":1,"function":{"name":null,"arguments":"{"}}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"ID":"x"}]}}]}`,
	`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0.5}]}}]}`,
	`{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20,"prompt_tokens_details":{"cached_tokens":4,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":2}}}`,
	`{"choices":[],"usage":{"prompt_tokens":null,"prompt_tokens_details":null,"completion_tokens_details":{},"prompt_cache_hit_tokens":7}}`,
	`{"choices":[],"usage":{"prompt_tokens":1e3}}`,
	`{"choices":[],"usage":{"Prompt_Tokens":3}}`,
}

// FuzzFastChunk: a chunk the fast path decodes is what encoding/json
// decodes from it, and text it accepts is text encoding/json accepts.
func FuzzFastChunk(f *testing.F) {
	for _, s := range chunkSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		var d decoder
		var fast chunk
		if !d.fastChunk(data, &fast) {
			return
		}
		var want chunk
		if err := sse.Unmarshal(data, &want); err != nil {
			t.Fatalf("the fast path decoded %q, which encoding/json refuses: %v", data, err)
		}
		if string(want.Error) == "null" {
			want.Error = nil
		}
		if !reflect.DeepEqual(fast, want) {
			g, _ := json.Marshal(fast)
			w, _ := json.Marshal(want)
			t.Fatalf("fast path %s\nencoding/json %s\nfrom %q", g, w, data)
		}
	})
}

// TestFastChunkTakes pins which chunks take the fast path (the fuzz
// target checks only what it decodes).
func TestFastChunkTakes(t *testing.T) {
	for i, want := range []bool{true, true, true, true, true, true, true, true, true, false, false, false, true, false, false, false, true, true, false,
		true, true, true, true, false, false, true, true, false, false} {
		var d decoder
		if got := d.fastChunk(chunkSeeds[i], &chunk{}); got != want {
			t.Errorf("fastChunk(%.80q) = %v, want %v", chunkSeeds[i], got, want)
		}
	}
}
