// Package atomicfile replaces files atomically: a reader, or a process that
// crashes at any moment, sees either the old or the new content of a file,
// never a mix. It is the one copy of this mechanism in acpd (remembered
// permissions, credentials, the session index and log headers); package fs
// builds its os.Root-confined variant on [SyncRoot] and [RetryRename].
//
// The shape follows Tailscale's atomicfile.WriteFile: a temp file in the same
// directory, write, fsync, set the mode, rename over the target, fsync the
// directory.
//
// What a reader holding the target open does to a replacement:
//   - Unix: nothing; the rename replaces the name and the reader keeps the
//     old content.
//   - Windows: the rename uses POSIX semantics (FILE_RENAME_POSIX_SEMANTICS,
//     NTFS on Windows 10 1709 and later), which replace a file that readers
//     hold open as long as they share delete access, as [Open] does; the
//     reader keeps the old content. Where the volume or the system lacks
//     them (FAT, many network shares, older Windows, Wine 8) the classic
//     rename is used, which fails with "Access denied" while any handle to
//     the target is open, sharing or not. Either way a reader that does not
//     share delete access (os.Open, most editors, virus scanners, indexers)
//     makes the rename fail too. [WriteFile] retries such failures for up
//     to two seconds and then returns the error: nothing is half-written,
//     the old content stays. Readers of acpd's own files never cause that
//     failure: writers replace them under an exclusive [filelock.Lock] and
//     readers take [ReaderLock] on the same lock file, which on Windows
//     waits for a replacement in progress and holds the next one off until
//     the reader is done.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"acpd/internal/filelock"
)

// WriteFile writes data to filename atomically with permission bits perm
// (set exactly, without the umask; on Windows only the read-only bit means
// anything). The temp file ".<base>.<random>.tmp" lives in filename's
// directory and is removed on failure; a crash may leave it behind.
//
// An existing filename that is not a regular file (after following
// symlinks) is refused. A symlink itself is replaced by a regular file, as
// with Tailscale's WriteFile; parent directories are not created.
//
// Concurrent writers of the same file race and the last rename wins; callers
// needing read-modify-write serialise with a lock (see internal/filelock).
func WriteFile(filename string, data []byte, perm os.FileMode) (err error) {
	fi, err := os.Stat(filename)
	if err == nil && !fi.Mode().IsRegular() {
		return &fs.PathError{Op: "write", Path: filename, Err: errors.New("not a regular file")}
	}
	dir, base := filepath.Split(filename)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = Rename(tmp, filename); err != nil {
		return err
	}
	return SyncDir(dir)
}

// Rename is os.Rename, retried as described at [RetryRename]. On Windows a
// rename within one directory replaces the target with POSIX semantics
// where the volume has them (see the package documentation).
func Rename(oldpath, newpath string) error {
	return RetryRename(func() error { return rename(oldpath, newpath) })
}

// renameRetry bounds how long a rename is retried while the target is busy.
const renameRetry = 2 * time.Second

// RetryRename runs rename, and on Windows runs it again for up to two
// seconds (with growing pauses) while it fails because the target is open
// elsewhere (see the package documentation); the error it then returns
// says so. Elsewhere it runs rename once.
func RetryRename(rename func() error) error {
	err := rename()
	if err == nil || !busy(err) {
		return err
	}
	deadline := time.Now().Add(renameRetry)
	for pause := time.Millisecond; time.Now().Before(deadline); pause = min(2*pause, 100*time.Millisecond) {
		time.Sleep(pause)
		if err = rename(); err == nil || !busy(err) {
			return err
		}
	}
	return fmt.Errorf("%w (another program has the file open; Windows cannot replace it until that program closes it)", err)
}

// ReadersBlockReplace reports whether a reader holding a file open can make
// its replacement fail: true on Windows (see the package documentation).
const ReadersBlockReplace = readersBlockReplace

// ReaderLock takes, where [ReadersBlockReplace], a shared lock on lock, the
// lock file under which the writers of the file to be read hold an
// exclusive [filelock.Lock] around their [WriteFile] (waiting at most
// timeout for one in progress); elsewhere it does nothing, because readers
// need no lock there. Call the returned function once the file is closed.
func ReaderLock(lock string, timeout time.Duration) (unlock func(), err error) {
	if !ReadersBlockReplace {
		return func() {}, nil
	}
	return filelock.RLock(lock, timeout)
}

// SyncDir fsyncs directory dir so that a rename or removal in it is
// durable. It does nothing on Windows (directories cannot be fsynced there)
// and tolerates filesystems that refuse to fsync directories.
func SyncDir(dir string) error {
	if !dirSync {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return syncClose(d)
}

// SyncRoot is [SyncDir] for the directory an [os.Root] is opened on.
func SyncRoot(r *os.Root) error {
	if !dirSync {
		return nil
	}
	d, err := r.Open(".")
	if err != nil {
		return err
	}
	return syncClose(d)
}

func syncClose(d *os.File) error {
	err := d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil && !unsupportedSync(err) {
		return fmt.Errorf("fsync %s: %w", d.Name(), err)
	}
	return nil
}
