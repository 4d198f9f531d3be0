//go:build !linux && !darwin

package sandbox

import (
	"fmt"
	"os/exec"
	"runtime"
)

func probe() Status {
	err := fmt.Errorf("no sandbox backend for %s", runtime.GOOS)
	return Status{Detail: err.Error(), Err: err}
}

func wrap(plan, *exec.Cmd) error { return ErrUnavailable }

func apply(helperRequest, []string) error { return ErrUnavailable }

func stage1(helperRequest, []string) error { return ErrUnavailable }

func command(req helperRequest, args []string) (string, []string, []string, error) {
	if req.Unconfined {
		return req.Path, args, nil, nil
	}
	return "", nil, nil, ErrUnavailable
}
