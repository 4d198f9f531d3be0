//go:build unix

package provider

import (
	"fmt"
	"os"
	"syscall"
)

// checkPrivate fails unless fi is accessible by its owner only and owned
// by the effective user.
func checkPrivate(fi os.FileInfo) error {
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("accessible by other users (mode %04o; run chmod 600 on it)", perm)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return fmt.Errorf("owned by uid %d, not by you (uid %d)", st.Uid, uid)
	}
	return nil
}
