package files

import (
	"io/fs"
	"os"
	"path/filepath"
)

// OpenRegular opens path for reading without blocking and returns it only
// if it is a regular file; anything else (a directory, FIFO, socket or
// device) is closed again and refused with an error wrapping
// ErrNotRegular. Opening a FIFO normally waits for a writer, which would
// hang a tool (and a turn) forever; with O_NONBLOCK it returns at once.
func OpenRegular(path string) (*os.File, error) {
	f, err := openReadOnly(path)
	return regular(f, err, path)
}

// OpenRegularIn is [OpenRegular] for name, a slash path in root.
func OpenRegularIn(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(filepath.FromSlash(name), os.O_RDONLY|openNonblock, 0)
	return regular(f, err, name)
}

// OpenEntryIn opens name, a slash path in root, for reading without
// blocking, and returns it only if it is a regular file or a directory:
// anything else (a FIFO, socket or device) is closed again and refused with
// an error wrapping ErrNotRegular. It is what walks and listings open, so
// that a FIFO put where a directory or file was cannot hang them.
func OpenEntryIn(root *os.Root, name string) (*os.File, error) {
	f, err := root.OpenFile(filepath.FromSlash(name), os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() && !fi.IsDir() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrNotRegular}
	}
	return f, nil
}

// regular checks the result (f, err) of opening path: it returns f when it
// is a regular file, and otherwise closes it and returns the error.
func regular(f *os.File, err error, path string) (*os.File, error) {
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return f, nil
}
