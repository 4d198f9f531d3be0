//go:build !unix && !windows

package atomicfile

import "errors"

const dirSync = true

func busy(error) bool { return false }

func unsupportedSync(err error) bool { return errors.Is(err, errors.ErrUnsupported) }
