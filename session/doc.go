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
// A store is a directory (DefaultDir: $XDG_STATE_HOME/acpd, else
// ~/.local/state/acpd) holding:
//
//	index.json            id → Meta, replaced atomically
//	index.lock            flock guarding read-modify-write of index.json
//	sessions/<id>.jsonl   one append-only log per session
//	sessions/<id>.lock    flock held while the session is open; holder info
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
// # Crash safety
//
// Each record is written with a single write(2) on an O_APPEND descriptor
// and its newline is its last byte, so a record is committed exactly when
// its newline is in the file. Log.Sync (called by acpd at turn boundaries)
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
// index.json is {"v":1,"sessions":{"<id>":Meta,...}}. Every change is a
// read-modify-write under an exclusive flock on index.lock, written to a temp
// file in the same directory, fsynced, renamed over index.json, and the
// directory fsynced; so concurrent acpd processes never lose each other's
// entries and readers (which take no lock) always see a complete index. The
// index is authoritative for Title, UpdatedAt and Extra. Records and
// UpdatedAt are brought up to date by Sync, UpdateMeta and Close (so after a
// crash they may lag until the session is next opened and synced). A missing or damaged index.json (the damaged one is kept as
// index.json.corrupt) is rebuilt from the logs, recovering id, cwd,
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
package session
