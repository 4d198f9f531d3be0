package procgroup

import (
	"context"
	"errors"
	"os/exec"
	"sync"
	"testing"
	"time"

	"acpd/internal/testproc"
)

// TestStopClosesStdinFirst: a child that exits when its stdin closes is
// never signalled.
func TestStopClosesStdinFirst(t *testing.T) {
	g, stdin, _ := start(t, "stdin")
	if err := g.Stop(context.Background(), stdin, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := g.Wait(); err != nil {
		t.Errorf("child did not exit by itself: %v", err)
	}
	if g.Alive() {
		t.Error("group alive after Stop")
	}
}

// TestStopKillsStubbornTree: a child and grandchild ignoring SIGTERM and
// stdin are killed, and the child is reaped.
func TestStopKillsStubbornTree(t *testing.T) {
	g, stdin, out := start(t, "stubborn")
	grandchild := readPid(t, out)
	if !g.Alive() {
		t.Fatal("group not alive")
	}
	if err := g.Stop(context.Background(), stdin, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := g.Wait(); !errors.As(err, &ee) {
		t.Errorf("Wait = %v, want the killed child's exit error", err)
	}
	if g.Alive() {
		t.Error("group alive after Stop")
	}
	if testproc.Alive(grandchild) {
		t.Errorf("grandchild %d survived", grandchild)
	}
}

// TestStopCanceledKillsAtOnce: an ended context skips the grace periods.
func TestStopCanceledKillsAtOnce(t *testing.T) {
	g, _, out := start(t, "stubborn")
	readPid(t, out)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// An hour of grace would hang the test if the context were ignored.
	if err := g.Stop(ctx, nil, time.Hour); err != nil {
		t.Fatal(err)
	}
	if g.Alive() {
		t.Error("group alive after Stop")
	}
}

// TestWaitConcurrentWithStop: the owner's Wait and Stop share one reap.
func TestWaitConcurrentWithStop(t *testing.T) {
	g, _, _ := start(t, "sleep")
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() { errs[i] = g.Wait() })
	}
	if err := g.Stop(context.Background(), nil, time.Minute); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for _, err := range errs {
		if err == nil || err != errs[0] {
			t.Errorf("Wait results differ or report success: %v", errs)
		}
	}
	<-g.Done()
	// Signalling after the group is gone is harmless.
	if err := g.Kill(); err != nil {
		t.Error(err)
	}
	if sent, err := g.Terminate(); sent || err != nil {
		t.Errorf("Terminate after the group is gone = %v, %v", sent, err)
	}
	if err := g.Close(); err != nil {
		t.Error(err)
	}
}

// TestAdopt is the flow of a child something else starts and reaps.
func TestAdopt(t *testing.T) {
	cmd := child("sleep")
	Prepare(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g, err := Adopt(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if g.Pid() != cmd.Process.Pid {
		t.Errorf("Pid %d, want %d", g.Pid(), cmd.Process.Pid)
	}
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if err := g.Close(); err != nil {
		t.Error(err)
	}
	if _, err := Adopt(exec.Command("x")); err == nil {
		t.Error("Adopt accepted a command that was not started")
	}
}

func TestStartFailure(t *testing.T) {
	if _, err := Start(exec.Command("/nonexistent/acpd-test")); err == nil {
		t.Fatal("started a missing program")
	}
}
