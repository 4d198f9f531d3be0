//go:build darwin

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
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

// wrap runs cmd through sandbox-exec with the rendered profile, with
// GIT_OPTIONAL_LOCKS=0 (git status does not try to refresh the read-only
// index).
func wrap(pl plan, cmd *exec.Cmd) error {
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "GIT_OPTIONAL_LOCKS=0")
	profile, params := seatbeltProfile(pl)
	args := []string{"sandbox-exec", "-p", profile}
	args = append(args, params...)
	args = append(args, "--", cmd.Path)
	args = append(args, cmd.Args[1:]...)
	cmd.Path = sandboxExec
	cmd.Args = args
	return nil
}

func apply(helperRequest, []string) error {
	return errors.New("the sandbox helper is not used on macOS")
}

// stage1 runs the command of Command's form through sandbox-exec (the
// working directory is not pinned on macOS).
func stage1(req helperRequest, args []string) error {
	cmd := &exec.Cmd{Path: req.Path, Args: args}
	if !req.Unconfined {
		if err := wrap(req.Plan, cmd); err != nil {
			return err
		}
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	err := syscall.Exec(cmd.Path, cmd.Args, env)
	return fmt.Errorf("exec %s: %w", cmd.Path, err)
}

// command implements Policy.Command: this program, which runs the command
// through sandbox-exec (the profile stays out of the command line an
// editor shows).
func command(req helperRequest, args []string) (string, []string, []string, error) {
	if req.Unconfined {
		return req.Path, args, nil, nil
	}
	self, err := os.Executable()
	if err != nil {
		return "", nil, nil, fmt.Errorf("sandbox: %w", err)
	}
	return visible(self, req, args)
}
