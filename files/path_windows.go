//go:build windows

package files

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/windows"
)

// cleanInput brings a Windows tool path into the form Resolve compares:
// the `\\?\` prefix is removed (`\\?\C:\x` is C:\x, `\\?\UNC\srv\share` is
// \\srv\share), the drive letter is upper-cased, and paths whose meaning
// depends on state Resolve does not track are refused: drive-relative
// (C:x), rooted without a drive (\x), device paths (\\.\), and components
// ending in a dot or a space, which Windows silently strips.
func cleanInput(p string) (string, error) {
	p = strings.ReplaceAll(p, "/", `\`)
	switch {
	case strings.HasPrefix(p, `\\?\UNC\`):
		p = `\\` + p[len(`\\?\UNC\`):]
	case strings.HasPrefix(p, `\\?\`):
		p = p[len(`\\?\`):]
	case strings.HasPrefix(p, `\\.\`):
		return "", errors.New("device paths (\\\\.\\) are not files")
	}
	vol := filepath.VolumeName(p)
	switch {
	case vol != "" && len(vol) == 2 && (len(p) == 2 || p[2] != '\\'):
		return "", fmt.Errorf("%q is relative to drive %s's current directory: use an absolute path", p, vol)
	case vol == "" && strings.HasPrefix(p, `\`):
		return "", fmt.Errorf("%q has no drive: use an absolute path such as C:%s", p, p)
	}
	if len(vol) == 2 {
		p = strings.ToUpper(p[:1]) + p[1:]
	}
	for _, c := range splitComponents(p[len(vol):]) {
		if c != "." && c != ".." && (strings.HasSuffix(c, ".") || strings.HasSuffix(c, " ")) {
			return "", fmt.Errorf("path component %q ends in a dot or a space, which Windows ignores", c)
		}
	}
	return p, nil
}

// foldPrefix reports whether s starts with prefix ignoring case, as
// Windows volumes compare names (Unicode simple folding, which may take two
// names for one that the volume keeps apart: that errs towards "under a
// root", the side that refuses).
func foldPrefix(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// diskName returns the name of the existing entry name in dir as the
// filesystem spells it: volumes are usually case-insensitive and accept 8.3
// short names, and Resolve compares the real spelling with the roots'
// (which filepath.EvalSymlinks normalised the same way).
func diskName(dir, name string) string {
	if strings.ContainsAny(name, `*?`) {
		return name
	}
	p, err := windows.UTF16PtrFromString(filepath.Join(dir, name))
	if err != nil {
		return name
	}
	var data windows.Win32finddata
	h, err := windows.FindFirstFile(p, &data)
	if err != nil {
		return name
	}
	windows.FindClose(h)
	if n := windows.UTF16ToString(data.FileName[:]); n != "" {
		return n
	}
	return name
}

// reparseTarget resolves a reparse point that os.Lstat does not report as
// a symlink (a junction or mount point: ModeIrregular since Go 1.23) to its
// final path, so that it is followed like a symlink. ok is false for
// ordinary entries.
func reparseTarget(path string, fi fs.FileInfo) (target string, ok bool, err error) {
	if fi.Mode()&fs.ModeIrregular == 0 {
		return "", false, nil
	}
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return "", false, err
	}
	h, err := windows.CreateFile(p, 0, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE, nil, windows.OPEN_EXISTING, windows.FILE_FLAG_BACKUP_SEMANTICS, 0)
	if err != nil {
		return "", false, err
	}
	defer windows.CloseHandle(h)
	buf := make([]uint16, windows.MAX_PATH)
	for {
		n, err := windows.GetFinalPathNameByHandle(h, &buf[0], uint32(len(buf)), 0)
		if err != nil {
			return "", false, err
		}
		if int(n) < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]uint16, n)
	}
	target, err = cleanInput(syscall.UTF16ToString(buf))
	if err != nil {
		return "", false, err
	}
	return target, true, nil
}
