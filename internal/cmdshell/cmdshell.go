// Package cmdshell chooses the shell run_command runs command lines with:
//
//   - bash (`bash -c LINE`) where it exists: on PATH on Unix; on Windows Git
//     for Windows' bash, found on PATH (never System32's bash.exe, which
//     starts WSL), next to a git.exe on PATH, or in Git's usual install
//     folders (%ProgramFiles%\Git, %LOCALAPPDATA%\Programs\Git);
//   - else on Unix /bin/sh (`sh -c LINE`);
//   - else on Windows PowerShell: pwsh, else powershell.exe, run as
//     `-NoProfile -NonInteractive -Command LINE`.
//
// Bash and sh lines are parsed by the permission rules into sub-commands; a
// PowerShell line is not, and is matched only as a whole line
// ([Shell.WholeLine]).
package cmdshell

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// Shell is a way of running one command line.
type Shell struct {
	// Path is the shell program.
	Path string
	// Name is "bash", "sh", "pwsh" or "powershell".
	Name string
	args []string // between the program and the line
}

// Argv returns the argv that runs line: Path, the shell's options, line.
func (s Shell) Argv(line string) []string {
	argv := append([]string{s.Path}, s.args...)
	return append(argv, line)
}

// WholeLine reports whether the shell's lines cannot be split into
// sub-commands by acpd (PowerShell), so that permission rules must match
// them as a whole.
func (s Shell) WholeLine() bool { return s.Name == "pwsh" || s.Name == "powershell" }

// String describes the shell for prompts and acpd doctor, e.g. "/bin/bash -c".
func (s Shell) String() string { return strings.Join(append([]string{s.Path}, s.args...), " ") }

// Find chooses the shell for this machine (see the package documentation).
func Find() Shell {
	return find(runtime.GOOS, exec.LookPath, isFile, os.Getenv)
}

var powerShellArgs = []string{"-NoProfile", "-NonInteractive", "-Command"}

// find is Find with the platform and the lookups as parameters.
func find(goos string, lookPath func(string) (string, error), isFile func(string) bool, getenv func(string) string) Shell {
	if goos != "windows" {
		if p, err := lookPath("bash"); err == nil {
			return Shell{Path: p, Name: "bash", args: []string{"-c"}}
		}
		return Shell{Path: "/bin/sh", Name: "sh", args: []string{"-c"}}
	}
	if p, ok := gitBash(lookPath, isFile, getenv); ok {
		return Shell{Path: p, Name: "bash", args: []string{"-c"}}
	}
	if p, err := lookPath("pwsh"); err == nil {
		return Shell{Path: p, Name: "pwsh", args: powerShellArgs}
	}
	p, err := lookPath("powershell.exe")
	if err != nil {
		// Present on every Windows since 7; the name still runs if PATH
		// is odd.
		p = `powershell.exe`
		if root := getenv("SystemRoot"); root != "" {
			p = join(root, `System32\WindowsPowerShell\v1.0\powershell.exe`)
		}
	}
	return Shell{Path: p, Name: "powershell", args: powerShellArgs}
}

// gitBash finds Git for Windows' bash.exe.
func gitBash(lookPath func(string) (string, error), isFile func(string) bool, getenv func(string) string) (string, bool) {
	if p, err := lookPath("bash.exe"); err == nil && !isSystemBash(p, getenv) {
		return p, true
	}
	var candidates []string
	if git, err := lookPath("git.exe"); err == nil {
		// <Git>\cmd\git.exe or <Git>\bin\git.exe; bash is in <Git>\bin.
		root := parent(parent(git))
		candidates = append(candidates, join(root, `bin\bash.exe`))
	}
	for _, v := range []string{"ProgramFiles", "ProgramW6432", "ProgramFiles(x86)"} {
		if d := getenv(v); d != "" {
			candidates = append(candidates, join(d, `Git\bin\bash.exe`))
		}
	}
	if d := getenv("LOCALAPPDATA"); d != "" {
		candidates = append(candidates, join(d, `Programs\Git\bin\bash.exe`))
	}
	for _, c := range candidates {
		if isFile(c) {
			return c, true
		}
	}
	return "", false
}

// isSystemBash reports whether p is Windows' own bash.exe (in System32 or
// the WindowsApps folder), which starts WSL instead of running the line on
// Windows.
func isSystemBash(p string, getenv func(string) string) bool {
	lp := strings.ToLower(strings.ReplaceAll(p, "/", `\`))
	if root := getenv("SystemRoot"); root != "" && strings.HasPrefix(lp, strings.ToLower(strings.TrimRight(root, `\`))+`\`) {
		return true
	}
	return strings.Contains(lp, `\windowsapps\`)
}

// join and parent handle Windows paths on any platform (find is tested
// everywhere).
func join(dir, rel string) string { return strings.TrimRight(dir, `\/`) + `\` + rel }

func parent(p string) string {
	p = strings.TrimRight(p, `\/`)
	if i := strings.LastIndexAny(p, `\/`); i >= 0 {
		return p[:i]
	}
	return p
}

func isFile(p string) bool {
	fi, err := os.Stat(filepath.FromSlash(p))
	return err == nil && fi.Mode().IsRegular()
}
