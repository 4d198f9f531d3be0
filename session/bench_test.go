package session

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"
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

// fixtureStore writes a store of n closed sessions directly (headers plus a
// snapshot index), as years of use would leave it.
func fixtureStore(b *testing.B, n int) *Store {
	b.Helper()
	s := newStore(b)
	idx := &indexFile{Sessions: make(map[string]Meta, n)}
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		id := fmt.Sprintf("s_%016x", i)
		m := Meta{ID: id, Cwd: fmt.Sprintf("/src/project%d", i%50), Title: fmt.Sprintf("Fix the parser, take %d", i),
			CreatedAt: t0.Add(time.Duration(i) * time.Minute), UpdatedAt: t0.Add(time.Duration(i)*time.Minute + time.Second), Records: 40}
		line, err := encodeHeader(header{V: logVersion, Kind: "header", ID: id, Cwd: m.Cwd, CreatedAt: m.CreatedAt})
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(s.logPath(id), line, 0o600); err != nil {
			b.Fatal(err)
		}
		idx.Sessions[id] = m
	}
	if err := s.withIndexLock(func() error { return s.writeIndex(idx) }); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkStore measures what grows with history: opening the store,
// creating a session (with its first Sync) and listing, at several store
// sizes.
func BenchmarkStore(b *testing.B) {
	for _, n := range []int{0, 1000, 10000, 100000} {
		if n == 100000 && testing.Short() {
			continue
		}
		s := fixtureStore(b, n)
		b.Run(fmt.Sprintf("Open/%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := Open(b.Context(), s.Dir()); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("CreateSync/%d", n), func(b *testing.B) {
			for b.Loop() {
				l, err := s.Create(Meta{Cwd: "/bench"})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := l.Append("update", updatePayload(1)); err != nil {
					b.Fatal(err)
				}
				if err := l.Sync(); err != nil {
					b.Fatal(err)
				}
				if err := l.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("List/%d", n), func(b *testing.B) {
			for b.Loop() {
				if _, err := s.List(Filter{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
