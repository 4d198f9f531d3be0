package procgroup

import (
	"testing"
)

func TestParseProcStat(t *testing.T) {
	state, pg, ok := parseProcStat([]byte("123 (weird ) (name) S 1 4567 4567 0 -1 4194560"))
	if !ok || state != 'S' || pg != 4567 {
		t.Errorf("parseProcStat = %c %d %v", state, pg, ok)
	}
	for _, bad := range []string{"", "123 (x", "1 (x) S", "1 (x) S 1 abc"} {
		if _, _, ok := parseProcStat([]byte(bad)); ok {
			t.Errorf("parseProcStat(%q) ok", bad)
		}
	}
}
