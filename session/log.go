package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"
)

// Log is an open, locked session log. It is returned by Store.Create and
// Store.Open; the caller owns it and must Close it, which releases the
// session lock (the lock also dies with the process). A Log is safe for
// concurrent use by multiple goroutines.
type Log struct {
	s    *Store
	id   string
	hdr  header
	lock *sessionLock

	mu     sync.Mutex // guards the fields below and orders appends
	f      *os.File
	seq    int64     // last sequence number written
	size   int64     // bytes of complete records in the file
	last   time.Time // time of the last record
	closed bool
	broken error // set when a failed append could not be undone
	lost   error // the first failed Append since the last Sync

	idxMu      sync.Mutex // serialises this Log's index updates
	indexedSeq int64      // seq as of the last index write
	meta       *Meta      // this session's entry as last written, nil until known
	released   bool       // the session lock has been released (under idxMu)
}

func newLog(s *Store, sl *sessionLock, f *os.File, hdr header, recs []Record, size int64) *Log {
	l := &Log{s: s, id: hdr.ID, hdr: hdr, lock: sl, f: f, size: size}
	if n := len(recs); n > 0 {
		l.seq = recs[n-1].Seq
		l.last = recs[n-1].Time
	}
	l.indexedSeq = l.seq
	return l
}

// ID returns the session id.
func (l *Log) ID() string { return l.id }

func (l *Log) errClosed() error {
	return fmt.Errorf("session %s: log %w", l.id, fs.ErrClosed)
}

// Append writes one record with the next sequence number and the current
// time, and returns it. data is encoded with encoding/json (HTML characters
// are not escaped); a json.RawMessage is validated and compacted, an empty
// one stands for null. kind must be 1..64 bytes of [A-Za-z0-9._/-]. The record
// reaches the file with a single write(2) on an O_APPEND descriptor, so a
// crash leaves at most a torn last line; it is durable after the next Sync
// or Close. After Close, Append fails with an error wrapping fs.ErrClosed.
//
// A data with a method WriteJSON(io.Writer) error (such as a model.Message)
// is written through it instead, in pieces of at most 64 KiB: it must write
// exactly one compact JSON value. Such a record is not held whole in memory
// (a long answer is not copied again to be logged): the Log gathers small
// writes in a 4 KiB buffer and passes larger ones on to the file (the
// payload's writer buffers its own), so such a record may take several
// write(2)s, and is still committed exactly when its newline is written,
// since only this Log appends to the file. The returned Record's Data is
// then nil.
//
// A failed Append (a bad kind, data that does not encode, a record over
// the size limit, a failed write) leaves no record in the file; besides
// returning the error, the Log remembers the first one until Sync reports
// it, so that a caller that syncs at turn boundaries learns of every
// record it lost.
func (l *Log) Append(kind string, data any) (Record, error) {
	rec, err := l.tryAppend(kind, data)
	if err != nil {
		l.mu.Lock()
		if l.lost == nil && !l.closed {
			l.lost = err
		}
		l.mu.Unlock()
	}
	return rec, err
}

func (l *Log) tryAppend(kind string, data any) (Record, error) {
	if err := validateKind(kind); err != nil {
		return Record{}, err
	}
	if w, ok := data.(jsonWriter); ok {
		return l.appendStream(kind, w)
	}
	payload, err := marshalData(data)
	if err != nil {
		return Record{}, fmt.Errorf("session %s: %s record: %w", l.id, kind, err)
	}
	if len(payload) > maxLineBytes-256 {
		return Record{}, fmt.Errorf("session %s: %s record of %d bytes exceeds the %d byte limit", l.id, kind, len(payload), maxLineBytes-256)
	}
	rec, err := l.append(kind, func(seq int64, t time.Time) (int64, error) {
		bp := lineBufs.Get().(*[]byte)
		line := appendRecord((*bp)[:0], seq, t, kind, payload)
		n, err := l.f.Write(line)
		if cap(line) <= 1<<20 { // do not pin a huge buffer
			*bp = line
			lineBufs.Put(bp)
		}
		return int64(n), err
	})
	if err != nil {
		return Record{}, err
	}
	rec.Data = payload
	return rec, nil
}

// append writes the record of the next sequence number and the current time
// with write, which returns the bytes it wrote to the file. A failed write
// is truncated away.
func (l *Log) append(kind string, write func(seq int64, t time.Time) (int64, error)) (Record, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return Record{}, l.errClosed()
	}
	if l.broken != nil {
		return Record{}, l.broken
	}
	t := now()
	seq := l.seq + 1
	n, err := write(seq, t)
	if err != nil {
		// Undo a partial write so that the next record starts on a
		// line of its own.
		if n > 0 {
			if terr := l.f.Truncate(l.size); terr != nil {
				l.broken = fmt.Errorf("session %s: log unusable after failed append (%v) and failed repair: %w", l.id, err, terr)
			}
		}
		return Record{}, fmt.Errorf("session %s: append: %w", l.id, err)
	}
	l.size += n
	l.seq = seq
	l.last = t
	return Record{Seq: seq, Time: t, Kind: kind}, nil
}

// jsonWriter is a payload that writes its own JSON encoding (see Append).
type jsonWriter interface {
	WriteJSON(w io.Writer) error
}

// streamChunk is the largest write of a streamed record.
const streamChunk = 64 << 10

// streamBuf is the size of the buffer a streamed record's small writes
// gather in. A payload that writes large pieces (model.Message, through a
// 32 KiB buffer of its own) has them passed on, not copied again: 50
// sessions ending their answers at once held 50 buffers of 64 KiB.
const streamBuf = 4 << 10

// streamBufs holds the buffers of streamed records, shared by all Logs so
// that an idle session pins none.
var streamBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, streamBuf)
	return &b
}}

// lineBufs holds the buffers records are encoded in, shared by all Logs
// so that an idle session pins none.
var lineBufs = sync.Pool{New: func() any { return new([]byte) }}

// appendStream appends a record whose payload w writes, through a
// streamChunk buffer (see Append).
func (l *Log) appendStream(kind string, w jsonWriter) (Record, error) {
	return l.append(kind, func(seq int64, t time.Time) (int64, error) {
		bp := streamBufs.Get().(*[]byte)
		defer streamBufs.Put(bp)
		rw := &recordWriter{f: l.f, buf: (*bp)[:0]}
		rw.buf = appendRecord(rw.buf, seq, t, kind, nil)
		rw.buf = rw.buf[:len(rw.buf)-2] // the payload goes where appendRecord put nothing
		err := w.WriteJSON(rw)
		if err == nil && rw.payload == 0 {
			err = errors.New("session: WriteJSON wrote no value")
		}
		if err == nil {
			rw.Write([]byte("}\n"))
			err = rw.flush()
		}
		return rw.written, err
	})
}

// recordWriter buffers one streamed record on its way to f, refusing a
// record longer than maxLineBytes.
type recordWriter struct {
	f       *os.File
	buf     []byte
	payload int64 // bytes received from WriteJSON (and the final "}\n")
	written int64 // bytes written to f
	err     error
}

func (r *recordWriter) Write(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	total := len(p)
	r.payload += int64(total)
	if r.written+int64(len(r.buf))+int64(len(p)) > maxLineBytes {
		r.err = fmt.Errorf("session: record exceeds the %d byte limit", maxLineBytes)
		return 0, r.err
	}
	if len(r.buf)+len(p) <= cap(r.buf) {
		r.buf = append(r.buf, p...)
		return total, nil
	}
	if err := r.flush(); err != nil {
		return 0, err
	}
	if len(p) < cap(r.buf) {
		r.buf = append(r.buf, p...)
		return total, nil
	}
	for len(p) > 0 {
		n, err := r.f.Write(p[:min(len(p), streamChunk)])
		r.written += int64(n)
		if err != nil {
			r.err = err
			return 0, err
		}
		p = p[n:]
	}
	return total, nil
}

func (r *recordWriter) flush() error {
	if r.err != nil || len(r.buf) == 0 {
		return r.err
	}
	n, err := r.f.Write(r.buf)
	r.written += int64(n)
	r.buf = r.buf[:0]
	r.err = err
	return err
}

// Sync makes all appended records durable (fsync) and then brings the
// session's index entry up to date (Records, UpdatedAt) if records were
// appended since the last index update. Callers call it at turn boundaries.
// It also fails with the first Append that failed since the last Sync, if
// any (once: that Append is then reported).
func (l *Log) Sync() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return l.errClosed()
	}
	err := l.f.Sync()
	lost := l.lost
	l.lost = nil
	l.mu.Unlock()
	if lost != nil {
		lost = fmt.Errorf("a record was not written: %w", lost)
	}
	if err != nil {
		return errors.Join(lost, fmt.Errorf("session %s: fsync: %w", l.id, err))
	}
	if lost != nil {
		l.idxMu.Lock()
		defer l.idxMu.Unlock()
		if l.released {
			return lost
		}
		return errors.Join(lost, l.updateIndexLocked(nil))
	}
	l.idxMu.Lock()
	defer l.idxMu.Unlock()
	if l.released {
		return nil // Close updated the index meanwhile
	}
	return l.updateIndexLocked(nil)
}

// UpdateMeta applies f to this session's index entry in one read-modify-write
// under the index lock, so concurrent updates by other processes are never
// lost. ID, CreatedAt and Records are owned by the store: changes f makes to
// them are ignored. If f leaves UpdatedAt unchanged it is set to now. f must
// not call methods of the Store or of this Log. Extra must remain valid JSON.
// After Close, UpdateMeta fails with an error wrapping fs.ErrClosed.
func (l *Log) UpdateMeta(f func(*Meta)) error {
	l.idxMu.Lock()
	defer l.idxMu.Unlock()
	l.mu.Lock()
	closed := l.closed
	l.mu.Unlock()
	if closed || l.released {
		return l.errClosed()
	}
	return l.updateIndexLocked(f)
}

// Close makes the log durable, updates the index entry, closes the file and
// releases the session lock. It is idempotent: later calls return nil.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	err := l.f.Sync()
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("session %s: close log: %w", l.id, err)
	}

	l.idxMu.Lock()
	defer l.idxMu.Unlock()
	if err == nil {
		err = l.updateIndexLocked(nil)
	}
	l.released = true
	if rerr := l.lock.release(false); err == nil && rerr != nil {
		err = fmt.Errorf("session %s: release lock: %w", l.id, rerr)
	}
	return err
}

// headerMeta is the index entry recovered from the log when the index has
// none.
func (l *Log) headerMeta(last time.Time) Meta {
	m := Meta{
		ID:                    l.id,
		Cwd:                   l.hdr.Cwd,
		AdditionalDirectories: slices.Clone(l.hdr.AdditionalDirectories),
		CreatedAt:             l.hdr.CreatedAt.UTC(),
		UpdatedAt:             l.hdr.CreatedAt.UTC(),
	}
	if last.After(m.UpdatedAt) {
		m.UpdatedAt = last
	}
	return m
}

// updateIndexLocked writes the session's index entry: Records and UpdatedAt
// from the log, then f when not nil. Without f it does nothing when the entry
// is already current, and appends a "sync" operation to the journal, which
// needs no read of the index. With f it needs the current entry: the one this
// Log last wrote, or (the first time after Open) the one in the index. While
// this Log holds the session lock nobody else changes the entry, so the cached
// copy stays current. The caller holds l.idxMu.
func (l *Log) updateIndexLocked(f func(*Meta)) error {
	return l.updateIndex(f, true)
}

// updateIndex is updateIndexLocked, durable or not.
func (l *Log) updateIndex(f func(*Meta), durable bool) error {
	l.mu.Lock()
	seq, last := l.seq, l.last
	l.mu.Unlock()
	if f == nil {
		if seq == l.indexedSeq {
			return nil
		}
		m := l.headerMeta(last)
		m.Records = int(seq)
		if err := l.s.appendJournal(durable, journalOp{Op: "sync", M: &m}); err != nil {
			return err
		}
		if l.meta != nil {
			l.meta.Records = m.Records
			if m.UpdatedAt.After(l.meta.UpdatedAt) {
				l.meta.UpdatedAt = m.UpdatedAt
			}
		}
		l.indexedSeq = seq
		return nil
	}
	if l.meta == nil {
		idx, err := l.s.readIndex()
		if err != nil {
			return err
		}
		m, ok := idx.Sessions[l.id]
		if !ok {
			m = l.headerMeta(last)
		}
		l.meta = &m
	}
	m := *l.meta
	before := m.UpdatedAt
	c := m
	c.AdditionalDirectories = slices.Clone(m.AdditionalDirectories)
	c.Extra = slices.Clone(m.Extra)
	f(&c)
	if len(c.Extra) > 0 && !json.Valid(c.Extra) {
		return errors.New("session: Meta.Extra is not valid JSON")
	}
	if c.UpdatedAt.Equal(before) {
		c.UpdatedAt = now()
	}
	c.ID, c.CreatedAt = m.ID, m.CreatedAt
	c.UpdatedAt = c.UpdatedAt.UTC().Round(0)
	c.Records = int(seq)
	if err := l.s.appendJournal(true, journalOp{Op: "put", M: &c}); err != nil {
		return err
	}
	l.meta = &c
	l.indexedSeq = seq
	return nil
}

// reconcile makes the index entry agree with the freshly loaded log without
// reading the index: a "sync" operation re-adds a missing entry and corrects
// a stale record count (appends made after the last Sync before a crash).
func (l *Log) reconcile() error {
	l.idxMu.Lock()
	defer l.idxMu.Unlock()
	// Not fsynced: it repeats what the log says, and the next Sync or
	// Close writes it durably again if records were appended.
	l.indexedSeq = -1 // differs from any seq: forces the index update
	return l.updateIndex(nil, false)
}
