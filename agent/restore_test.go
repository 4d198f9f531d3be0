package agent

import (
	"encoding/json"
	"fmt"
	"testing"

	"acpd/model"
	"acpd/session"
)

// decodeMessages decodes a long transcript's message records in order,
// whatever the workers, and keeps each record's own error.
func TestDecodeMessages(t *testing.T) {
	var recs []session.Record
	for i := range 3000 {
		switch {
		case i%3 == 0:
			recs = append(recs, session.Record{Seq: int64(i + 1), Kind: kindUpdate, Data: json.RawMessage(`{}`)})
		case i == 2000:
			recs = append(recs, session.Record{Seq: int64(i + 1), Kind: kindMessage, Data: json.RawMessage(`{"role":5}`)})
		default:
			b, err := json.Marshal(model.Message{Role: model.RoleUser, Parts: []model.Part{{Type: model.PartText, Text: fmt.Sprint(i)}}})
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, session.Record{Seq: int64(i + 1), Kind: kindMessage, Data: b})
		}
	}
	got := decodeMessages(recs)
	k := 0
	for i, r := range recs {
		if r.Kind != kindMessage {
			continue
		}
		m := got[k]
		k++
		if i == 2000 {
			if m.err == nil {
				t.Errorf("record %d: no error", i)
			}
			continue
		}
		if m.err != nil || m.msg.Text() != fmt.Sprint(i) {
			t.Fatalf("record %d: %q, %v", i, m.msg.Text(), m.err)
		}
	}
	if k != len(got) {
		t.Fatalf("%d decoded for %d message records", len(got), k)
	}
}
