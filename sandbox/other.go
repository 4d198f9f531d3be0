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

func apply(helperRequest) error { return ErrUnavailable }

func stage1(string, helperRequest) error { return ErrUnavailable }

func command(req helperRequest) (string, []string, error) {
	if req.Unconfined {
		return req.Path, req.Args, nil
	}
	return "", nil, ErrUnavailable
}
