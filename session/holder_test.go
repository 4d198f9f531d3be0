package session

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// helperCycle opens and closes session id n times ("id,n"), failing on the
// first error, then prints "done".
func helperCycle(s *Store, arg string) {
	id, ns, _ := strings.Cut(arg, ",")
	n, err := strconv.Atoi(ns)
	if err != nil {
		helperFail(err)
	}
	fmt.Println(helperReady)
	for i := range n {
		l, _, err := s.Open(id)
		if err != nil {
			helperFail(fmt.Errorf("open %d: %w", i, err))
		}
		if err := l.Close(); err != nil {
			helperFail(fmt.Errorf("close %d: %w", i, err))
		}
	}
	fmt.Println("done")
}

func TestHolder(t *testing.T) {
	s := newStore(t)
	if h := s.Holder("nope"); h != nil {
		t.Fatalf("Holder of a missing session: %+v", h)
	}
	if h := s.Holder("../x"); h != nil {
		t.Fatalf("Holder of an invalid id: %+v", h)
	}
	l, err := s.Create(Meta{Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	id := l.ID()
	if h := s.Holder(id); h == nil || h.PID != os.Getpid() || h.ID != id {
		t.Fatalf("Holder of a session open here: %+v", h)
	}
	mustClose(t, l)
	if h := s.Holder(id); h != nil {
		t.Fatalf("Holder after Close: %+v", h)
	}
	l, _, err = s.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	if h := s.Holder(id); h == nil {
		t.Fatal("Holder after Open: nil")
	}
	mustClose(t, l)
	if err := s.Delete(id); err != nil {
		t.Fatal(err)
	}
	if h := s.Holder(id); h != nil {
		t.Fatalf("Holder after Delete: %+v", h)
	}
}

// TestHolderNeverFailsOpen probes a session as fast as possible while
// another process, its only opener, opens and closes it again and again: no
// Open may fail because of a probe, and every probe that names a holder
// names that process (or none: a probe that races with a new holder writing
// its record reports an unknown one).
func TestHolderNeverFailsOpen(t *testing.T) {
	s := newStore(t)
	id, _ := makeSession(t, s, 1)
	cmd := helperCmd(t, "cycle", s.Dir(), id+",300")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	probes, held := 0, 0
	var werr error
probe:
	for {
		select {
		case werr = <-done:
			break probe
		default:
		}
		probes++
		if h := s.Holder(id); h != nil {
			held++
			if h.PID != cmd.Process.Pid && (h.PID != 0 || h.Holder != "another process") {
				t.Errorf("Holder names pid %d, not the helper's %d", h.PID, cmd.Process.Pid)
			}
		}
	}
	if werr != nil || !strings.Contains(stdout.String(), "done") {
		t.Fatalf("helper: %v\n%s\n%s", werr, stdout.String(), stderr.String())
	}
	if h := s.Holder(id); h != nil {
		t.Fatalf("Holder after the helper closed: %+v", h)
	}
	t.Logf("%d probes, %d saw the helper", probes, held)
}

// TestHolderNeverFailsOpenHere: the same within one process, where a probe
// that misses the in-process table races with the opener on the files.
func TestHolderNeverFailsOpenHere(t *testing.T) {
	s := newStore(t)
	id, _ := makeSession(t, s, 1)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				if h := s.Holder(id); h != nil && h.PID != os.Getpid() {
					t.Errorf("Holder names pid %d", h.PID)
				}
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	for i := range 300 {
		l, _, err := s.Open(id)
		if err != nil {
			t.Fatalf("open %d: %v", i, err)
		}
		if err := l.Close(); err != nil {
			t.Fatalf("close %d: %v", i, err)
		}
	}
}

// BenchmarkHolder measures one probe, the cost session/list adds per listed
// entry: of a closed session (empty holder record), of one whose holder was
// killed (stale record, free liveness lock) and of one held by another
// process.
func BenchmarkHolder(b *testing.B) {
	s := newStore(b)
	id, _ := makeSession(b, s, 1)
	b.Run("Closed", func(b *testing.B) {
		for b.Loop() {
			if s.Holder(id) != nil {
				b.Fatal("held")
			}
		}
	})
	if err := os.WriteFile(s.lockPath(id), []byte(`{"pid":1,"since":"2025-01-02T03:04:05Z"}`+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	b.Run("Killed", func(b *testing.B) {
		for b.Loop() {
			if s.Holder(id) != nil {
				b.Fatal("held")
			}
		}
	})
	cmd, stderr := startHelper(b, "hold", s.Dir(), id)
	defer killHelper(b, cmd, stderr)
	b.Run("HeldElsewhere", func(b *testing.B) {
		for b.Loop() {
			if s.Holder(id) == nil {
				b.Fatal("not held")
			}
		}
	})
}
