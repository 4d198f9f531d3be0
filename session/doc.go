// Package session is acpd's crash-safe, multi-process session store.
//
// It knows nothing about ACP or models: a session is an append-only log of
// records whose payloads are opaque JSON, plus an index entry (Meta). acpd
// uses record kinds "update" (a session/update payload as shown to the
// client), "message" (a model-facing transcript message) and "meta"
// (metadata changes such as title, mode or config values), but kinds are the
// caller's choice.
//
// # Layout
//
// A store is a directory its caller names (acpd's is its state directory,
// $XDG_STATE_HOME/acpd, else ~/.local/state/acpd) holding:
//
//	index.json            id → Meta snapshot, replaced atomically
//	index.jsonl           append-only journal of index changes since then
//	index.lock            flock guarding the index
//	sessions/<id>.jsonl   one append-only log per session
//	sessions/<id>.lock    flock held while the session is open; holder info
//	data/<id>/            the caller's own files for the session (DataDir),
//	                      removed with it
//
// Directories are created with mode 0700, files with mode 0600. Session ids
// are 1..128 bytes of [A-Za-z0-9._-] not starting with '.', so an id taken
// from a client can never escape the directory.
//
// # Log format (version 1)
//
// A log is JSON Lines. The first line is the header, written together with
// the file (temp file + rename) so a log never lacks it:
//
//	{"v":1,"kind":"header","id":"s_0123456789abcdef","cwd":"/src/x","additionalDirectories":["/src/y"],"createdAt":"2025-01-02T03:04:05.123Z"}
//
// Every further line is one record, with exactly these keys in this order:
//
//	{"seq":1,"t":"2025-01-02T03:04:06.5Z","kind":"update","data":{...}}
//
// seq starts at 1 and increases by one per record; t is the append time in
// UTC, RFC 3339 with nanoseconds; kind is 1..64 bytes of [A-Za-z0-9._/-];
// data is any compact JSON value. A reader rejects a header whose "v" is not
// 1.
//
// A record of kind "rewind" ([Log.Rewind]) drops the records between the
// sequence number it names and itself; [Live] applies the rewinds of a
// log, which stays append-only.
//
// # Crash safety
//
// Each record is written with a single write(2) on an O_APPEND descriptor
// (a record whose payload writes itself, such as a long assistant message,
// with several writes of at most 64 KiB, so that it is never held whole in
// memory; only the Log holding the session lock appends, so nothing comes
// between them) and its newline is its last byte, so a record is committed
// exactly when its newline is in the file. A failed append is truncated away,
// and remembered until the next Log.Sync reports it. Log.Sync (called by acpd at turn boundaries)
// and Log.Close fsync. After a kill -9 at any moment:
//
//   - every complete record (newline-terminated line that parses) loads;
//   - a torn last line (no trailing newline, or a final line that does not
//     parse) is ignored; Store.Open truncates the file back to the last
//     complete record (and fsyncs) before any further append;
//   - anything else, such as an unparseable line followed by more lines or a
//     gap in sequence numbers, is damage no crash can cause: loading fails
//     with an error matching ErrCorrupt that names the file and line.
//
// Records written since the last Sync survive a process crash (they are in
// the page cache) but not necessarily a power loss.
//
// # Index
//
// The index is a snapshot plus an append-only journal, both guarded by an
// exclusive flock on index.lock (taken by readers too, so nobody sees a
// compaction half done):
//
//	index.json   {"v":1,"sessions":{"<id>":Meta,...}}, replaced atomically
//	index.jsonl  one operation per line, applied in order on top of it:
//	             {"op":"put","m":Meta}   the entry becomes m
//	             {"op":"sync","m":Meta}  Records and a later UpdatedAt of m
//	                                     update the entry (m becomes it when
//	                                     there is none)
//	             {"op":"del","id":"<id>"}
//
// Why not one metadata file per session: listing would open every file
// (100k sessions, 100k opens) and a creation would still cost an atomic
// replace (two fsyncs and a rename). Why not the whole index rewritten per
// change (the version-1 design): creating a session in a store of 10k
// sessions read, parsed, encoded and fsynced 3 MB twice. With the journal:
//
//   - Store.Open only checks that index.json exists; it reads nothing.
//   - A change (Create, Sync, UpdateMeta, Close, Delete) is one small
//     write(2) of one line on an O_APPEND descriptor plus one fsync (the
//     first line of a new journal also fsyncs the directory). Writers read
//     only the first bytes of index.json, to refuse a newer version. A line
//     torn by a crash is skipped by readers, and the next writer starts its
//     line on a fresh line.
//   - A Log keeps the entry it last wrote (nobody else changes it while the
//     session is locked), so UpdateMeta reads the index at most once per
//     Log, and Sync and Close need no read at all.
//   - Readers (List, Get, Delete of a session without a log) read the
//     snapshot and the journal. A reader that finds the journal larger than
//     a quarter of the snapshot (and 64 KiB) writes a new snapshot, having
//     paid for the read already; a writer does the same when the journal
//     passes twice the snapshot (and 256 KiB), so the journal's size stays
//     proportional to the snapshot and compaction costs O(1) amortised per
//     change. Compaction replaces index.json atomically and then empties the
//     journal; a crash between the two is harmless because replaying any
//     suffix of operations onto a snapshot that already includes them
//     changes nothing.
//
// The index is authoritative for Title, UpdatedAt and Extra. Records and
// UpdatedAt are brought up to date by Sync, UpdateMeta, Close and Open (so
// after a crash they may lag until the session is next opened). A missing or
// damaged index.json (the damaged one is kept as index.json.corrupt) is
// rebuilt from the logs, discarding the journal, recovering id, cwd,
// additional directories and creation time from each header, UpdatedAt from
// the file's modification time and Records from its line count; titles and
// Extra are lost. Open also re-adds an entry missing from the index.
//
// # Session locks
//
// A session opened by Create or Store.Open is locked until Log.Close: the
// Log holds a non-blocking exclusive flock on sessions/<id>.lock and has
// written its holder (pid, hostname, argv[0], start time) into that file.
// The kernel drops a flock when its process dies, so a crash never leaves a
// session locked. A second Open or a Delete of a locked session, from
// another process or from this one (tracked in-process as well), fails with
// *LockedError naming the holder. Store.Records and Store.Get read without
// locking.
//
// Store.Holder tells listings whether a session is open elsewhere without
// ever taking the session lock, so that a probe cannot make an Open fail:
// a Log also holds an exclusive lock on its open log file (the liveness
// lock, taken after the session lock and its holder record, dropped before
// them), and a probe tries a shared lock on the log only, releasing it at
// once. An opener that finds a probe's shared lock retries for a bounded
// time; should it still not get the liveness lock, the session is open all
// the same and merely reported as not open. An empty holder record (cleared
// on release) answers "not open" without touching the log.
package session
