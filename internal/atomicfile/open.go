package atomicfile

import (
	"io"
	"os"
)

// Open opens a file that [WriteFile] may replace at any moment, for
// reading. On Windows it shares delete access (os.Open does not), so that
// a replacement with POSIX semantics goes ahead while this reader has the
// file open, and the reader keeps the old content, as on Unix; where a
// replacement has only the classic semantics, an open reader still blocks
// it (see the package documentation and [ReaderLock]). Elsewhere it is
// os.Open.
func Open(name string) (*os.File, error) { return openShared(name) }

// ReadFile is os.ReadFile through [Open].
func ReadFile(name string) ([]byte, error) {
	f, err := Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
