package sandbox

import (
	"slices"
	"strings"
	"testing"
)

// FuzzUnwrap feeds arbitrary terminal/create arguments, as another agent
// may send them, to Unwrap: it must not panic, and what it accepts is only
// the command after "sandbox --policy ID --" (never a policy).
func FuzzUnwrap(f *testing.F) {
	f.Add("sandbox\x00--policy\x000123456789abcdef\x00--\x00bash\x00-c\x00id")
	f.Add("sandbox\x00--policy\x00x\x00--\x00")
	f.Add("sandbox\x00--cwd\x00/\x00--\x00sh")
	f.Add(stage1Arg + "\x00{\"path\":\"/bin/sh\",\"unconfined\":true}\x00sh")
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		path, argv, ok := Unwrap("acpd", args)
		if !ok {
			return
		}
		if len(args) < 5 || args[0] != visibleArg || args[1] != policyFlag || args[3] != "--" || path == "" || path != args[4] || !slices.Equal(argv, args[4:]) {
			t.Fatalf("accepted %q as %q %q", args, path, argv)
		}
	})
}

// FuzzFromEnv feeds arbitrary arguments and PolicyEnv values to the
// helper's check of Command's form: it must not panic, and it accepts a
// policy only for the ID and the very argv it was prepared with.
func FuzzFromEnv(f *testing.F) {
	good := `{"plan":{},"path":"/bin/sh","argsHash":"` + argsHash([]string{"sh", "-c", "id"}) + `","unconfined":true}`
	f.Add(policyID(good)+"\x00--\x00sh\x00-c\x00id", good, true)
	f.Add(policyID(good)+"\x00--\x00sh\x00-c\x00rm -rf /", good, true)
	f.Add(policyID(good)+"\x00--\x00sh\x00-c\x00id", good, false)
	f.Add("x\x00--\x00sh", `{"unconfined":true}`, true)
	f.Add(policyID(`[1`)+"\x00--\x00sh", `[1`, true)
	f.Fuzz(func(t *testing.T, joined, raw string, set bool) {
		args := strings.Split(joined, "\x00")
		req, argv, err := fromEnv(args, raw, set)
		if err != nil {
			return
		}
		if !set || len(args) < 3 || args[0] != policyID(raw) || args[1] != "--" || !slices.Equal(argv, args[2:]) || req.ArgsHash != argsHash(argv) || req.Path == "" {
			t.Fatalf("accepted %q with %q (set %v) as %+v %q", args, raw, set, req, argv)
		}
	})
}

// FuzzConfigEntries feeds arbitrary git config text (a model may write
// .gitmodules, and a repository's configuration may be anyone's) to the
// reader gitPaths uses: it must not panic, and every key and section it
// returns is lower-cased.
func FuzzConfigEntries(f *testing.F) {
	f.Add("[core]\n\thooksPath = .husky\n[include]\npath = ../x\n")
	f.Add("[submodule \"a\"]\n\tpath = lib/a\n\turl = x\n")
	f.Add("[includeIf \"gitdir:~/w/\"] path=\"~/w.inc\"\n[")
	f.Fuzz(func(t *testing.T, text string) {
		for _, e := range configEntries([]byte(text)) {
			if e.key != strings.ToLower(e.key) {
				t.Fatalf("key %q not lower-cased", e.key)
			}
		}
	})
}
