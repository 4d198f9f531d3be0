//go:build unix

package procgroup

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestTerminate: SIGTERM reaches a child that does not ignore it.
func TestTerminate(t *testing.T) {
	g, err := Start(child("sleep"))
	if err != nil {
		t.Fatal(err)
	}
	if sent, err := g.Terminate(); !sent || err != nil {
		t.Fatalf("Terminate = %v, %v", sent, err)
	}
	err = g.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("Wait = %v, want death by SIGTERM", err)
	}
	if ps := g.ProcessState(); ps == nil || ps.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("ProcessState = %v", ps)
	}
	_ = g.Close()
}

// TestPrepareKeepsSetsid: a new session is a new group; Setpgid is not
// added (setpgid after setsid fails).
func TestPrepareKeepsSetsid(t *testing.T) {
	cmd := child("sleep")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	g, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if cmd.SysProcAttr.Setpgid {
		t.Error("Setpgid added to Setsid")
	}
	if pgid, err := syscall.Getpgid(g.Pid()); err != nil || pgid != g.Pid() {
		t.Errorf("child's group %d, %v; want %d", pgid, err, g.Pid())
	}
	if err := g.Stop(context.Background(), nil, time.Minute); err != nil {
		t.Fatal(err)
	}
}

// TestAdoptProcess: a process started outside os/exec (here by
// os.StartProcess) is waited for through its *os.Process.
func TestAdoptProcess(t *testing.T) {
	cmd := child("sleep")
	p, err := os.StartProcess(os.Args[0], cmd.Args, &os.ProcAttr{
		Env:   cmd.Env,
		Files: []*os.File{nil, nil, os.Stderr},
		Sys:   &syscall.SysProcAttr{Setpgid: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	g, err := AdoptProcess(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Stop(context.Background(), nil, time.Minute); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := g.Wait(); !errors.As(err, &ee) {
		t.Errorf("Wait = %v, want an *exec.ExitError", err)
	}
}
