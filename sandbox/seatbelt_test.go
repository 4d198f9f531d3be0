package sandbox

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestSeatbeltProfileGolden(t *testing.T) {
	pl := plan{
		writable: []string{"/Users/me/proj", "/private/tmp"},
		readOnly: []string{"/Users/me/proj/.git", "/Users/me/proj/.acpd"},
		hidden:   []string{"/Users/me/.config/acpd", "/Users/me/.local/state/acpd"},
	}
	pl.locked = pl.ancestors()
	if !slices.Equal(pl.locked, []string{"/Users/me/proj"}) {
		t.Fatalf("locked %q", pl.locked)
	}
	profile, params := seatbeltProfile(pl)
	got := profile + "\n# params\n"
	for _, p := range params {
		got += p + "\n"
	}
	got += "\n# network on, nothing writable or hidden\n"
	p2, _ := seatbeltProfile(plan{network: true})
	got += p2
	// The session root at the home folder: acpd's own directories and
	// the project's .git keep every ancestor from being renamed.
	home := plan{
		writable: []string{"/Users/me"},
		readOnly: []string{"/Users/me/src/proj/.git", "/Users/me/.acpd"},
		hidden:   []string{"/Users/me/.config/acpd", "/Users/me/.local/state/acpd"},
	}
	home.locked = home.ancestors()
	p3, params3 := seatbeltProfile(home)
	got += "\n# root at home\n" + p3 + "\n# params\n" + strings.Join(params3, "\n") + "\n"
	golden := filepath.Join("testdata", "seatbelt.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if got != string(want) {
		t.Errorf("profile changed:\n%s\nwant:\n%s", got, want)
	}
}

func TestSeatbeltPathsAreParameters(t *testing.T) {
	evil := `/tmp/x") (allow default) ("`
	profile, params := seatbeltProfile(plan{writable: []string{evil}, hidden: []string{evil}})
	if strings.Contains(profile, "allow default") {
		t.Fatalf("a path reached the profile text:\n%s", profile)
	}
	if len(params) != 2 || params[0] != "-DHIDDEN_0="+evil {
		t.Fatalf("params %q", params)
	}
}
