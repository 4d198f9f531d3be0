//go:build !unix && !windows

package atomicfile

import (
	"errors"
	"os"
)

const dirSync = true

const readersBlockReplace = false

func rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

func busy(error) bool { return false }

func unsupportedSync(err error) bool { return errors.Is(err, errors.ErrUnsupported) }
