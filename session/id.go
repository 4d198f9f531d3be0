package session

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
)

// ErrInvalidID is wrapped by every error about a malformed session id.
var ErrInvalidID = errors.New("session: invalid id")

// maxIDLen bounds session ids; they become file names and arrive from
// untrusted clients.
const maxIDLen = 128

// validateID reports whether id may name a session: 1..maxIDLen bytes from
// [A-Za-z0-9._-], not starting with '.', so it can never contain a path
// separator, NUL, "..", or name a hidden file.
func validateID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty", ErrInvalidID)
	}
	if len(id) > maxIDLen {
		return fmt.Errorf("%w: longer than %d bytes", ErrInvalidID, maxIDLen)
	}
	if id[0] == '.' {
		return fmt.Errorf("%w %q: starts with '.'", ErrInvalidID, id)
	}
	for i := 0; i < len(id); i++ {
		if !idByte(id[i]) {
			return fmt.Errorf("%w %q: byte %#x at offset %d not in [A-Za-z0-9._-]", ErrInvalidID, id, id[i], i)
		}
	}
	return nil
}

func idByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.'
}

// newID returns a fresh random session id: "s_" followed by 16 lowercase hex
// digits (64 random bits).
func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never returns an error
	return "s_" + hex.EncodeToString(b[:])
}
