package session

import (
	"encoding/base64"
	"errors"
	"strconv"
)

// ErrBadCursor is the error of a cursor [Page] did not make.
var ErrBadCursor = errors.New("invalid cursor")

// Page returns the page of metas (a List's result) that cursor starts, at
// most n entries, and the cursor of the next page: "" starts at the first
// entry, and next is "" after the last page. Cursors are opaque offsets.
func Page(metas []Meta, cursor string, n int) (page []Meta, next string, err error) {
	start := 0
	if cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(cursor)
		if err != nil || len(b) < 3 || string(b[:2]) != "o:" {
			return nil, "", ErrBadCursor
		}
		start, err = strconv.Atoi(string(b[2:]))
		if err != nil || start < 0 || start > len(metas) {
			return nil, "", ErrBadCursor
		}
	}
	end := min(start+n, len(metas))
	if end < len(metas) {
		next = base64.RawURLEncoding.EncodeToString([]byte("o:" + strconv.Itoa(end)))
	}
	return metas[start:end], next, nil
}
