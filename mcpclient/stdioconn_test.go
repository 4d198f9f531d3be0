package mcpclient

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// decodeLine reads the plain answers itself and gives the same message
// the SDK's decoder does; every other line is the SDK's to decode, errors
// included.
func TestDecodeLine(t *testing.T) {
	plain := []string{
		`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"x2"}]}}`,
		`{"result":{"tools":[]},"id":12,"jsonrpc":"2.0"}`,
		` { "jsonrpc" : "2.0" , "id" : 0 , "result" : [1, "two", {"3": null}] } `,
		`{"jsonrpc":"2.0","id":-7,"result":"a \"quoted\" \u00e9 text"}`,
		`{"jsonrpc":"2.0","id":9,"result":null}`,
	}
	others := []string{
		`{"jsonrpc":"2.0","id":"abc","result":{}}`,                              // a string id
		`{"jsonrpc":"2.0","id":1.5,"result":{}}`,                                // not an integer
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no such"}}`,  // an error
		`{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}}`, // both
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
		`{"jsonrpc":"2.0","id":5,"method":"roots/list"}`,
		`{"jsonrpc":"2.0","id":5,"method":"","result":{}}`, // a method key, even empty
		`{"jsonrpc":"1.0","id":3,"result":{}}`,
		`{"jsonrpc":"2.0","id":3,"id":4,"result":{}}`, // a member twice
		`{"jsonrpc":"2.0","ID":3,"result":{}}`,        // not the member's name
		`{"jsonrpc":"2.0","id":3}`,                    // no result
		`{"jsonrpc":"2.0","id":3,"result":{}} x`,      // not one value
		`{"jsonrpc":"2.0","id":3,"result":{"a":}}`,    // not JSON
		`{"jsonrpc":"2.0","result":{}}`,               // no id
	}
	for _, line := range plain {
		got, ok := plainResponse([]byte(line))
		if !ok {
			t.Errorf("%s: not read as a plain answer", line)
			continue
		}
		want, err := jsonrpc.DecodeMessage([]byte(line))
		if err != nil {
			t.Fatalf("%s: the SDK: %v", line, err)
		}
		w := want.(*jsonrpc.Response)
		if got.ID != w.ID || string(got.Result) != string(w.Result) || got.Error != nil {
			t.Errorf("%s: got %+v (result %s), the SDK %+v (result %s)", line, got, got.Result, w, w.Result)
		}
	}
	for _, line := range others {
		if m, ok := plainResponse([]byte(line)); ok {
			t.Errorf("%s: read as a plain answer: %+v", line, m)
		}
		got, gotErr := decodeLine([]byte(line))
		want, wantErr := jsonrpc.DecodeMessage([]byte(line))
		if !reflect.DeepEqual(got, want) || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("%s: decodeLine gave %+v, %v; the SDK %+v, %v", line, got, gotErr, want, wantErr)
		}
	}
}

// FuzzDecodeLine: a line read as a plain answer (lines reach decodeLine
// only once json.Valid accepted them) is the message the SDK's decoder
// makes of it, its ID and result bytes alike.
func FuzzDecodeLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"text","text":"x2"}]}}`,
		`{"result":{"tools":[]},"id":12,"jsonrpc":"2.0"}`,
		` { "jsonrpc" : "2.0" , "id" : 0 , "result" : [1, "two", {"3": null}] } `,
		`{"jsonrpc":"2.0","id":9007199254740993,"result":null}`,
		`{"jsonrpc":"2.0","id":-0,"result":"\ud800"}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"no such"}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if !json.Valid([]byte(line)) {
			return
		}
		got, ok := plainResponse([]byte(line))
		if !ok {
			return
		}
		want, err := jsonrpc.DecodeMessage([]byte(line))
		if err != nil {
			t.Fatalf("%s: read as a plain answer, but the SDK says %v", line, err)
		}
		w, isResp := want.(*jsonrpc.Response)
		if !isResp || got.ID != w.ID || string(got.Result) != string(w.Result) || w.Error != nil {
			t.Fatalf("%s: got %+v (result %s), the SDK %+v", line, got, got.Result, want)
		}
	})
}
