package session

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// updatePayload returns a realistic ~300 byte ACP session/update payload.
func updatePayload(i int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"sessionId":"s_0123456789abcdef","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Chunk %06d: the quick brown fox jumps over the lazy dog; \"quoted\" text, unicode é ✓, and a newline\nto exercise escaping in the transcript. More filler words here to make it realistic."}}}`, i))
}

func BenchmarkLoad10k(b *testing.B) {
	s := newStore(b)
	l, err := s.Create(Meta{Cwd: "/bench"})
	if err != nil {
		b.Fatal(err)
	}
	const n = 10000
	for i := range n {
		if _, err := l.Append("update", updatePayload(i)); err != nil {
			b.Fatal(err)
		}
	}
	mustClose(b, l)
	fi, err := os.Stat(s.logPath(l.ID()))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("Records", func(b *testing.B) {
		b.SetBytes(fi.Size())
		b.ReportAllocs()
		for b.Loop() {
			recs, err := s.Records(l.ID())
			if err != nil || len(recs) != n {
				b.Fatal(len(recs), err)
			}
		}
	})
	b.Run("OpenClose", func(b *testing.B) {
		b.SetBytes(fi.Size())
		b.ReportAllocs()
		for b.Loop() {
			l, recs, err := s.Open(l.ID())
			if err != nil || len(recs) != n {
				b.Fatal(len(recs), err)
			}
			if err := l.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkAppend(b *testing.B) {
	s := newStore(b)
	l, err := s.Create(Meta{Cwd: "/bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer mustClose(b, l)
	p := updatePayload(1)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Append("update", p); err != nil {
			b.Fatal(err)
		}
	}
}
