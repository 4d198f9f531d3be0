package atomicfile

import (
	"io"
	"os"
)

// Open opens a file that [WriteFile] may replace at any moment, for
// reading. On Windows it shares delete access, so that a concurrent
// replacement is not refused merely because this reader has the file open;
// the reader keeps the old content, as on Unix. That is not yet a
// guarantee there: under Wine (and possibly on Windows) a rename over a
// file a reader holds open still fails with "Access denied", so
// [WriteFile] retries for a while and can then fail while readers keep the
// file busy (its callers report the error; nothing is half-written).
// Elsewhere it is os.Open.
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
