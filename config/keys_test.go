package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

// indexSeeds are documents whose every corner the key index must read as
// go-toml does.
var indexSeeds = []string{
	"a = 1\n",
	"a.b . c = 'x' # c\n[t]\n\"q.k\" = 2\n'l.k' = 3\n",
	"[ a . \"b\\u0063\" ]\nk = \"\"\"\nx\"\"y\\\"\"\"\"\"\nj = '''it's''''\nd = 1979-05-27 07:32:00Z\n",
	"arr = [ # c\n  1, [2, [3]],\n  { x = 1, y = { z = \"}\" } },\n  \"]\", # c\n]\n",
	"t = {\n  a = 1, # c\n  b = [1,2],\n}\n",
	"[[p]]\nn = 1\n[[p.q]]\nm = 2\n[p.r]\nk = 3\n[[p]]\nn = 4\n",
	"a = \"\\\\\"\r\nb = \"#\" # \"\r\n",
	"\"\\u00e9\\t\" = 1\n\"\" = 2\n",
	"s = \"a\\\"b\"\nm = \"\"\"a\\\n  b\"\"\"\n",
}

// TestIndexPositions pins where the index puts keys, headers and array
// elements: a key at its first part (a quoted one at its quote), a header
// at its first key, an element at its first byte, escaped keys decoded.
func TestIndexPositions(t *testing.T) {
	for i, s := range indexSeeds { // each seed is TOML, so FuzzKeyIndex checks it
		var doc map[string]any
		if err := toml.Unmarshal([]byte(s), &doc); err != nil {
			t.Errorf("seed %d: %v", i, err)
		}
	}
	x, err := buildIndex([]byte(indexSeeds[2] + "[[r]]\n[[r]]\nv = [{ w = 1 }, [5]]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]pos{
		"a.bc":         {1, 3},
		"a.bc.k":       {2, 1},
		"a.bc.j":       {4, 1},
		"a.bc.d":       {5, 1},
		"r[0]":         {6, 3},
		"r[1]":         {7, 3},
		"r[1].v":       {8, 1},
		"r[1].v[0]":    {8, 6},
		"r[1].v[0].w":  {8, 8},
		"r[1].v[1][0]": {8, 18},
	} {
		if got, ok := x.at[key]; !ok || got != want {
			t.Errorf("%s at %v (found %v), want %v", key, got, ok, want)
		}
	}
	if x.has("r[1].v[1]") {
		t.Error("an array element that is an array has a position of its own")
	}
	y, err := buildIndex([]byte(indexSeeds[7]))
	if err != nil {
		t.Fatal(err)
	}
	if !y.has(pathOf("é\t")) || !y.has(pathOf("")) {
		t.Errorf("escaped and empty keys: %v", y.at)
	}
}

// FuzzKeyIndex checks the key index against go-toml's own reading: for
// every document go-toml decodes, the index is built, names only keys and
// elements go-toml found, and names every value go-toml found but tables
// and arrays, at a position inside the document.
func FuzzKeyIndex(f *testing.F) {
	for _, s := range indexSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var doc map[string]any
		if toml.Unmarshal(data, &doc) != nil {
			return
		}
		x, err := buildIndex(data)
		if err != nil {
			t.Fatalf("go-toml decoded the document, the index failed: %v\n%q", err, data)
		}
		all, leaves := map[string]bool{}, map[string]bool{}
		var walk func(path []seg, v any)
		walk = func(path []seg, v any) {
			all[segString(path)] = true
			switch v := v.(type) {
			case map[string]any:
				for k, e := range v {
					walk(append(path[:len(path):len(path)], seg{key: k, idx: -1}), e)
				}
			case []any:
				for i, e := range v {
					walk(append(path[:len(path):len(path)], seg{idx: i}), e)
				}
			default:
				leaves[segString(path)] = true
			}
		}
		walk(nil, doc)
		lines := strings.Count(string(data), "\n") + 1
		for _, e := range x.entries {
			if !all[e.str] {
				t.Errorf("the index names %s, which go-toml did not find\n%q", e.str, data)
			}
			if e.pos.line < 1 || e.pos.line > lines || e.pos.col < 1 {
				t.Errorf("%s at %v, outside the document", e.str, e.pos)
			}
		}
		for p := range leaves {
			if !x.has(p) {
				t.Errorf("go-toml found %s, the index did not\n%q", p, data)
			}
		}
		if t.Failed() {
			t.Log(fmt.Sprint(x.at))
		}
	})
}
