// Package terminal runs commands on local pseudo-terminals with the semantics
// of ACP's client-side terminal methods (terminal/create, terminal/output,
// terminal/wait_for_exit, terminal/kill, terminal/release).
//
// acpd uses it in two places: its run_command tool falls back to it when the
// editor offers no terminal, and the headless `acpd run` serves an agent's
// terminal/* requests with it. The [Terminal] interface is shared with the
// editor-backed implementation in the agent package, so both must follow the
// contracts documented here.
//
// # Processes
//
// [Manager.Start] executes Spec.Command directly (execve, no shell) with
// Spec.Args. The command name is resolved against the PATH of the child's
// environment; relative PATH entries (including the empty entry) are skipped,
// and if the environment has no PATH, [DefaultPath] is searched. A command
// containing a slash is used as given (relative to Spec.Cwd).
//
// Every command runs in a new session (setsid) whose controlling terminal is
// the PTY, so its session, its process group and its PID coincide. Kill
// signals the whole process group: SIGTERM (followed by SIGCONT so stopped
// members see it), then SIGKILL once ManagerOptions.KillGrace has passed and
// some member is still alive. Zombies do not count as alive. The direct child
// is always reaped by the Manager. Descendants that leave the group on their
// own (setsid(1), setpgid, daemons, shells with job control) escape the group
// kill; when acpd exits, closing the PTY master makes the kernel hang up the
// terminal, which sends SIGHUP to the foreground process group only. No
// parent-death signal is used (Go's Pdeathsig is tied to an OS thread).
//
// The process group ID is the PID of the direct child. After the child has
// been reaped, the kernel does not hand that PID out again while any member
// of the group remains, so signalling the group later reaches either the
// leftover members or nobody (ESRCH).
//
// # Terminal
//
// The PTY is 120 columns by 40 rows. Output post-processing (ONLCR) is
// switched off, so output carries the line endings the program wrote ("\n",
// not "\r\n"). Standard output and standard error are the PTY; standard
// input is the PTY too unless Spec.StdinEOF connects it to /dev/null. There
// is no API to type into the terminal, so programs that wait for keyboard
// input (pagers such as less, prompts) wait until killed; callers that run
// such programs should set PAGER=cat, GIT_PAGER=cat and similar in Spec.Env.
//
// Only file descriptors 0, 1 and 2 reach the child. Go's os and net
// packages open everything close-on-exec; descriptors the daemon inherited
// without that flag (from the editor that started it, say) are marked
// close-on-exec by every Start (close_range(2) with CLOSE_RANGE_CLOEXEC, or
// a walk of /proc/self/fd on older kernels). This is a process-wide change;
// it does not disturb other users of os/exec, which clear the flag on the
// descriptors they pass on purpose.
//
// # Environment
//
// The child's environment is Spec.BaseEnv (or FilterEnv(os.Environ(), nil)
// when BaseEnv is nil), then Spec.Env, whose entries replace variables of the
// same name. Spec.Env is not filtered: the caller asked for those values.
// If the result has no TERM, TERM=xterm-256color is added, because the
// program really is talking to a terminal and many programs misbehave
// without TERM. See [FilterEnv] for the secret names that are removed.
//
// # Output
//
// Output is retained as raw bytes, at most the tail of OutputByteLimit bytes
// (see [Spec]). When bytes had to be dropped from the beginning, the retained
// output starts at a UTF-8 character boundary and Output.Truncated is true.
// While the command still runs, an incomplete UTF-8 sequence at the very end
// is held back until its remaining bytes arrive. Output is otherwise not
// altered; [RenderText] turns it into what a person would see, which is the
// form the model should read ([Renderer] does the same over a stream).
// Spec.Tee receives the whole output as it is read, for callers that need
// more than the tail (its head, a copy on disk).
//
// WaitForExit returns once the direct child has exited and its output has
// been drained: reading continues until the PTY reports end of output (EIO
// on Linux once no process holds the terminal open), or, when some
// descendant still holds the terminal open, until no output arrives for
// 100ms (at most 1s in total). Output printed by the child before it exited
// is never lost. Lingering descendants keep running until Kill, Release or
// [Manager.Close] signals the group.
package terminal
