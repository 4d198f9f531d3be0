package anthropic

import (
	"testing"

	"acpd/model"
	"acpd/model/internal/body"
	"acpd/model/internal/sse/ssetest"
)

// testTools is the tool memo of the package's tests, shared as a
// Backend's is by its requests.
var testTools body.ToolMemo

// payload is requestPayload with testTools.
func payload(req *model.Request) (*body.Payload, error) { return requestPayload(&testTools, req) }

// requestBody is the body requestPayload sends, whole.
var requestBody = ssetest.Whole(payload)

func TestLongAnswer(t *testing.T) { ssetest.CheckLongAnswer(t, Provider, payload) }

func TestMemo(t *testing.T) { ssetest.CheckMemo(t, Provider, payload) }

// A message keeps its form with a cache breakpoint only while it is one.
func TestMemoDropsFormerBreakpoints(t *testing.T) {
	u := func(s string) model.Message {
		return model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: s}}}.Memoized()
	}
	msgs := []model.Message{u("one"), u("two")}
	req := &model.Request{Model: "m", Messages: []model.Message{msgs[0], msgs[1]}}
	req.Messages[0].Cache = true
	if _, err := payload(req); err != nil {
		t.Fatal(err)
	}
	kept := func(m model.Message) *encoded {
		v, ok := m.Recall(memoKey{})
		if !ok {
			t.Fatal("no encoding kept")
		}
		return v.(*encoded)
	}
	if e := kept(msgs[0]); e.marked == nil || e.frag == nil {
		t.Fatal("the breakpoint's forms are not kept")
	}
	req.Messages[0].Cache, req.Messages[1].Cache = false, true
	if _, err := payload(req); err != nil {
		t.Fatal(err)
	}
	if e := kept(msgs[0]); e.marked != nil || e.frag == nil {
		t.Fatal("a former breakpoint keeps its form with the breakpoint")
	}
	if e := kept(msgs[1]); e.marked == nil {
		t.Fatal("the new breakpoint's form is not kept")
	}
}

func TestToolMemo(t *testing.T) { ssetest.CheckToolMemo(t, requestPayload) }

func BenchmarkRequestTools80(b *testing.B) { ssetest.BenchmarkTools80(b, requestPayload) }

// TestShared: breakpoints given as Request.CacheAt on the transcript's own
// messages make the body marks on copies make.
func TestShared(t *testing.T) { ssetest.CheckShared(t, Provider, false, payload) }
