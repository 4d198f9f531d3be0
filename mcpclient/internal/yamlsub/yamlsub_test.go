package yamlsub

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// oracle reads src with go.yaml.in/yaml/v3 into the values Object
// promises: what acpd did before this package.
func oracle(src string) (map[string]any, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return map[string]any{}, nil
	}
	v, err := oracleValue(doc.Content[0], 0)
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("not a mapping")
	}
	return obj, nil
}

func oracleValue(n *yaml.Node, depth int) (any, error) {
	if depth > 200 {
		return nil, errors.New("nested too deeply")
	}
	switch n.Kind {
	case yaml.AliasNode:
		return oracleValue(n.Alias, depth+1)
	case yaml.MappingNode:
		obj := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, err := oracleValue(n.Content[i], depth+1)
			if err != nil {
				return nil, err
			}
			v, err := oracleValue(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			obj[fmt.Sprint(k)] = v
		}
		return obj, nil
	case yaml.SequenceNode:
		arr := []any{}
		for _, c := range n.Content {
			v, err := oracleValue(c, depth+1)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		return arr, nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool", "!!int", "!!float":
			var v any
			if err := n.Decode(&v); err != nil {
				return nil, err
			}
			switch x := v.(type) {
			case int:
				return float64(x), nil
			case int64:
				return float64(x), nil
			case uint64:
				return float64(x), nil
			}
			return v, nil
		default:
			return n.Value, nil
		}
	}
	return nil, fmt.Errorf("unsupported YAML node kind %d", n.Kind)
}

// same is reflect.DeepEqual with NaN equal to itself.
func same(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || math.IsNaN(x) && math.IsNaN(y))
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !same(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !same(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// accepted are frontmatters as skills write them; each must parse, to
// want (JSON; "=" when JSON cannot hold it: compared with yaml.v3 alone),
// and as yaml.v3 reads it. A want of "" is a rejection.
var accepted = []struct{ src, want string }{
	{"", `{}`},
	{"# only a comment\n\n", `{}`},
	{"name: pdf\ndescription: Fill PDF forms", `{"name":"pdf","description":"Fill PDF forms"}`},
	{"name: pdf\ndescription: \"PDFs: fill\"\n", `{"name":"pdf","description":"PDFs: fill"}`},
	{"a: 'it''s'\nb: \"tab\\there \\u00e9 \\x41\"", `{"a":"it's","b":"tab\there é A"}`},
	{"metadata:\n  version: 2.1.0\n  n: 3\n  when: 2026-01-02\nlist: [a, b]", `{"metadata":{"version":"2.1.0","n":3,"when":"2026-01-02"},"list":["a","b"]}`},
	{"allowed-tools:\n  - Read\n  - Bash(git:*)\n  - 'Write'\n", `{"allowed-tools":["Read","Bash(git:*)","Write"]}`},
	{"allowed-tools:\n- Read\n- Grep\nlicense: MIT", `{"allowed-tools":["Read","Grep"],"license":"MIT"}`},
	{"description: A long description\n  that wraps onto\n\n  more lines # and a comment\nx: 1", `{"description":"A long description that wraps onto\nmore lines","x":1}`},
	{"description: >\n  Folded text\n  on lines.\n\n  New paragraph.\n", `{"description":"Folded text on lines.\nNew paragraph.\n"}`},
	{"description: >-\n  Folded,\n    indented\n  back\n", `{"description":"Folded,\n  indented\nback"}`},
	{"script: |\n  echo a\n    echo b\n\n", `{"script":"echo a\n  echo b\n"}`},
	{"script: |+\n  x\n\n\ny: 2", `{"script":"x\n\n\n","y":2}`},
	{"script: |2\n    x\n  y\n", `{"script":"  x\ny\n"}`},
	{"script: |\n  last", `{"script":"last"}`},
	{"q: \"first\n  second\n\n  third \\\n  joined\"", `{"q":"first second\nthird joined"}`},
	{"nums: [1, -2, 0x10, 1_000, 1.5e3, .5, +3, 0o17, 0b101, 012]", `{"nums":[1,-2,16,1000,1500,0.5,3,15,5,10]}`},
	{"special: [.inf, -.Inf, .nan, ~, null, true, False, yes, no]", "="},
	{"flow: {a: 1, 'b c': [x, {d: e}], e: \"f, g\"}", `{"flow":{"a":1,"b c":["x",{"d":"e"}],"e":"f, g"}}`},
	{"items:\n  - name: a\n    value: 1\n  - name: b\n    nested:\n      - x\n      -\n        y: z\n  -\n  - - inner\n    - list", `{"items":[{"name":"a","value":1},{"name":"b","nested":["x",{"y":"z"}]},null,["inner","list"]]}`},
	{"list:\n  - {x: y, z: [1]}\n  - [a, 'b']", `{"list":[{"x":"y","z":[1]},["a","b"]]}`},
	{"  indented: top\n  second: 2", `{"indented":"top","second":2}`},
	{"url: http://example.com/a#frag\nhash: a#b\ncolon: a:b", `{"url":"http://example.com/a#frag","hash":"a#b","colon":"a:b"}`},
	{"empty:\nnext: ''\n\"quoted key\": v\nk: v # c", `{"empty":null,"next":"","quoted key":"v","k":"v"}`},
	{"unicode: héllo wörld ✓\nemoji: \"\\U0001F600\"", `{"unicode":"héllo wörld ✓","emoji":"😀"}`},
	{"a:\r\n  b: c\r\n", `{"a":{"b":"c"}}`},
	{"a: -x\nb: - \"not\"", ``},
}

func TestAccepted(t *testing.T) {
	for _, c := range accepted {
		got, err := Object(c.src)
		if c.want == "" {
			if err == nil {
				t.Errorf("%q: accepted, as %v", c.src, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		var want map[string]any
		if c.want != "=" {
			if err := json.Unmarshal([]byte(c.want), &want); err != nil {
				t.Fatal(err)
			}
		}
		if want != nil && !same(got, want) {
			t.Errorf("%q:\n got %#v\nwant %#v", c.src, got, want)
		}
		o, err := oracle(c.src)
		if err != nil {
			t.Errorf("%q: yaml.v3: %v", c.src, err)
		} else if !same(got, o) {
			t.Errorf("%q:\n    got %#v\nyaml.v3 %#v", c.src, got, o)
		}
	}
}

// TestFailsClosed: what is outside the subset is an error, though YAML
// reads it.
func TestFailsClosed(t *testing.T) {
	for _, src := range []string{
		"a: &x 1\nb: *x",
		"a: !!str 1",
		"? complex\n: key",
		"%YAML 1.2\n---\na: 1",
		"a: 1\n---\nb: 2",
		"a: [1,\n  2]",
		"a:\tb",
		"a: 1\na: 2",
		"1: one",
		"null: x",
		"<<: {a: 1}",
		"- a\n- b",
		"just a scalar",
		"a: b: c",
		"a: 'x' y",
		"a: \"\\q\"",
		"a: [b, ]",
		"a: |0\n x",
		"a: \x01",
		"a: \xff",
		"a: x\rb: y",
		"k: \u2028",
	} {
		if v, err := Object(src); err == nil {
			t.Errorf("%q: accepted, as %#v", src, v)
		}
	}
	deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
	if _, err := Object("a: " + deep); err == nil {
		t.Error("100 nested flow sequences accepted")
	}
	var b strings.Builder
	for i := range 100 {
		fmt.Fprintf(&b, "%sk:\n", strings.Repeat(" ", i))
	}
	if _, err := Object(b.String()); err == nil {
		t.Error("100 nested mappings accepted")
	}
}

// FuzzObject: whatever Object accepts, yaml.v3 reads alike.
func FuzzObject(f *testing.F) {
	for _, c := range accepted {
		f.Add(c.src)
	}
	for _, s := range []string{
		"a: |\n  x\n   y\n  z\n", "a: >\n x\n\n  y\n z", "a: \"x\\\n y\"", "- a: 1\n  b:\n  - c",
		"a:\n  - b\n  -   c: d\n      e: f", "k: 'multi\n  line\n\n  single'", "a: >+\n\n  x\n\n", "a: |-\n  \n  x\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		got, err := Object(src)
		if err != nil {
			return
		}
		want, werr := oracle(src)
		if werr != nil {
			t.Fatalf("accepted what yaml.v3 rejects (%v): %q as %#v", werr, src, got)
		}
		if !same(got, want) {
			t.Fatalf("%q:\n    got %#v\nyaml.v3 %#v", src, got, want)
		}
	})
}

// BenchmarkObjectLarge: inputs of 200,000 lines or items, each shape
// that once cost time quadratic in its size (a quoted scalar's line
// breaks were concatenated one by one: 8.8 s for 200,000).
func BenchmarkObjectLarge(b *testing.B) {
	for _, c := range []struct{ name, src string }{
		{"quoted-blank-lines", "a: \"x" + strings.Repeat("\n", 200000) + "  y\""},
		{"quoted-space-lines", "a: 'x" + strings.Repeat("\n   ", 200000) + "y'"},
		{"plain-blank-lines", "a: x" + strings.Repeat("\n", 200000) + "  y"},
		{"block-blank-lines", "a: |\n  x" + strings.Repeat("\n", 200000) + "  y"},
		{"flow-items", "a: [" + strings.Repeat("x, ", 200000) + "y]"},
		{"entries", "a:\n" + strings.Repeat("- x\n", 200000)},
		{"keys", strings.Repeat("k: v\n", 1) + "b:\n" + strings.Repeat("  - {x: y}\n", 100000)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.src)))
			for b.Loop() {
				if _, err := Object(c.src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
