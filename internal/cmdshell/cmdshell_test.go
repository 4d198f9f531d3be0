package cmdshell

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// machine is a fake set of programs and files.
type machine struct {
	path  map[string]string // LookPath results
	files []string
	env   map[string]string
}

func (m machine) find(goos string) Shell {
	look := func(name string) (string, error) {
		if p, ok := m.path[name]; ok {
			return p, nil
		}
		return "", exec.ErrNotFound
	}
	isFile := func(p string) bool {
		return slices.ContainsFunc(m.files, func(f string) bool { return strings.EqualFold(f, p) })
	}
	return find(goos, look, isFile, func(k string) string { return m.env[k] })
}

func TestFindUnix(t *testing.T) {
	s := machine{path: map[string]string{"bash": "/usr/bin/bash"}}.find("linux")
	if got := s.Argv("ls | wc -l"); !slices.Equal(got, []string{"/usr/bin/bash", "-c", "ls | wc -l"}) || s.WholeLine() {
		t.Errorf("bash: %q whole=%v", got, s.WholeLine())
	}
	s = machine{}.find("darwin")
	if got := s.Argv("true"); !slices.Equal(got, []string{"/bin/sh", "-c", "true"}) || s.Name != "sh" || s.WholeLine() {
		t.Errorf("sh: %q", got)
	}
}

func TestFindWindows(t *testing.T) {
	env := map[string]string{`SystemRoot`: `C:\Windows`, `ProgramFiles`: `C:\Program Files`, `LOCALAPPDATA`: `C:\Users\u\AppData\Local`}
	for _, tc := range []struct {
		name string
		m    machine
		want string
	}{
		{"git bash on PATH", machine{path: map[string]string{"bash.exe": `D:\Git\usr\bin\bash.exe`}}, `D:\Git\usr\bin\bash.exe`},
		{"WSL's bash is skipped", machine{path: map[string]string{"bash.exe": `C:\WINDOWS\system32\bash.exe`}, files: []string{`C:\Program Files\Git\bin\bash.exe`}}, `C:\Program Files\Git\bin\bash.exe`},
		{"next to git.exe", machine{path: map[string]string{"git.exe": `E:\tools\Git\cmd\git.exe`}, files: []string{`E:\tools\Git\bin\bash.exe`}}, `E:\tools\Git\bin\bash.exe`},
		{"per-user install", machine{files: []string{`C:\Users\u\AppData\Local\Programs\Git\bin\bash.exe`}}, `C:\Users\u\AppData\Local\Programs\Git\bin\bash.exe`},
	} {
		tc.m.env = env
		s := tc.m.find("windows")
		if s.Path != tc.want || s.Name != "bash" || s.WholeLine() || !slices.Equal(s.Argv("x"), []string{tc.want, "-c", "x"}) {
			t.Errorf("%s: %+v", tc.name, s)
		}
	}
	s := machine{env: env, path: map[string]string{"pwsh": `C:\Program Files\PowerShell\7\pwsh.exe`, "bash.exe": `C:\Windows\System32\bash.exe`}}.find("windows")
	if !s.WholeLine() || !slices.Equal(s.Argv("Get-ChildItem"), []string{`C:\Program Files\PowerShell\7\pwsh.exe`, "-NoProfile", "-NonInteractive", "-Command", "Get-ChildItem"}) {
		t.Errorf("pwsh: %+v", s)
	}
	s = machine{env: env}.find("windows")
	if s.Name != "powershell" || !s.WholeLine() || s.Path != `C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe` {
		t.Errorf("powershell: %+v", s)
	}
	if got := s.String(); !strings.HasSuffix(got, "powershell.exe -NoProfile -NonInteractive -Command") {
		t.Errorf("String = %q", got)
	}
}

func TestFindHere(t *testing.T) {
	s := Find()
	if s.Path == "" || len(s.Argv("x")) < 3 {
		t.Fatalf("Find = %+v", s)
	}
}
