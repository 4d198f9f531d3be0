// Package files is acpd's file broker: it confines tool paths to a session's
// roots, reads and writes files for the agent (through the editor's ACP
// fs/* channel when the editor offers it, on disk otherwise), protects the
// agent against overwriting files that changed since it last read them, and
// watches the directories of the files it touched.
//
// # Confinement
//
// [Roots] resolves paths the way the kernel would (symlinks in the existing
// prefix are followed, ".." applies to the resolved location) and reports
// whether the real location lies inside one of the roots. The permission
// layer uses [Resolved.Inside] to decide whether a tool call needs the
// user's approval. The [Broker] then re-checks at the moment of the I/O:
//
//   - a real path inside a root is opened through [os.Root], so a symlink
//     swapped in after the check can never redirect the open (or the atomic
//     write's temp file and rename) outside that root;
//   - a path that is lexically under a root but whose real location is
//     outside (an in-root symlink pointing out) is refused with
//     [ErrSymlinkEscape]: after the user approved such an outside path, the
//     caller passes the real path ([Resolved.Path]) instead;
//   - any other path is outside the roots and is accessed directly; the
//     caller must have obtained permission for it. Callers should pass the
//     [Resolved.Path] they made the permission decision on, so the decision
//     and the I/O refer to the same location.
//
// # Disk writes
//
// [WriteFileAtomic] never leaves a half-written file behind: content goes to
// a temp file in the same directory which is fsynced and renamed over the
// target; the directory is fsynced afterwards. Temp files of crashed writers
// are swept by later writes in the same directory.
//
// # Protected places
//
// A permission decision is made on a path; the write must reach what that
// path named. The broker's writes (and [Broker.Remove], and
// [WriteFileConfined] for a client's fs/write_text_file) therefore open the
// parent directory one component at a time from the root without following
// a symbolic link, check that each directory opened is the one its name
// showed, and refuse with [ErrPathChanged] a path that reaches a protected
// directory ([BrokerOptions].ProtectedNames such as ".git", or
// [BrokerOptions].Protected) it does not name: by a link swapped in after
// the decision, or by a protected directory moved where a plain one was
// (compared by device and inode, as the protected directories were when the
// broker was made and as they are now). A path that names the protected
// place (the user approved it) is written. Writes through the editor are
// checked before and after the request: the editor opens the path itself,
// so a change during it is reported (and logged), not prevented.
//
// # Stale writes
//
// The broker remembers the SHA-256 of every file the agent read or wrote.
// [Broker.WriteFile] refuses (with a [*StaleError]) to overwrite an existing
// file the agent never read, or one whose current content differs from what
// the agent last saw; the model is told to read the file again. A watcher on
// the touched directories additionally catches changes that were reverted
// before the write (A→B→A) and feeds [Broker.ChangedSince].
//
// # Hooks
//
// A [Hook] ([Broker.SetHook]) is told of every change: the content about to
// be replaced before anything is written (an error aborts the change), the
// new content after. acpd's checkpoints are one. [Broker.Restore] puts an
// earlier content back without the stale check (the user chose it), and
// [Broker.Current] reads a file without making it the agent's view.
package files
