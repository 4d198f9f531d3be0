//go:build darwin

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// sandboxExec is macOS's Seatbelt launcher; only the system copy is used.
const sandboxExec = "/usr/bin/sandbox-exec"

func probe() Status {
	st := Status{Backend: "seatbelt", Detail: "Seatbelt through " + sandboxExec}
	if _, err := os.Stat(sandboxExec); err != nil {
		st.Err = fmt.Errorf("%s missing: %v", sandboxExec, err)
		st.Detail = st.Err.Error()
		return st
	}
	if out, err := exec.Command(sandboxExec, "-p", "(version 1)(allow default)", "/usr/bin/true").CombinedOutput(); err != nil {
		st.Err = fmt.Errorf("sandbox-exec does not run: %v: %s", err, out)
		st.Detail = st.Err.Error()
	}
	return st
}

// wrap runs cmd through sandbox-exec with the rendered profile.
func wrap(pl plan, cmd *exec.Cmd) error {
	profile, params := seatbeltProfile(pl)
	args := []string{"sandbox-exec", "-p", profile}
	args = append(args, params...)
	args = append(args, "--", cmd.Path)
	args = append(args, cmd.Args[1:]...)
	cmd.Path = sandboxExec
	cmd.Args = args
	return nil
}

func apply(helperRequest) error { return errors.New("the sandbox helper is not used on macOS") }

func stage1(string, helperRequest) error { return ErrUnavailable }

// command implements Policy.Command with sandbox-exec (the working
// directory is not pinned on macOS).
func command(req helperRequest) (string, []string, error) {
	if req.Unconfined {
		return req.Path, req.Args, nil
	}
	cmd := &exec.Cmd{Path: req.Path, Args: req.Args}
	if err := wrap(req.Plan, cmd); err != nil {
		return "", nil, err
	}
	return cmd.Path, cmd.Args, nil
}
