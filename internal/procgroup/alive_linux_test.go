package procgroup

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

func TestParseProcStat(t *testing.T) {
	state, pg, ok := parseProcStat([]byte("123 (weird ) (name) S 1 4567 4567 0 -1 4194560"))
	if !ok || state != 'S' || pg != 4567 {
		t.Errorf("parseProcStat = %c %d %v", state, pg, ok)
	}
	for _, bad := range []string{"", "123 (x", "1 (x) S", "1 (x) S 1 abc"} {
		if _, _, ok := parseProcStat([]byte(bad)); ok {
			t.Errorf("parseProcStat(%q) ok", bad)
		}
	}
}

// TestLiveMemberAfterLeader: while the leader runs the group is alive; once
// the leader is an unreaped zombie, the scan still finds the grandchild left
// in its group, and with the grandchild dead too the group is not alive.
func TestLiveMemberAfterLeader(t *testing.T) {
	g, stdin, out := start(t, "stubborn")
	grandchild := readPid(t, out)
	t.Cleanup(func() { _ = g.Stop(context.Background(), stdin, 10*time.Millisecond) })
	pgid := g.pid
	if alive, ok := liveMember(pgid); !alive || !ok {
		t.Fatalf("running leader: liveMember = %v, %v", alive, ok)
	}
	// Kill the leader alone; nothing reaps it until Stop.
	if err := syscall.Kill(pgid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitState(t, pgid, 'Z')
	if alive, ok := liveMember(pgid); !alive || !ok {
		t.Fatalf("zombie leader, live grandchild: liveMember = %v, %v", alive, ok)
	}
	if err := syscall.Kill(grandchild, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if alive, _ := liveMember(pgid); !alive {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("group still alive with its leader a zombie and its grandchild killed")
		}
		time.Sleep(time.Millisecond)
	}
}

// waitState waits until process pid is in state (its /proc stat letter).
func waitState(t *testing.T, pid int, state byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			if s, _, ok := parseProcStat(b); ok && s == state {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("process %d never reached state %c", pid, state)
}

// BenchmarkLiveMember: the check Stop polls, on a running group.
func BenchmarkLiveMember(b *testing.B) {
	cmd := child("sleep")
	g, err := Start(cmd)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = g.Stop(context.Background(), nil, time.Second) })
	for b.Loop() {
		if alive, _ := liveMember(g.pid); !alive {
			b.Fatal("not alive")
		}
	}
}
