package files

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

const (
	// DefaultLineLimit is the number of lines [Broker.ReadLines] returns
	// when called with limit <= 0.
	DefaultLineLimit = 2000
	// MaxLineLength is the longest line, in bytes, [Broker.ReadLines]
	// returns; longer lines are cut at a rune boundary and end with a
	// marker stating their full length.
	MaxLineLength = 2000
)

// Lines is a window of a text file.
type Lines struct {
	// Lines holds the lines of the window without their line terminator
	// ("\n" or "\r\n"). Lines longer than MaxLineLength are cut (see
	// MaxLineLength).
	Lines []string
	// FirstLine is the 1-based number of Lines[0] (the requested offset,
	// even when it lies beyond the end of the file).
	FirstLine int
	// TotalLines is the number of lines in the file (a final line without
	// a terminator counts; an empty file has 0), or -1 when the channel
	// cannot tell.
	TotalLines int
	// More reports whether the file has lines after the window.
	More bool
}

// scanBufSize is the bufio buffer size used to stream files; memory use of
// a windowed read is about scanBufSize + limit*MaxLineLength.
const scanBufSize = 64 << 10

// scanLines streams r and returns the window of limit lines starting at the
// 1-based line offset. It reads r to the end (callers hash the stream).
func scanLines(r io.Reader, offset, limit int) (Lines, error) {
	out := Lines{FirstLine: offset}
	last := offset + limit - 1 // last line number in the window
	if last < offset {         // overflow
		last = int(^uint(0) >> 1)
	}
	br := bufio.NewReaderSize(r, scanBufSize)
	var keep []byte
	n := 0
	for {
		lineNo := n + 1
		inWindow := lineNo >= offset && lineNo <= last
		keep = keep[:0]
		length, ok, err := readLine(br, &keep, inWindow)
		if ok {
			n = lineNo
			if inWindow {
				out.Lines = append(out.Lines, renderLine(keep, length))
			} else if lineNo > last {
				out.More = true
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Lines{}, err
		}
	}
	out.TotalLines = n
	return out, nil
}

// readLine consumes one line including its "\n". It returns the number of
// bytes of the line without the "\n" and whether anything was consumed
// (false only at the end of input). When keep is set, up to
// MaxLineLength+utf8.UTFMax bytes of the line are appended to *buf. At the
// end of input the error is io.EOF.
func readLine(br *bufio.Reader, buf *[]byte, keep bool) (length int, ok bool, err error) {
	total := 0
	for {
		chunk, err := br.ReadSlice('\n')
		total += len(chunk)
		if keep {
			if room := MaxLineLength + utf8.UTFMax - len(*buf); room > 0 {
				*buf = append(*buf, chunk[:min(room, len(chunk))]...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil { // ends in "\n"
			return total - 1, true, nil
		}
		return total, total > 0, err
	}
}

// renderLine turns the kept prefix b of a line of length bytes (terminator
// excluded) into the returned string: "\n" and "\r" terminators stripped,
// over-long lines cut at a rune boundary with a marker.
func renderLine(b []byte, length int) string {
	if len(b) > length {
		b = b[:length] // drop the "\n"
	}
	if len(b) == length { // the whole line was kept
		b = bytes.TrimSuffix(b, []byte("\r"))
		if len(b) <= MaxLineLength {
			return string(b)
		}
		length = len(b)
	}
	cut := MaxLineLength
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… [line truncated: %d bytes]", b[:cut], length)
}

// ctxReader fails reads once ctx is done, so that streaming a huge file can
// be cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
