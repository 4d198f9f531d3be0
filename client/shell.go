package client

import "strings"

// shellChars are the characters that make a terminal/create command without
// arguments a shell line rather than a program name.
const shellChars = " \t\n|&;<>()$`\\\"'*?[]#~=%{}"

// commandLine returns the program and arguments for terminal/create. ACP
// names a program and its arguments, but agents such as claude-code-acp send
// a whole shell line as the command with no arguments (Zed runs it through a
// shell); such a command, one that cannot be a program's name, runs as
// `sh -c LINE`. Anything else is executed directly. The agent already asked
// permission for the line it sends.
func commandLine(command string, args []string) (string, []string) {
	if len(args) == 0 && strings.ContainsAny(command, shellChars) && strings.TrimSpace(command) != "" {
		return "/bin/sh", []string{"-c", command}
	}
	return command, args
}
