package atomicfile

import (
	"io"
	"os"
)

// Open opens a file that [WriteFile] may replace at any moment, for
// reading. On Windows it shares delete access, so that a concurrent
// replacement never waits for (or fails because of) this reader: the reader
// keeps the old content, as on Unix. Elsewhere it is os.Open.
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
