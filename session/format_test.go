package session

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"
)

const testHeader = `{"v":1,"kind":"header","id":"s_1","cwd":"/w","createdAt":"2025-01-01T00:00:00Z"}` + "\n"

func TestParseAlternativeLayout(t *testing.T) {
	// Hand-edited or reformatted records (other key order, spaces, escapes)
	// still load through the slow path, their data compacted as Record
	// promises.
	log := testHeader +
		`{"seq":1,"t":"2025-01-01T00:00:01Z","kind":"update","data":{"a":1}}` + "\n" +
		`{ "kind" : "update", "data" : [1, 2], "seq" : 2, "t" : "2025-01-01T00:00:02+02:00" }` + "\n" +
		`{"seq":3,"t":"2025-01-01T00:00:03Z","kind":"m\u0065ta","data":"x"}` + "\n"
	p, err := parseLog([]byte(log), "s_1")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.records) != 3 || p.good != int64(len(log)) {
		t.Fatalf("records %d good %d", len(p.records), p.good)
	}
	r := p.records[1]
	if r.Seq != 2 || r.Kind != "update" || string(r.Data) != "[1,2]" || !r.Time.Equal(time.Date(2025, 1, 1, 0, 0, 2, 0, time.FixedZone("", 7200))) {
		t.Fatalf("slow record %+v %s", r, r.Data)
	}
	if p.records[2].Kind != "meta" {
		t.Fatalf("escaped kind %q", p.records[2].Kind)
	}
	for _, bad := range []string{
		`{"seq":1,"t":"2025-01-01T00:00:01Z","kind":"update","data":1,"extra":2}`,
		`{"seq":1,"t":"2025-01-01T00:00:01Z","kind":"update"}`,
		`{"seq":1,"t":"yesterday","kind":"update","data":1}`,
		`{"seq":1,"t":"2025-01-01T00:00:01Z","kind":"a b","data":1}`,
		`{"seq":1,"t":"2025-01-01T00:00:01Z","kind":"update","data":1} {}`,
		`{"seq":1.5,"t":"2025-01-01T00:00:01Z","kind":"update","data":1}`,
		`{"seq":1,"t":"2025-01-01T00:00:01Z","kind":"update","data":1}}`,
		`{"seq":1,"t":"2025-01-01T00:00:01Z","kind":"update","data":{"a":1},"data":}`,
		`[1]`,
	} {
		log := testHeader + bad + "\n" + `{"seq":2,"t":"2025-01-01T00:00:01Z","kind":"update","data":1}` + "\n"
		if _, err := parseLog([]byte(log), ""); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

func TestRecordEncodingRoundTrip(t *testing.T) {
	kinds := map[string]string{}
	for _, data := range []string{`null`, `0`, `"é\u2028\n"`, `{"a":{"b":[true,false,null,1e9]}}`, `[]`} {
		tm := time.Date(2025, 12, 31, 23, 59, 59, 123456789, time.UTC)
		line := appendRecord(nil, 42, tm, "session/update", []byte(data))
		if !json.Valid(line) || bytes.Count(line, []byte{'\n'}) != 1 || line[len(line)-1] != '\n' {
			t.Fatalf("bad line %q", line)
		}
		var r Record
		if !fastRecord(line[:len(line)-1], &r, kinds) {
			t.Fatalf("fast path rejected %q", line)
		}
		if r.Seq != 42 || !r.Time.Equal(tm) || r.Kind != "session/update" || string(r.Data) != data {
			t.Fatalf("round trip %+v %s", r, r.Data)
		}
		var slow Record
		if err := slowRecord(line[:len(line)-1], &slow); err != nil || slow.Seq != r.Seq || !slow.Time.Equal(r.Time) || slow.Kind != r.Kind || string(slow.Data) != data {
			t.Fatalf("slow path disagrees: %+v %v", slow, err)
		}
	}
}

// FuzzLoad feeds arbitrary bytes to the log loader: it must never panic and
// either fail or return a consistent record list.
func FuzzLoad(f *testing.F) {
	rec := func(seq int, data string) string {
		return string(appendRecord(nil, int64(seq), time.Date(2025, 1, 1, 0, 0, seq, 0, time.UTC), "update", []byte(data)))
	}
	good := testHeader + rec(1, `{"a":1}`) + rec(2, `"x"`) + rec(3, `[1,{"b":null}]`)
	f.Add([]byte(good))
	f.Add([]byte(good[:len(good)-7]))
	f.Add([]byte(good + "garbage\n"))
	f.Add([]byte(testHeader + rec(2, `1`)))
	f.Add([]byte(testHeader + "\n" + rec(1, `1`)))
	f.Add([]byte(strings.Replace(good, `"v":1`, `"v":2`, 1)))
	f.Add([]byte(testHeader + `{ "seq": 1, "t": "2025-01-01T00:00:00Z", "kind": "x", "data": {} }` + "\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parseLog(data, "")
		if err != nil {
			return
		}
		if p.good < 0 || p.good > int64(len(data)) || (p.good > 0 && data[p.good-1] != '\n') {
			t.Fatalf("good=%d for %d bytes", p.good, len(data))
		}
		if rest := data[p.good:]; bytes.Count(rest, []byte{'\n'}) > 1 {
			t.Fatalf("more than one line dropped as torn tail: %q", rest)
		}
		for i, r := range p.records {
			if r.Seq != int64(i+1) || validateKind(r.Kind) != nil || !json.Valid(r.Data) {
				t.Fatalf("inconsistent record %d: %+v %q", i, r, r.Data)
			}
		}
		// The valid prefix alone loads to the same records with nothing torn.
		q, err := parseLog(data[:p.good], "")
		if err != nil || q.good != p.good || len(q.records) != len(p.records) {
			t.Fatalf("prefix reload: err=%v good=%d/%d records=%d/%d", err, q.good, p.good, len(q.records), len(p.records))
		}
		// Re-encoding yields a log that loads back identically.
		hdr, err := encodeHeader(p.header)
		if err != nil {
			t.Fatal(err)
		}
		out := hdr
		for _, r := range p.records {
			var buf bytes.Buffer
			if err := json.Compact(&buf, r.Data); err != nil {
				t.Fatal(err)
			}
			out = appendRecord(out, r.Seq, r.Time, r.Kind, buf.Bytes())
		}
		e, err := parseLog(out, p.header.ID)
		if err != nil || e.good != int64(len(out)) || len(e.records) != len(p.records) {
			t.Fatalf("re-encoded log: err=%v\n%s", err, out)
		}
		for i := range e.records {
			if !e.records[i].Time.Equal(p.records[i].Time) || e.records[i].Kind != p.records[i].Kind {
				t.Fatalf("re-encoded record %d differs", i)
			}
		}
	})
}

// FuzzApplyJournal feeds the index journal reader arbitrary bytes (a
// journal damaged on disk): it must not panic, and every entry it leaves
// has a valid id equal to its key.
func FuzzApplyJournal(f *testing.F) {
	f.Add([]byte(`{"op":"put","m":{"id":"a","cwd":"/w","createdAt":"2025-01-02T03:04:05Z","updatedAt":"2025-01-02T03:04:05Z","records":0}}` + "\n" +
		`{"op":"sync","m":{"id":"a","createdAt":"2025-01-02T03:04:05Z","updatedAt":"2025-01-03T03:04:05Z","records":3}}` + "\n" + `{"op":"del","id":"b"}` + "\n" + `{"op":"pu`))
	f.Add([]byte(`{"op":"put","m":{"id":"../x"}}` + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		idx := &indexFile{Sessions: map[string]Meta{"b": {ID: "b"}}}
		applyJournal(idx, b, slog.New(slog.DiscardHandler))
		for id, m := range idx.Sessions {
			if validateID(id) != nil || m.ID != id {
				t.Fatalf("entry %q: %+v", id, m)
			}
		}
	})
}

// A record in appendRecord's layout whose data is not compact loads with
// its data compacted: Data is always compact.
func TestParseCompactsData(t *testing.T) {
	log := testHeader + `{"seq":1,"t":"2025-01-01T00:00:01Z","kind":"update","data":{"a": [1, "b c"]}}` + "\n"
	p, err := parseLog([]byte(log), "s_1")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.records) != 1 || string(p.records[0].Data) != `{"a":[1,"b c"]}` {
		t.Fatalf("records %+v", p.records)
	}
}
