package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func newStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustAppend(t testing.TB, l *Log, kind string, data any) Record {
	t.Helper()
	r, err := l.Append(kind, data)
	if err != nil {
		t.Fatalf("Append(%q): %v", kind, err)
	}
	return r
}

func mustClose(t testing.TB, l *Log) {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// checkRecords compares loaded records with the ones Append returned.
func checkRecords(t testing.TB, got, want []Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Seq != w.Seq || !g.Time.Equal(w.Time) || g.Kind != w.Kind || !bytes.Equal(g.Data, w.Data) {
			t.Fatalf("record %d: got %+v (%s), want %+v (%s)", i, g, g.Data, w, w.Data)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	s := newStore(t)
	created := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	l, err := s.Create(Meta{
		Cwd:                   "/src/proj",
		AdditionalDirectories: []string{"/src/lib"},
		Title:                 "first",
		CreatedAt:             created,
		Extra:                 json.RawMessage(`{"mode":"code"}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	id := l.ID()
	if !strings.HasPrefix(id, "s_") || len(id) != 18 || validateID(id) != nil {
		t.Fatalf("generated id %q", id)
	}
	var want []Record
	want = append(want, mustAppend(t, l, "update", json.RawMessage("{\n  \"a\": [1, 2],\n  \"b\": \"<&>\"\n}")))
	want = append(want, mustAppend(t, l, "message", map[string]any{"role": "user", "text": "x<y & \"z\"\n"}))
	want = append(want, mustAppend(t, l, "meta", nil))
	want = append(want, mustAppend(t, l, "meta", json.RawMessage(nil)))
	if got := string(want[0].Data); got != `{"a":[1,2],"b":"<&>"}` {
		t.Fatalf("RawMessage not compacted verbatim: %s", got)
	}
	if got := string(want[1].Data); !strings.Contains(got, `x<y & \"z\"\n`) {
		t.Fatalf("payload HTML-escaped or mangled: %s", got)
	}
	if string(want[2].Data) != "null" || string(want[3].Data) != "null" {
		t.Fatalf("nil payloads: %s %s", want[2].Data, want[3].Data)
	}
	for i, r := range want {
		if r.Seq != int64(i+1) {
			t.Fatalf("seq %d at %d", r.Seq, i)
		}
	}
	if err := l.Sync(); err != nil {
		t.Fatal(err)
	}
	m, err := s.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	if m.Records != 4 || m.Cwd != "/src/proj" || m.Title != "first" || !m.CreatedAt.Equal(created) ||
		!slices.Equal(m.AdditionalDirectories, []string{"/src/lib"}) || string(m.Extra) != `{"mode":"code"}` {
		t.Fatalf("meta after Sync: %+v", m)
	}
	if !m.UpdatedAt.Equal(want[3].Time) {
		t.Fatalf("UpdatedAt %v, want last record time %v", m.UpdatedAt, want[3].Time)
	}
	mustClose(t, l)

	l2, got, err := s.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, want)
	want = append(want, mustAppend(t, l2, "update", []int{5}))
	if want[4].Seq != 5 {
		t.Fatalf("seq after reopen: %d", want[4].Seq)
	}
	mustClose(t, l2)
	got, err = s.Records(id)
	if err != nil {
		t.Fatal(err)
	}
	checkRecords(t, got, want)
	if m, _ := s.Get(id); m.Records != 5 {
		t.Fatalf("Records after Close: %d", m.Records)
	}
}

func TestClosedLog(t *testing.T) {
	s := newStore(t)
	l, err := s.Create(Meta{Cwd: "/x"})
	if err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := l.Append("update", 1); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("Append after Close: %v", err)
	}
	if err := l.Sync(); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("Sync after Close: %v", err)
	}
	if err := l.UpdateMeta(func(m *Meta) { m.Title = "x" }); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("UpdateMeta after Close: %v", err)
	}
}

func TestAppendValidation(t *testing.T) {
	s := newStore(t)
	l, err := s.Create(Meta{})
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, l)
	for _, kind := range []string{"", "a b", `a"b`, "a\nb", strings.Repeat("k", 65), "é"} {
		if _, err := l.Append(kind, 1); err == nil {
			t.Errorf("Append accepted kind %q", kind)
		}
	}
	if _, err := l.Append("update", json.RawMessage(`{"a":`)); err == nil {
		t.Error("Append accepted invalid RawMessage")
	}
	if _, err := l.Append("update", func() {}); err == nil {
		t.Error("Append accepted unmarshalable value")
	}
	// Failed appends consume no sequence numbers.
	if r := mustAppend(t, l, "session/update", 1); r.Seq != 1 {
		t.Fatalf("seq %d after failed appends", r.Seq)
	}
}

// writeLog replaces the log of id with b.
func writeLog(t testing.TB, s *Store, id string, b []byte) {
	t.Helper()
	if err := os.WriteFile(s.logPath(id), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func readLog(t testing.TB, s *Store, id string) []byte {
	t.Helper()
	b, err := os.ReadFile(s.logPath(id))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// makeSession creates a closed session with n small records and returns it.
func makeSession(t testing.TB, s *Store, n int) (string, []Record) {
	t.Helper()
	l, err := s.Create(Meta{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	for i := range n {
		recs = append(recs, mustAppend(t, l, "update", map[string]any{"i": i, "text": strings.Repeat("é", i%7)}))
	}
	mustClose(t, l)
	return l.ID(), recs
}

func TestTornTail(t *testing.T) {
	s := newStore(t)
	id, recs := makeSession(t, s, 2)
	l, _, err := s.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	recs = append(recs, mustAppend(t, l, "u", 1)) // short: every offset costs fsyncs
	mustClose(t, l)
	full := readLog(t, s, id)
	lines := bytes.SplitAfter(full, []byte("\n"))
	lastLen := len(lines[len(lines)-2]) // final element is empty
	start := len(full) - lastLen
	for cut := start; cut < len(full); cut++ {
		writeLog(t, s, id, full[:cut])
		got, err := s.Records(id) // read-only: tolerates, does not repair
		if err != nil {
			t.Fatalf("cut %d: Records: %v", cut, err)
		}
		checkRecords(t, got, recs[:2])
		if n := len(readLog(t, s, id)); n != cut {
			t.Fatalf("cut %d: Records modified the file (%d bytes)", cut, n)
		}

		l, got, err := s.Open(id)
		if err != nil {
			t.Fatalf("cut %d: Open: %v", cut, err)
		}
		checkRecords(t, got, recs[:2])
		r := mustAppend(t, l, "update", map[string]int{"cut": cut})
		if r.Seq != 3 {
			t.Fatalf("cut %d: appended seq %d", cut, r.Seq)
		}
		mustClose(t, l)
		b := readLog(t, s, id)
		if !bytes.HasPrefix(b, full[:start]) {
			t.Fatalf("cut %d: good prefix changed", cut)
		}
		p, err := parseLog(b, id)
		if err != nil || p.good != int64(len(b)) || len(p.records) != 3 {
			t.Fatalf("cut %d: file not clean after append: err=%v good=%d len=%d records=%d\n%s", cut, err, p.good, len(b), len(p.records), b)
		}
		checkRecords(t, p.records, append(recs[:2:2], r))
	}
}

func TestTornTailUnparseableLastLine(t *testing.T) {
	s := newStore(t)
	id, recs := makeSession(t, s, 2)
	full := readLog(t, s, id)
	for _, junk := range []string{"\n", "garbage\n", "\x00\x00\x00\n", `{"seq":3,"t":"2025-01-01T00:00:00Z","kind":"update","data":}` + "\n"} {
		writeLog(t, s, id, append(slices.Clip(full), junk...))
		l, got, err := s.Open(id)
		if err != nil {
			t.Fatalf("junk %q: %v", junk, err)
		}
		checkRecords(t, got, recs)
		mustClose(t, l)
		if b := readLog(t, s, id); !bytes.Equal(b, full) {
			t.Fatalf("junk %q: not truncated: %q", junk, b)
		}
	}
}

func TestMiddleDamage(t *testing.T) {
	s := newStore(t)
	id, _ := makeSession(t, s, 4)
	full := readLog(t, s, id)
	lines := bytes.SplitAfter(full, []byte("\n"))
	// lines[0] is the header, lines[2] is record 2 (file line 3).
	cases := map[string][]byte{
		"garbage line":               join(lines[:2], []byte("not json\n"), lines[3:]),
		"truncated line":             join(lines[:2], append(slices.Clip(lines[2][:len(lines[2])/2]), '\n'), lines[3:]),
		"empty line":                 join(lines[:2], []byte("\n"), lines[2:]),
		"garbage then torn fragment": join(lines[:2], []byte("xx\n"), [][]byte{[]byte(`{"seq":`)}),
	}
	for name, b := range cases {
		writeLog(t, s, id, b)
		for op, load := range map[string]func() error{
			"Open":    func() error { _, _, err := s.Open(id); return err },
			"Records": func() error { _, err := s.Records(id); return err },
		} {
			err := load()
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("%s: %s: got %v, want ErrCorrupt", name, op, err)
			}
			if want := s.logPath(id) + ":3:"; !strings.Contains(err.Error(), want) {
				t.Fatalf("%s: %s: error %q does not name %s", name, op, err, want)
			}
		}
		if got := readLog(t, s, id); !bytes.Equal(got, b) {
			t.Fatalf("%s: damaged file was modified", name)
		}
	}
	// The session is not left locked by the failed Open.
	writeLog(t, s, id, full)
	l, _, err := s.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
}

func join(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch p := p.(type) {
		case []byte:
			b = append(b, p...)
		case [][]byte:
			for _, q := range p {
				b = append(b, q...)
			}
		}
	}
	return b
}

func TestSeqGap(t *testing.T) {
	s := newStore(t)
	id, _ := makeSession(t, s, 3)
	full := readLog(t, s, id)
	for _, tc := range []struct{ from, to string }{
		{`{"seq":2,`, `{"seq":4,`}, // gap at line 3
		{`{"seq":2,`, `{"seq":1,`}, // repeat at line 3
		{`{"seq":3,`, `{"seq":9,`}, // gap on the last line, which parses: still damage
	} {
		b := bytes.Replace(full, []byte(tc.from), []byte(tc.to), 1)
		writeLog(t, s, id, b)
		_, _, err := s.Open(id)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "sequence number") {
			t.Fatalf("%s→%s: got %v", tc.from, tc.to, err)
		}
	}
	b := bytes.Replace(full, []byte(`{"seq":1,`), []byte(`{"seq":0,`), 1)
	writeLog(t, s, id, b)
	if _, err := s.Records(id); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), ":2:") {
		t.Fatalf("seq 0: got %v", err)
	}
}

func TestBadHeader(t *testing.T) {
	s := newStore(t)
	id, _ := makeSession(t, s, 1)
	full := readLog(t, s, id)
	hdrEnd := bytes.IndexByte(full, '\n') + 1
	rest := full[hdrEnd:]
	for name, tc := range map[string]struct {
		b    []byte
		want string
	}{
		"empty":       {nil, "incomplete header"},
		"torn header": {full[:hdrEnd-1], "incomplete header"},
		"newer":       {bytes.Replace(full, []byte(`{"v":1,`), []byte(`{"v":2,`), 1), "unsupported log version 2"},
		"not header":  {join(rest, rest), "bad header"},
		"other id":    {bytes.Replace(full, []byte(`"id":"`+id), []byte(`"id":"zz`), 1), "header names session"},
	} {
		writeLog(t, s, id, tc.b)
		_, _, err := s.Open(id)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), ":1:") {
			t.Errorf("%s: got %v, want ErrCorrupt with %q at line 1", name, err, tc.want)
		}
	}
}

func TestPermissions(t *testing.T) {
	s := newStore(t)
	l, err := s.Create(Meta{Cwd: "/p"})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, "update", 1)
	mustClose(t, l)
	for path, want := range map[string]fs.FileMode{
		s.Dir():            fs.ModeDir | 0o700,
		s.sessionsDir():    fs.ModeDir | 0o700,
		s.indexPath():      0o600,
		s.indexLockPath():  0o600,
		s.logPath(l.ID()):  0o600,
		s.lockPath(l.ID()): 0o600,
	} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode(), want)
		}
	}
}

func TestIDValidation(t *testing.T) {
	s := newStore(t)
	bad := []string{".", "..", "../x", "a/b", "a\\b", "/abs", "a\x00b", ".hidden", "a b", "ü", "a:b", strings.Repeat("a", 129)}
	for _, id := range append(bad, "") {
		if id != "" { // "" asks Create for a fresh id
			if _, err := s.Create(Meta{ID: id}); err == nil {
				t.Errorf("Create accepted %q", id)
			}
		}
		if _, _, err := s.Open(id); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("Open(%q): %v, want validation error", id, err)
		}
		if _, err := s.Get(id); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%q): %v", id, err)
		}
		if err := s.Delete(id); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("Delete(%q): %v", id, err)
		}
		if _, err := s.Records(id); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("Records(%q): %v", id, err)
		}
	}
	// Nothing was created anywhere.
	parent := filepath.Dir(s.Dir())
	ents, _ := os.ReadDir(parent)
	if len(ents) != 1 {
		t.Errorf("unexpected entries next to the store: %v", ents)
	}
	if ents, _ := os.ReadDir(s.sessionsDir()); len(ents) != 0 {
		t.Errorf("unexpected files in sessions/: %v", ents)
	}
	for _, id := range []string{"a", "A-b_c.d", strings.Repeat("z", 128), "x..y"} {
		l, err := s.Create(Meta{ID: id})
		if err != nil {
			t.Fatalf("Create(%q): %v", id, err)
		}
		if l.ID() != id {
			t.Fatalf("ID %q, want %q", l.ID(), id)
		}
		mustClose(t, l)
	}
}

func TestCreateExisting(t *testing.T) {
	s := newStore(t)
	l, err := s.Create(Meta{ID: "fixed"})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, "update", 1)
	mustClose(t, l)
	if _, err := s.Create(Meta{ID: "fixed"}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create existing: %v", err)
	}
	if recs, err := s.Records("fixed"); err != nil || len(recs) != 1 {
		t.Fatalf("existing session damaged: %v %d", err, len(recs))
	}
	// The lock file of the existing session is still there and usable.
	l, _, err = s.Open("fixed")
	if err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
}

func TestLockInProcess(t *testing.T) {
	s := newStore(t)
	l, err := s.Create(Meta{Cwd: "/a"})
	if err != nil {
		t.Fatal(err)
	}
	id := l.ID()
	var le *LockedError
	if _, _, err := s.Open(id); !errors.As(err, &le) || le.PID != os.Getpid() || le.ID != id {
		t.Fatalf("second Open: %v", err)
	}
	if !strings.Contains(le.Error(), fmt.Sprintf("session %s is open in ", id)) || !strings.Contains(le.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("message %q", le.Error())
	}
	if err := s.Delete(id); !errors.As(err, &le) {
		t.Fatalf("Delete while open: %v", err)
	}
	// A second Store on the same directory (through a symlink) is refused too.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(s.Dir(), link); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(t.Context(), link)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s2.Open(id); !errors.As(err, &le) {
		t.Fatalf("Open via second store: %v", err)
	}
	// The flock alone refuses a second open file description, too.
	f, err := lockFile(s.lockPath(id), id)
	if !errors.As(err, &le) || le.PID != os.Getpid() {
		if f != nil {
			f.Close()
		}
		t.Fatalf("flock not held: %v", err)
	}
	mustClose(t, l)
	l2, _, err := s2.Open(id)
	if err != nil {
		t.Fatalf("Open after Close: %v", err)
	}
	mustClose(t, l2)
	if err := s.Delete(id); err != nil {
		t.Fatal(err)
	}
}

func TestDelete(t *testing.T) {
	s := newStore(t)
	id, _ := makeSession(t, s, 2)
	keep, _ := makeSession(t, s, 1)
	data, err := s.DataDir(id)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(data, "blobs"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "blobs", "x"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DataDir("../x"); !errors.Is(err, ErrInvalidID) {
		t.Errorf("DataDir of a bad id: %v", err)
	}
	if err := s.Delete(id); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{s.logPath(id), s.lockPath(id), data} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still exists: %v", p, err)
		}
	}
	if _, err := s.Get(id); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get: %v", err)
	}
	if _, _, err := s.Open(id); !errors.Is(err, ErrNotFound) {
		t.Errorf("Open: %v", err)
	}
	if _, err := s.Records(id); !errors.Is(err, ErrNotFound) {
		t.Errorf("Records: %v", err)
	}
	if err := s.Delete(id); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete: %v", err)
	}
	if _, err := os.Stat(s.lockPath(id)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("failed Open/Delete left a lock file: %v", err)
	}
	if _, err := s.Get(keep); err != nil {
		t.Errorf("other session lost: %v", err)
	}
	// An index entry whose log is gone (crash during Delete) can be deleted.
	if err := os.Remove(s.logPath(keep)); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(keep); err != nil {
		t.Fatalf("Delete of log-less entry: %v", err)
	}
	if l, err := s.List(Filter{}); err != nil || len(l) != 0 {
		t.Fatalf("List after deletes: %v %v", l, err)
	}
}

func TestListAndUpdateMeta(t *testing.T) {
	s := newStore(t)
	base := time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i, cwd := range []string{"/a", "/b", "/a", "/a"} {
		l, err := s.Create(Meta{ID: fmt.Sprintf("id%d", i), Cwd: cwd, CreatedAt: base.Add(time.Duration(i) * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, l.ID())
		mustClose(t, l)
	}
	if want := []string{"id0", "id1", "id2", "id3"}; !slices.Equal(ids, want) {
		t.Fatalf("created %v, want %v", ids, want)
	}
	// id2 and id3 tie on UpdatedAt after this; id0 becomes the most recent.
	l, _, err := s.Open("id3")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.UpdateMeta(func(m *Meta) {
		m.UpdatedAt = base.Add(2 * time.Hour)
		m.ID, m.Records, m.CreatedAt = "evil", 99, time.Time{} // ignored
	}); err != nil {
		t.Fatal(err)
	}
	mustClose(t, l)
	l, _, err = s.Open("id0")
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if err := l.UpdateMeta(func(m *Meta) {
		m.Title = "Fix the bug"
		m.Extra = json.RawMessage(`{"mode":"plan"}`)
	}); err != nil {
		t.Fatal(err)
	}
	if err := l.UpdateMeta(func(m *Meta) { m.Extra = json.RawMessage(`{`) }); err == nil {
		t.Fatal("UpdateMeta accepted invalid Extra")
	}
	mustClose(t, l)

	m0, err := s.Get("id0")
	if err != nil {
		t.Fatal(err)
	}
	if m0.Title != "Fix the bug" || string(m0.Extra) != `{"mode":"plan"}` || m0.UpdatedAt.Before(before.Add(-time.Second)) {
		t.Fatalf("id0 meta: %+v", m0)
	}
	m3, err := s.Get("id3")
	if err != nil {
		t.Fatal(err)
	}
	if m3.ID != "id3" || m3.Records != 0 || !m3.CreatedAt.Equal(base.Add(3*time.Hour)) || !m3.UpdatedAt.Equal(base.Add(2*time.Hour)) {
		t.Fatalf("store-owned fields changed: %+v", m3)
	}

	ids = nil
	all, err := s.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		ids = append(ids, m.ID)
	}
	if want := []string{"id0", "id2", "id3", "id1"}; !slices.Equal(ids, want) {
		t.Fatalf("List order %v, want %v", ids, want)
	}
	ids = nil
	onlyA, err := s.List(Filter{Cwd: "/a"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range onlyA {
		ids = append(ids, m.ID)
	}
	if want := []string{"id0", "id2", "id3"}; !slices.Equal(ids, want) {
		t.Fatalf("List(/a) %v, want %v", ids, want)
	}
	if l, err := s.List(Filter{Cwd: "/a/"}); err != nil || len(l) != 0 {
		t.Fatalf("Cwd match is not exact: %v %v", l, err)
	}
}

func TestIndexRebuild(t *testing.T) {
	s := newStore(t)
	created := time.Date(2024, 2, 3, 4, 5, 6, 7, time.UTC)
	l, err := s.Create(Meta{ID: "one", Cwd: "/one", AdditionalDirectories: []string{"/extra"}, Title: "t", CreatedAt: created})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		mustAppend(t, l, "update", i)
	}
	mustClose(t, l)
	two, _ := makeSession(t, s, 1)
	check := func(what string) {
		t.Helper()
		m, err := s.Get("one")
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		fi, err := os.Stat(s.logPath("one"))
		if err != nil {
			t.Fatal(err)
		}
		if m.Cwd != "/one" || !slices.Equal(m.AdditionalDirectories, []string{"/extra"}) || !m.CreatedAt.Equal(created) ||
			m.Records != 3 || !m.UpdatedAt.Equal(fi.ModTime()) {
			t.Fatalf("%s: recovered %+v", what, m)
		}
		if _, err := s.Get(two); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if _, err := os.Stat(s.indexPath()); err != nil {
			t.Fatalf("%s: index not rewritten: %v", what, err)
		}
	}

	if err := os.Remove(s.indexPath()); err != nil {
		t.Fatal(err)
	}
	check("missing index")

	if err := os.WriteFile(s.indexPath(), []byte(`{"v":1,"sessions":{"x":`), 0o600); err != nil {
		t.Fatal(err)
	}
	check("damaged index")
	if b, err := os.ReadFile(s.indexPath() + ".corrupt"); err != nil || string(b) != `{"v":1,"sessions":{"x":` {
		t.Fatalf("damaged index not kept: %q %v", b, err)
	}

	if err := os.WriteFile(s.indexPath(), []byte(`{"v":1,"sessions":{"../x":{"id":"../x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	check("index with a bad id")

	// A newer index is never overwritten.
	newer := []byte(`{"v":2,"whatever":true}`)
	if err := os.WriteFile(s.indexPath(), newer, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(Filter{}); err == nil || !strings.Contains(err.Error(), "unsupported version 2") {
		t.Fatalf("List with newer index: %v", err)
	}
	if err := s.Delete(two); err == nil {
		t.Fatal("Delete with newer index succeeded")
	}
	if _, err := os.Stat(s.logPath(two)); err != nil {
		t.Fatalf("failed Delete removed the log: %v", err)
	}
	if b, _ := os.ReadFile(s.indexPath()); !bytes.Equal(b, newer) {
		t.Fatalf("newer index overwritten: %s", b)
	}
}

func TestOpenRepairsIndex(t *testing.T) {
	s := newStore(t)
	id, recs := makeSession(t, s, 3)
	other, _ := makeSession(t, s, 0)
	// Simulate a crash after appends that were never reflected in the index
	// and one where the entry never made it.
	idx, err := s.readIndex()
	if err != nil {
		t.Fatal(err)
	}
	m := idx.Sessions[id]
	m.Records = 1
	idx.Sessions[id] = m
	delete(idx.Sessions, other)
	if err := s.writeIndex(idx); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(other); !errors.Is(err, ErrNotFound) {
		t.Fatalf("setup: %v", err)
	}
	for _, id := range []string{id, other} {
		l, _, err := s.Open(id)
		if err != nil {
			t.Fatal(err)
		}
		mustClose(t, l)
	}
	if m, err := s.Get(id); err != nil || m.Records != 3 || !m.UpdatedAt.Equal(recs[2].Time) {
		t.Fatalf("stale count not fixed: %+v %v", m, err)
	}
	if m, err := s.Get(other); err != nil || m.Cwd != "/w" || m.Records != 0 {
		t.Fatalf("missing entry not re-added: %+v %v", m, err)
	}
}

func TestConcurrentAppend(t *testing.T) {
	s := newStore(t)
	l, err := s.Create(Meta{Cwd: "/c"})
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 6, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers*each+2*workers)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if _, err := l.Append("update", map[string]int{"w": w, "i": i}); err != nil {
					errs <- err
				}
				if i%10 == 0 {
					if err := l.Sync(); err != nil {
						errs <- err
					}
				}
			}
			if err := l.UpdateMeta(func(m *Meta) { m.Title = fmt.Sprint("w", w) }); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	mustClose(t, l)
	recs, err := s.Records(l.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != workers*each {
		t.Fatalf("%d records", len(recs))
	}
	seen := map[string]bool{}
	for _, r := range recs {
		seen[string(r.Data)] = true
	}
	if len(seen) != workers*each {
		t.Fatalf("%d distinct payloads", len(seen))
	}
	if m, _ := s.Get(l.ID()); m.Records != workers*each || !strings.HasPrefix(m.Title, "w") {
		t.Fatalf("meta %+v", m)
	}
}

func TestConcurrentStoresSameProcess(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "st")
	const stores, each = 3, 10
	var wg sync.WaitGroup
	ids := make([][]string, stores)
	errs := make([]error, stores)
	for i := range stores {
		wg.Go(func() {
			s, err := Open(t.Context(), dir)
			if err != nil {
				errs[i] = err
				return
			}
			for range each {
				l, err := s.Create(Meta{Cwd: dir})
				if err != nil {
					errs[i] = err
					return
				}
				ids[i] = append(ids[i], l.ID())
				if err := l.Close(); err != nil {
					errs[i] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.List(Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, m := range all {
		got = append(got, m.ID)
	}
	for _, l := range ids {
		want = append(want, l...)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("index has %v, want %v", got, want)
	}
}

// TestOpenNeedsDir: the store has no directory of its own choosing (the
// caller's configuration names it).
func TestOpenNeedsDir(t *testing.T) {
	if _, err := Open(t.Context(), ""); err == nil {
		t.Fatal("Open(\"\") succeeded")
	}
}

func TestLockFileHolder(t *testing.T) {
	s := newStore(t)
	l, err := s.Create(Meta{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(s.lockPath(l.ID()))
	if err != nil {
		t.Fatal(err)
	}
	var h holderInfo
	if err := json.Unmarshal(b, &h); err != nil || h.PID != os.Getpid() || h.Argv0 != os.Args[0] || h.Since.IsZero() {
		t.Fatalf("holder %s: %+v %v", b, h, err)
	}
	mustClose(t, l)
	if b, _ := os.ReadFile(s.lockPath(l.ID())); len(b) != 0 {
		t.Fatalf("holder left in lock file after Close: %s", b)
	}
}

// Records given to Create are in the log and counted by the index when
// Create returns, with no Append or Sync: a second store reads both, and
// the Log goes on with the next sequence number.
func TestCreateWithRecords(t *testing.T) {
	s := newStore(t)
	l, err := s.Create(Meta{Cwd: "/a"}, Entry{Kind: "meta", Data: map[string]string{"mode": "ask"}}, Entry{Kind: "update", Data: json.RawMessage(`{ "x": 1 }`)})
	if err != nil {
		t.Fatal(err)
	}
	defer mustClose(t, l)
	other, err := Open(t.Context(), s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	m, err := other.Get(l.ID())
	if err != nil || m.Records != 2 || m.Cwd != "/a" {
		t.Fatalf("index entry before any Sync: %+v, %v", m, err)
	}
	recs, err := other.Records(l.ID())
	if err != nil || len(recs) != 2 {
		t.Fatalf("records before any Sync: %v, %v", recs, err)
	}
	if recs[0].Seq != 1 || recs[0].Kind != "meta" || string(recs[0].Data) != `{"mode":"ask"}` ||
		recs[1].Seq != 2 || recs[1].Kind != "update" || string(recs[1].Data) != `{"x":1}` {
		t.Fatalf("records: %+v %s %s", recs, recs[0].Data, recs[1].Data)
	}
	if r := mustAppend(t, l, "update", 3); r.Seq != 3 {
		t.Fatalf("next append has seq %d, want 3", r.Seq)
	}
	// A bad kind or payload creates nothing.
	if _, err := s.Create(Meta{ID: "bad"}, Entry{Kind: "no space", Data: 1}); err == nil {
		t.Fatal("Create accepted an invalid record kind")
	}
	if _, err := s.Create(Meta{ID: "bad"}, Entry{Kind: "update", Data: json.RawMessage(`{`)}); err == nil {
		t.Fatal("Create accepted an invalid payload")
	}
	if _, err := s.Get("bad"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a failed Create left an entry: %v", err)
	}
}
