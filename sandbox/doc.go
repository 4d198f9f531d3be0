// Package sandbox runs commands confined by the operating system.
//
// A [Policy] is the one description of the confinement: reads anywhere
// except acpd's own configuration and state directories (keys, sessions)
// and the sessions' saved command outputs; writes only inside the session
// roots, the temp directory and configured extra paths, where the
// protected paths stay read-only: all of .git (with every git indirection
// found from it: a worktree's `gitdir:` file, its git and common
// directories, submodules' .git files, included configuration, a hooks
// path; and the .git of repositories nested in a root), and .acpd; no
// directory above a protected or hidden path can be renamed or removed;
// the network on or off. [Policy.Protects] says whether, and why, a
// command cannot write a path (a `git commit` needs to run outside the
// sandbox); [Policy.Explain] turns a refused write in a command's output
// into a note naming the protected path. [Policy.Wrap] rewrites an
// [os/exec.Cmd] so that it starts confined; programs that wrap commands must
// call [Init] first thing in main (and in TestMain), because on Linux the
// confinement is applied by this very binary re-executed as a helper.
//
// [Policy.Command] prepares a command for a starter that takes only a
// command line and environment (an editor's terminal):
// `PROGRAM sandbox --policy ID -- ARGV...`, legible where the editor shows
// it, with the policy in [PolicyEnv]. The helper takes the policy only if ID
// is its hash and it was prepared for exactly ARGV, removes the variable
// before the command starts, and refuses to run without it. The policy is
// not a capability: anyone who can start the helper with a policy of their
// choosing can start the command directly, and a sandboxed process that
// does so stays confined (Landlock domains, namespaces and dropped
// capabilities are inherited; the helper gains no privilege).
//
// # Linux
//
// The parent starts the helper (`/proc/self/exe __sandbox-exec PLAN`) in new
// user and mount namespaces, and a new network namespace when the network is
// off (SysProcAttr Cloneflags and uid/gid maps: the helper is root only
// inside its user namespace, mapped to the caller's uid). The helper
//
//   - makes its mounts private, covers /tmp with an empty tmpfs of its own
//     and binds back the session roots and writable trees below it (the
//     session's temp dir among them; when the temp dir is /tmp itself the
//     tmpfs serves as it), so neither other sessions' files nor sockets
//     there are reachable, whenever they were created; covers /dev/shm
//     with a tmpfs too;
//   - bind-mounts every directory above a
//     protected or hidden path that lies in a writable tree onto itself
//     (shallowest first, recursively): the kernel refuses to rename or
//     remove a mount point of the caller's namespace (EBUSY), so `mv .git
//     .git.old` or `mv ~/.config ~/.config.moved` fails and no directory
//     of the command's choosing can take a protected path's place; then
//     bind-mounts each existing protected path read-only over itself, and
//     covers each hidden directory with an empty read-only tmpfs of mode
//     000 (a hidden file with /dev/null), as bubblewrap does: Landlock can
//     only grant, so it cannot carve a read-only or invisible folder out of
//     a readable or writable tree; a side effect of the locked ancestors is
//     that renaming a file across one of them fails with EXDEV (mv copies
//     instead);
//   - sets GIT_OPTIONAL_LOCKS=0, so `git status` does not try to refresh
//     the read-only index;
//   - with the network on and below Landlock ABI 9, covers the Unix sockets
//     found in /run, /var/run and /var/tmp (and $SSH_AUTH_SOCK) when the
//     command starts with a read-only /dev/null (best effort: with the
//     network on, sockets made later or elsewhere are reachable);
//   - brings up the loopback interface of the new network namespace, so a
//     command can still talk to servers it starts itself, while nothing of
//     the host's network (TCP, UDP, or anything else) is reachable;
//   - re-enters its working directory through the new mounts and refuses to
//     run if that path now leads to another directory;
//   - unshares a PID namespace and starts the sandbox's init there
//     (`__sandbox-init`, pid 1), relaying signals to it and ending as the
//     command ended.
//
// The init
//
//   - mounts a /proc of the PID namespace (where the kernel allows it) and
//     makes itself non-dumpable;
//   - drops every capability, locked (secure bits), so the command cannot
//     undo the mounts;
//   - sets no_new_privs and enforces a Landlock ruleset (go-landlock's
//     newest rights, best effort down to ABI 3): read and execute
//     everywhere, write in the writable trees and the terminal devices
//     only; signals and abstract Unix sockets are scoped to the sandbox;
//     from ABI 9 connecting to pathname Unix sockets outside it is refused;
//   - installs a seccomp filter (see filterRules; errors, never kills):
//     no keyrings, io_uring, ptrace, bpf, perf events, mounts, setns, new
//     namespaces (clone3 answers ENOSYS), kexec or modules, no TIOCSTI or
//     TIOCLINUX, and with the network off below ABI 9 no Unix sockets but
//     stream socket pairs;
//   - starts the command from that thread, in a session of its own unless
//     its terminal is private to it (the starter made a new session with it
//     as controlling terminal), reaps orphans, and exits when the command
//     ended, which kills whatever the command left in the namespace
//     (daemons after setsid, double forks).
//
// Landlock's TCP rules are not used for the network: up to ABI 9 they miss
// UDP and Multipath TCP, which the namespace covers on every kernel.
//
// What it guarantees: a command cannot write outside the writable trees or
// into protected paths that exist when it starts, nor rename or remove
// them or any directory above them, cannot read the hidden directories
// (missing ones are created, empty and private, before it starts), cannot reach the network when it is off, and cannot read
// /proc/PID/environ of acpd or signal it, even when acpd runs as root
// (Landlock denies ptrace-mode access to processes outside the sandbox, and
// the command holds no capabilities in acpd's user namespace). Limits: a
// protected path that does not exist yet when the command starts (a .acpd
// directory in a project without one, a .git created by the command itself,
// `git init` included, or a .git file planted in a subdirectory, which git
// run later in that subdirectory reads) is not protected from that command
// (the caller warns when a root's own one appeared: [Policy.Unprotected]); the permission layer still asks
// for file tools writing there. Repositories nested deeper than three
// levels below a root, or beyond the first 20,000 directories searched, are
// not found. Git configuration that names programs by a bare command name
// (not a path) is not followed. The helper needs Landlock ABI 3 (Linux 6.2) and
// unprivileged user namespaces; without either, [Available] says why and
// Wrap fails with [ErrUnavailable].
//
// On top of that: a command cannot read files below /tmp other than its
// roots' and temp dir's, cannot, with the network off, connect to a
// service's path-named Unix socket (ssh and gpg agents, tmux, D-Bus,
// container engines) wherever and whenever it was made, cannot leave a
// process running after it ended (the PID namespace), and cannot use the
// session keyring or push input into a terminal (the filter). With the
// network on, host services' Unix sockets are reachable below Landlock
// ABI 9 (except those covered at start). /tmp and /dev/shm are per
// command: what one command leaves there, the next does not see (the
// session's temp dir, when it is not /tmp, is shared). 32-bit and x32
// programs cannot run (the filter refuses their system calls), and the
// filter exists for amd64 and arm64 only (elsewhere the sandbox is
// unavailable); it also needs unprivileged PID namespaces and seccomp.
//
// # macOS
//
// Wrap runs the command through /usr/bin/sandbox-exec with a generated
// Seatbelt profile (deny by default; paths passed as -D parameters, never
// spliced into the profile text). Seatbelt matches paths, so protected
// paths are denied whether or not they exist. The same plan is rendered:
// the locked ancestors get `file-write-unlink` denied (a rename or removal
// of them is refused), and no Unix socket of the host can be connected to
// (only the system's name resolver, with the network on). Processes outside the sandbox
// are neither signalled nor inspected (process-info is limited to the same
// sandbox); macOS has no /proc.
//
// # Elsewhere
//
// Windows and other systems have no backend: [Available] reports it and
// Wrap fails with [ErrUnavailable]. Callers must not run the command
// unconfined silently.
package sandbox
