// Command schemagen generates, from the JSON Schemas of the Agent Client
// Protocol (ACP) v1 shipped in the npm package @agentclientprotocol/sdk
// (schema.json, the stable protocol, and schema.unstable.json beside it, a
// superset with the draft additions):
//
//   - acp/types_gen.go, the Go types of every definition of the stable
//     schema, as the unstable schema defines them: a field or union variant
//     only the unstable schema has is there too, its documentation saying
//     UNSTABLE (the stable schema's descriptions are kept for the rest),
//     and decoded as absent when it does not decode where the schema says
//     x-deserialize-default-on-error;
//   - acp/unstable_gen.go, the types of the definitions only the unstable
//     schema has (Usage, SubagentUpdate, PlanUpdate, ForkSessionRequest, …)
//     and the constants of their methods;
//   - acp/methods_gen.go, the typed surface of the stable schema's methods
//     (x-method, x-side): the Agent and Client interfaces of the required
//     methods, one small interface per optional method (see
//     optionalMethods), the dispatchers AgentHandler and ClientHandler, and
//     the typed callers on AgentConn and ClientConn. The unstable methods
//     have types but no dispatch.
//
// Usage (go generate runs it from the acp directory):
//
//	go run ./internal/schemagen [-schema file] [-out file|-] [-unstable file|-] [-methods file|-]
//
// Paths default to locations relative to the module root (the nearest
// directory above the working directory holding go.mod), so the program
// produces the same output from any working directory inside the module.
//
// Mapping rules, in short:
//   - string / integer definitions become named types (type SessionID string);
//   - anyOf/oneOf of constants become a named type plus one constant per value;
//     an "other" branch makes the enum open (any value decodes);
//   - object definitions become structs; required properties are checked on
//     decode and required arrays/maps encode as [] / {} when nil;
//   - unions of object variants become a struct with one pointer field per
//     variant (named after the discriminator value or the variant title),
//     plus Other json.RawMessage when the schema has an open "other" branch;
//   - unions of scalar/array variants become a struct with one field per
//     JSON type;
//   - RequestId becomes the RequestID template below;
//   - routing envelopes (x-docs-ignore) and the untyped Ext* payloads are
//     skipped: the connection layer handles envelopes.
//
// Validation-only keywords (minimum, minLength, format other than integer
// widths, not, unevaluatedProperties, default) are not expressed in Go.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"go/scanner"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

const (
	defaultSchema   = "testdata/node_modules/@agentclientprotocol/sdk/schema/v1/schema.json"
	unstableName    = "schema.unstable.json" // beside the stable schema
	defaultOut      = "acp/types_gen.go"
	defaultUnstable = "acp/unstable_gen.go"
	defaultMethods  = "acp/methods_gen.go"
	pkgName         = "acp"
)

func main() {
	schemaPath := flag.String("schema", "", "stable schema file (default <module root>/"+defaultSchema+"); the unstable schema is "+unstableName+" beside it")
	out := flag.String("out", "", `output file, "-" for stdout (default <module root>/`+defaultOut+")")
	unstable := flag.String("unstable", "", `output file of the unstable-only definitions, "-" for stdout (default <module root>/`+defaultUnstable+")")
	methods := flag.String("methods", "", `methods output file, "-" for stdout (default <module root>/`+defaultMethods+")")
	flag.Parse()
	if err := run(*schemaPath, *out, *unstable, *methods); err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}

func run(schemaPath, out, unstable, methods string) error {
	if schemaPath == "" || out == "" || unstable == "" || methods == "" {
		root, err := moduleRoot()
		if err != nil {
			return err
		}
		def := func(p *string, rel string) {
			if *p == "" {
				*p = filepath.Join(root, filepath.FromSlash(rel))
			}
		}
		def(&schemaPath, defaultSchema)
		def(&out, defaultOut)
		def(&unstable, defaultUnstable)
		def(&methods, defaultMethods)
	}
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		return fmt.Errorf("%w (install it with: cd testdata && npm ci)", err)
	}
	udata, err := os.ReadFile(filepath.Join(filepath.Dir(schemaPath), unstableName))
	if err != nil {
		return fmt.Errorf("%w (install it with: cd testdata && npm ci)", err)
	}
	pkg, version, err := sdkVersion(schemaPath)
	if err != nil {
		return err
	}
	stableSource := fmt.Sprintf("%s@%s schema/v1/schema.json", pkg, version)
	unstableSource := fmt.Sprintf("%s@%s schema/v1/%s", pkg, version, unstableName)
	src, usrc, err := GenerateUnstable(udata, data, stableSource+" and the additions of "+unstableName, unstableSource+" (the definitions schema.json lacks)")
	if err != nil {
		return err
	}
	// Methods come from the stable schema: the unstable methods have types
	// but no dispatch until acpd serves them.
	msrc, err := GenerateMethods(data, stableSource)
	if err != nil {
		return err
	}
	if err := write(out, src); err != nil {
		return err
	}
	if err := write(unstable, usrc); err != nil {
		return err
	}
	return write(methods, msrc)
}

func write(path string, src []byte) error {
	if path == "-" {
		_, err := os.Stdout.Write(src)
		return err
	}
	return os.WriteFile(path, src, 0o644)
}

// moduleRoot walks up from the working directory to the directory holding go.mod.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// sdkVersion reads name and version of the npm package that ships the schema
// (schema/v1/schema.json lives two directories below package.json).
func sdkVersion(schemaPath string) (name, version string, err error) {
	data, err := os.ReadFile(filepath.Join(filepath.Dir(schemaPath), "..", "..", "package.json"))
	if err != nil {
		return "", "", fmt.Errorf("reading the SDK package.json: %w", err)
	}
	var pkg struct{ Name, Version string }
	if err := json.Unmarshal(data, &pkg); err != nil || pkg.Name == "" || pkg.Version == "" {
		return "", "", fmt.Errorf("package.json next to the schema has no name/version (%v)", err)
	}
	return pkg.Name, pkg.Version, nil
}

// schema is the subset of JSON Schema the ACP schema uses.
type schema struct {
	Ref                  string             `json:"$ref"`
	Type                 typeList           `json:"type"`
	Title                string             `json:"title"`
	Description          string             `json:"description"`
	Const                json.RawMessage    `json:"const"`
	Format               string             `json:"format"`
	Properties           map[string]*schema `json:"properties"`
	Required             []string           `json:"required"`
	Items                *schema            `json:"items"`
	AdditionalProperties json.RawMessage    `json:"additionalProperties"`
	AnyOf                []*schema          `json:"anyOf"`
	OneOf                []*schema          `json:"oneOf"`
	AllOf                []*schema          `json:"allOf"`
	XMethod              string             `json:"x-method"`
	XSide                string             `json:"x-side"`
	XDocsIgnore          bool               `json:"x-docs-ignore"`
	XDefaultOnNull       bool               `json:"x-deserialize-default-on-null"`
	XDefaultOnError      bool               `json:"x-deserialize-default-on-error"`

	// unstable: a property only the unstable schema defines (markUnstable).
	unstable bool
}

// typeList is the "type" keyword: a string or an array of strings.
type typeList []string

func (t *typeList) UnmarshalJSON(data []byte) error {
	var one string
	if json.Unmarshal(data, &one) == nil {
		*t = typeList{one}
		return nil
	}
	return json.Unmarshal(data, (*[]string)(t))
}

func (t typeList) has(s string) bool { return slices.Contains(t, s) }

// main returns the non-null type, or "" for an untyped schema.
func (t typeList) main() string {
	for _, s := range t {
		if s != "null" {
			return s
		}
	}
	return ""
}

func (s *schema) variants() []*schema { return append(slices.Clip(s.AnyOf), s.OneOf...) }

// refName returns the $defs key s refers to ($ref or a single-element allOf).
func (s *schema) refName() string {
	if s.Ref != "" {
		return strings.TrimPrefix(s.Ref, "#/$defs/")
	}
	if len(s.AllOf) == 1 && s.AllOf[0].Ref != "" {
		return strings.TrimPrefix(s.AllOf[0].Ref, "#/$defs/")
	}
	return ""
}

func (s *schema) nullable() bool {
	if s.Type.has("null") {
		return true
	}
	return slices.ContainsFunc(s.AnyOf, func(v *schema) bool { return v.Type.has("null") && len(v.Type) == 1 })
}

// nonNull strips the {"type":"null"} branch of anyOf [X, null].
func (s *schema) nonNull() *schema {
	if len(s.AnyOf) == 2 && s.AnyOf[1].Type.has("null") && len(s.AnyOf[1].Type) == 1 {
		return s.AnyOf[0]
	}
	return s
}

// constProp returns the property of an object variant pinned to a string
// constant (its discriminator) and that constant.
func (s *schema) constProp() (prop, value string) {
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		if p := s.Properties[name]; p.Const != nil && json.Unmarshal(p.Const, &value) == nil {
			return name, value
		}
	}
	return "", ""
}

func isOther(v *schema) bool { return strings.EqualFold(v.Title, "other") }

type kind int

const (
	kindSkip kind = iota
	kindString
	kindInteger
	kindEnum
	kindStruct
	kindUnion
	kindValueUnion
	kindRequestID
)

// initialisms maps a capitalised word to its Go spelling.
var initialisms = map[string]string{"Id": "ID", "Uri": "URI", "Url": "URL", "Json": "JSON", "Http": "HTTP"}

// variantNames overrides variant field names derived from titles.
var variantNames = map[string]string{"TextResourceContents": "Text", "BlobResourceContents": "Blob"}

// goName converts a schema or JSON name (camelCase, PascalCase, snake_case,
// kebab-case, words, method paths) into an exported Go identifier.
func goName(s string) string {
	var b strings.Builder
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		rs := []rune(w)
		start := 0
		for i := 1; i <= len(rs); i++ {
			if i == len(rs) || (unicode.IsUpper(rs[i]) && unicode.IsLower(rs[i-1])) {
				word := []rune(string(rs[start:i]))
				word[0] = unicode.ToUpper(word[0])
				if repl, ok := initialisms[string(word)]; ok {
					word = []rune(repl)
				}
				b.WriteString(string(word))
				start = i
			}
		}
	}
	return b.String()
}

// field is one Go struct field generated from a schema property.
type field struct {
	Name, JSON, Type, Tag, Doc string
	Required, NullOK           bool   // required property; null accepted for it
	Lenient                    bool   // an unstable addition decoded as absent when it does not decode
	NonNil                     string // non-empty: literal to substitute for a nil required slice/map
}

// variant is one branch of an object union.
type variant struct {
	Field, Type, Tag, Title, Doc string
	Keys                         []string // unique required keys, for structural selection
}

type gen struct {
	defs    map[string]*schema
	kinds   map[string]kind
	out     *bytes.Buffer // the file being written: main, or extra for unstable-only definitions
	pending []string      // synthetic struct names in generation order
	synth   map[string]*schema
	methods map[string][]string // method const name -> def names
	values  map[string]string   // method const name -> method
	skipped []string
	// pendingOut is the file of each pending inline struct (its union's).
	pendingOut map[string]*bytes.Buffer
}

// Generate returns the gofmt'd Go source for all definitions of the schema.
func Generate(data []byte, source string) ([]byte, error) {
	src, _, err := generate(data, nil, source, "")
	return src, err
}

// GenerateUnstable returns the gofmt'd Go source for the unstable schema
// as a superset of the stable one: main holds every definition the stable
// schema has (with the fields and variants only the unstable schema adds,
// marked UNSTABLE), extra the definitions only the unstable schema has.
func GenerateUnstable(unstable, stable []byte, source, extraSource string) (main, extra []byte, err error) {
	if stable == nil {
		return nil, nil, errors.New("no stable schema")
	}
	return generate(unstable, stable, source, extraSource)
}

func generate(data, stableData []byte, source, extraSource string) ([]byte, []byte, error) {
	var root, stable struct {
		Defs map[string]*schema `json:"$defs"`
	}
	if err := json.Unmarshal(data, &root); err != nil {
		return nil, nil, fmt.Errorf("parsing schema: %w", err)
	}
	if stableData != nil {
		if err := json.Unmarshal(stableData, &stable); err != nil {
			return nil, nil, fmt.Errorf("parsing the stable schema: %w", err)
		}
		markUnstable(root.Defs, stable.Defs)
	}
	main, extra := new(bytes.Buffer), new(bytes.Buffer)
	g := &gen{defs: root.Defs, kinds: map[string]kind{}, synth: map[string]*schema{},
		methods: map[string][]string{}, values: map[string]string{}, out: main, pendingOut: map[string]*bytes.Buffer{}}
	// fileOf is where a definition goes: extra when only the unstable
	// schema has it.
	fileOf := func(n string) *bytes.Buffer {
		if stableData != nil && stable.Defs[n] == nil {
			return extra
		}
		return main
	}
	names := slices.Sorted(maps.Keys(root.Defs))
	var errs []error
	for _, n := range names {
		k, err := classify(n, root.Defs[n])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n, err))
		}
		g.kinds[n] = k
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	for _, n := range names {
		g.out = fileOf(n)
		if err := g.def(n, root.Defs[n]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n, err))
		}
	}
	for _, n := range g.pending { // inline variant structs, beside their union
		g.out = g.pendingOut[n]
		if slices.ContainsFunc(names, func(d string) bool { return goName(d) == n }) {
			errs = append(errs, fmt.Errorf("inline variant struct %s collides with a definition", n))
			continue
		}
		g.doc(n+" is the payload of an inline union variant that has no definition of its own.", g.synth[n].Description)
		if err := g.object(n, g.synth[n]); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", n, err))
		}
	}
	if len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	g.methodConsts(func(goDef string) *bytes.Buffer {
		for _, n := range names {
			if goName(n) == goDef {
				return fileOf(n)
			}
		}
		return main
	})
	g.out = main
	fmt.Fprintf(g.out, "// Definitions skipped by schemagen (routing envelopes and untyped extension payloads,\n// handled by the connection layer): %s.\n", strings.Join(g.skipped, ", "))
	g.out.WriteString(helpers)
	msrc, err := finish(source, main.Bytes())
	if err != nil || stableData == nil {
		return msrc, nil, err
	}
	esrc, err := finish(extraSource, extra.Bytes())
	return msrc, esrc, err
}

// finish prepends the file header and the imports the body uses, and
// formats the file.
func finish(source string, body []byte) ([]byte, error) {
	var out bytes.Buffer
	fmt.Fprintf(&out, "// Code generated by schemagen from %s; DO NOT EDIT.\n\npackage %s\n\n", source, pkgName)
	var imports []string
	for _, pkg := range []string{"bytes", "encoding/json", "fmt", "strconv", "strings", "sync"} {
		if bytes.Contains(body, []byte(pkg[strings.LastIndex(pkg, "/")+1:]+".")) {
			imports = append(imports, strconv.Quote(pkg))
		}
	}
	if len(imports) > 0 {
		fmt.Fprintf(&out, "import (\n%s\n)\n\n", strings.Join(imports, "\n"))
	}
	out.Write(body)
	src, err := format.Source(out.Bytes())
	var list scanner.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		line := strings.Split(out.String(), "\n")[list[0].Pos.Line-1]
		return nil, fmt.Errorf("formatting generated code: %w\n%s", err, line)
	} else if err != nil {
		return nil, fmt.Errorf("formatting generated code: %w", err)
	}
	return src, nil
}

// unstableMark leads the documentation of what only the unstable schema
// defines, where the schema's own description does not say so.
const unstableMark = "**UNSTABLE**: defined only by the unstable schema (schema.unstable.json)."

// markUnstable makes sure the description of every definition, property
// and union variant the stable schema lacks says UNSTABLE, and gives what
// both define the stable schema's description (the unstable one links
// the draft documentation).
func markUnstable(defs, stable map[string]*schema) {
	mark := func(s *schema) {
		if !strings.Contains(s.Description, "UNSTABLE") {
			s.Description = strings.TrimSpace(unstableMark + "\n\n" + s.Description)
		}
	}
	key := func(v *schema) string {
		if v.Const != nil {
			return "const:" + string(v.Const)
		}
		if _, tag := v.constProp(); tag != "" {
			return "tag:" + tag
		}
		return "title:" + v.Title + v.refName()
	}
	for n, d := range defs {
		sd := stable[n]
		if sd == nil {
			mark(d)
			continue
		}
		d.Description = sd.Description
		for p, ps := range d.Properties {
			if sp := sd.Properties[p]; sp != nil {
				ps.Description = sp.Description
			} else {
				mark(ps)
				ps.unstable = true
			}
		}
		known := map[string]*schema{}
		for _, v := range sd.variants() {
			known[key(v)] = v
		}
		for _, v := range d.variants() {
			if sv := known[key(v)]; sv != nil {
				v.Description = sv.Description
			} else {
				mark(v)
			}
		}
	}
}

// handwritten are definitions the acp package writes by hand: Error is the
// JSON-RPC error object, defined with the connection (conn.go).
var handwritten = map[string]bool{"Error": true}

func classify(name string, s *schema) (kind, error) {
	vs := s.variants()
	switch {
	case handwritten[name]:
		return kindSkip, nil
	case s.XDocsIgnore || (s.Type == nil && s.Ref == "" && len(vs) == 0 && s.Properties == nil):
		return kindSkip, nil
	case len(vs) > 0 && isRequestIDShape(vs):
		return kindRequestID, nil
	case len(vs) > 0 && isEnum(vs):
		return kindEnum, nil
	case len(vs) > 0 && !slices.ContainsFunc(vs, func(v *schema) bool {
		return v.Type.main() == "" || v.Type.main() == "object" || v.refName() != ""
	}):
		return kindValueUnion, nil
	case len(vs) > 0:
		return kindUnion, nil
	case s.Type.main() == "object":
		return kindStruct, nil
	case s.Type.main() == "string":
		return kindString, nil
	case s.Type.main() == "integer":
		return kindInteger, nil
	}
	return kindSkip, errors.New("unsupported schema shape")
}

func isRequestIDShape(vs []*schema) bool {
	var types []string
	for _, v := range vs {
		types = append(types, v.Type.main()+strings.Join(v.Type, ""))
	}
	slices.Sort(types)
	return slices.Equal(types, []string{"integerinteger", "null", "stringstring"})
}

func isEnum(vs []*schema) bool {
	consts := 0
	for _, v := range vs {
		switch {
		case v.Const != nil:
			consts++
		case isOther(v) && v.Properties == nil && (v.Type.main() == "string" || v.Type.main() == "integer"):
		default:
			return false
		}
	}
	return consts > 0
}

// doc writes a // comment block: an optional lead sentence, then the description.
func (g *gen) doc(lead, desc string) {
	var lines []string
	if lead != "" {
		lines = strings.Split(lead, "\n")
	}
	if desc = strings.TrimSpace(desc); desc != "" {
		if lead != "" {
			lines = append(lines, "")
		}
		lines = append(lines, strings.Split(desc, "\n")...)
	}
	for _, l := range lines {
		g.out.WriteString(strings.TrimRight("// "+l, " ") + "\n")
	}
}

func (g *gen) def(name string, s *schema) error {
	gn := goName(name)
	if s.XMethod != "" {
		prefix := map[string]string{"agent": "AgentMethod", "client": "ClientMethod", "protocol": "Method", "proxy": "ProxyMethod"}[s.XSide]
		if prefix == "" {
			return fmt.Errorf("unknown x-side %q", s.XSide)
		}
		c := prefix + goName(s.XMethod)
		if m, ok := g.values[c]; ok && m != s.XMethod {
			return fmt.Errorf("method constant %s names both %q and %q", c, m, s.XMethod)
		}
		g.values[c] = s.XMethod
		g.methods[c] = append(g.methods[c], gn)
	}
	lead := fmt.Sprintf("%s mirrors the ACP schema definition %s.", gn, name)
	switch g.kinds[name] {
	case kindSkip:
		g.skipped = append(g.skipped, name)
	case kindString:
		g.doc(lead, s.Description)
		fmt.Fprintf(g.out, "type %s string\n\n", gn)
	case kindInteger:
		t, err := intType(s.Format)
		if err != nil {
			return err
		}
		g.doc(lead, s.Description)
		fmt.Fprintf(g.out, "type %s %s\n\n", gn, t)
	case kindEnum:
		return g.enum(gn, lead, s)
	case kindStruct:
		g.doc(lead, s.Description)
		return g.object(gn, s)
	case kindUnion:
		return g.union(gn, lead, s)
	case kindValueUnion:
		return g.valueUnion(gn, lead, s)
	case kindRequestID:
		g.doc(lead, s.Description)
		g.out.WriteString(strings.ReplaceAll(requestIDTemplate, "RequestID", gn))
	}
	return nil
}

func intType(format string) (string, error) {
	switch format {
	case "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64":
		return format, nil
	case "":
		return "int64", nil
	}
	return "", fmt.Errorf("unsupported integer format %q", format)
}

func (g *gen) enum(gn, lead string, s *schema) error {
	base, open := "string", false
	for _, v := range s.variants() {
		if v.Type.main() == "integer" {
			base = "int"
		}
		open = open || isOther(v)
	}
	if open {
		lead += "\nThe set of values is open: values not listed below decode and re-encode unchanged."
	} else {
		lead += "\nDecoding accepts any string: values outside the constants below are not rejected."
	}
	g.doc(lead, s.Description)
	fmt.Fprintf(g.out, "type %s %s\n\nconst (\n", gn, base)
	for _, v := range s.variants() {
		if v.Const == nil {
			continue
		}
		suffix := v.Title
		if suffix == "" {
			if err := json.Unmarshal(v.Const, &suffix); err != nil {
				return fmt.Errorf("enum constant %s: %w", v.Const, err)
			}
		}
		g.doc(fmt.Sprintf("%s%s is the %s value of %s.", gn, goName(suffix), v.Const, gn), v.Description)
		fmt.Fprintf(g.out, "%s%s %s = %s\n", gn, goName(suffix), gn, v.Const)
	}
	g.out.WriteString(")\n\n")
	return nil
}

// shape classifies a Go field type for the optional-field rules.
type shape int

const (
	shapeScalar  shape = iota // string, bool, string-like named types
	shapeNumeric              // integers, floats
	shapeSlice
	shapeMap
	shapeStruct // structs and unions: pointer when optional
	shapeAny
)

// goType maps a property schema to a Go type.
func (g *gen) goType(s *schema) (string, shape, error) {
	s = s.nonNull()
	if ref := s.refName(); ref != "" {
		if handwritten[ref] {
			// Error, the JSON-RPC error object, is package jsonrpc's.
			return "json.RawMessage", shapeAny, nil
		}
		switch g.kinds[ref] {
		case kindString:
			return goName(ref), shapeScalar, nil
		case kindInteger:
			return goName(ref), shapeNumeric, nil
		case kindEnum:
			if g.defs[ref].variants()[0].Type.main() == "integer" {
				return goName(ref), shapeNumeric, nil
			}
			return goName(ref), shapeScalar, nil
		case kindStruct, kindUnion, kindValueUnion, kindRequestID:
			return goName(ref), shapeStruct, nil
		}
		return "", 0, fmt.Errorf("reference to unsupported definition %s", ref)
	}
	switch s.Type.main() {
	case "string":
		return "string", shapeScalar, nil
	case "boolean":
		return "bool", shapeScalar, nil
	case "number":
		return "float64", shapeNumeric, nil
	case "integer":
		t, err := intType(s.Format)
		return t, shapeNumeric, err
	case "array":
		if s.Items == nil {
			return "[]any", shapeSlice, nil
		}
		t, _, err := g.goType(s.Items)
		return "[]" + t, shapeSlice, err
	case "object":
		var add schema
		if len(s.AdditionalProperties) > 0 && s.AdditionalProperties[0] == '{' {
			if err := json.Unmarshal(s.AdditionalProperties, &add); err != nil {
				return "", 0, err
			}
			t, _, err := g.goType(&add)
			return "map[string]" + t, shapeMap, err
		}
		if len(s.Properties) > 0 {
			return "", 0, errors.New("inline object with properties is not supported")
		}
		return "map[string]any", shapeMap, nil
	case "":
		if len(s.variants()) == 0 {
			return "any", shapeAny, nil
		}
	}
	return "", 0, fmt.Errorf("unsupported property type %v", s.Type)
}

// fields converts the properties of s into sorted struct fields,
// _meta last.
func (g *gen) fields(s *schema) ([]field, error) {
	rank := func(n string) string { return strings.Replace(n, "_meta", "\xff", 1) }
	names := slices.SortedFunc(maps.Keys(s.Properties), func(a, b string) int { return strings.Compare(rank(a), rank(b)) })
	var fs []field
	for _, n := range names {
		p := s.Properties[n]
		t, sh, err := g.goType(p)
		if err != nil {
			return nil, fmt.Errorf("property %s: %w", n, err)
		}
		f := field{Name: goName(n), JSON: n, Type: t, Doc: p.Description, Required: slices.Contains(s.Required, n)}
		if n == "_meta" {
			f.Type, sh = "map[string]any", shapeMap
		}
		ref := p.nonNull().refName()
		f.NullOK = p.nullable() || p.XDefaultOnNull || g.kinds[ref] == kindRequestID
		f.Lenient = p.unstable && p.XDefaultOnError && !f.Required
		switch {
		case f.Required:
			f.Tag = n
			if p.nullable() && sh != shapeSlice && sh != shapeMap && sh != shapeAny {
				f.Type = "*" + t
			}
			if sh == shapeSlice || sh == shapeMap {
				f.NonNil = f.Type + "{}"
			}
		case sh == shapeSlice || sh == shapeMap:
			f.Tag = n + ",omitzero" // keeps an explicit [] / {} distinct from absent
		case sh == shapeAny || (sh == shapeScalar && !p.nullable()):
			f.Tag = n + ",omitempty"
		default: // numbers, structs, unions, nullable scalars
			f.Type, f.Tag = "*"+f.Type, n+",omitempty"
		}
		fs = append(fs, f)
	}
	return fs, nil
}

func (g *gen) writeFields(fs []field) {
	for _, f := range fs {
		g.doc("", f.Doc)
		fmt.Fprintf(g.out, "%s %s `json:%q`\n", f.Name, f.Type, f.Tag)
	}
}

// requiredLists returns the Go literals for the required keys (null rejected)
// and the required-but-nullable keys.
func requiredLists(fs []field) (strict, nullOK string) {
	var a, b []string
	for _, f := range fs {
		if f.Required && f.NullOK {
			b = append(b, strconv.Quote(f.JSON))
		} else if f.Required {
			a = append(a, strconv.Quote(f.JSON))
		}
	}
	lit := func(l []string) string {
		if len(l) == 0 {
			return "nil"
		}
		return "[]string{" + strings.Join(l, ", ") + "}"
	}
	return lit(a), lit(b)
}

func (g *gen) object(gn string, s *schema) error {
	fs, err := g.fields(s)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.out, "type %s struct {\n", gn)
	g.writeFields(fs)
	g.out.WriteString("}\n\n")
	var nonNil []field
	for _, f := range fs {
		if f.NonNil != "" {
			nonNil = append(nonNil, f)
		}
	}
	if len(nonNil) > 0 {
		fmt.Fprintf(g.out, "// MarshalJSON implements [json.Marshaler]; nil required arrays and maps encode as empty.\n")
		fmt.Fprintf(g.out, "func (v %s) MarshalJSON() ([]byte, error) {\ntype alias %s\na := alias(v)\n", gn, gn)
		for _, f := range nonNil {
			fmt.Fprintf(g.out, "if a.%s == nil {\na.%s = %s\n}\n", f.Name, f.Name, f.NonNil)
		}
		g.out.WriteString("return json.Marshal(a)\n}\n\n")
	}
	var lenient []field
	for _, f := range fs {
		if f.Lenient {
			lenient = append(lenient, f)
		}
	}
	strict, nullOK := requiredLists(fs)
	if strict == "nil" && nullOK == "nil" && len(lenient) == 0 {
		return nil
	}
	switch {
	case len(lenient) == 0:
		fmt.Fprintf(g.out, "// UnmarshalJSON implements [json.Unmarshaler]; it rejects objects missing a required property.\n")
	case strict == "nil" && nullOK == "nil":
		fmt.Fprintf(g.out, "// UnmarshalJSON implements [json.Unmarshaler]; an UNSTABLE property that does\n// not decode is taken as absent (x-deserialize-default-on-error).\n")
	default:
		fmt.Fprintf(g.out, "// UnmarshalJSON implements [json.Unmarshaler]; it rejects objects missing a required property,\n// and takes an UNSTABLE property that does not decode as absent (x-deserialize-default-on-error).\n")
	}
	fmt.Fprintf(g.out, "func (v *%s) UnmarshalJSON(data []byte) error {\ntype alias %s\n", gn, gn)
	if strict != "nil" || nullOK != "nil" {
		fmt.Fprintf(g.out, "if err := genCheckRequired(%q, data, %s, %s); err != nil {\nreturn err\n}\n", gn, strict, nullOK)
	}
	if len(lenient) == 0 {
		fmt.Fprintf(g.out, "if err := json.Unmarshal(data, (*alias)(v)); err != nil {\nreturn fmt.Errorf(\"acp: %s: %%w\", err)\n}\n", gn)
	} else {
		// The lenient members decode apart: the outer fields shadow the
		// alias's of the same JSON name.
		g.out.WriteString("aux := struct {\n*alias\n")
		for _, f := range lenient {
			fmt.Fprintf(g.out, "%s json.RawMessage `json:%q`\n", f.Name, strings.Split(f.Tag, ",")[0]+",omitempty")
		}
		g.out.WriteString("}{alias: (*alias)(v)}\n")
		fmt.Fprintf(g.out, "if err := json.Unmarshal(data, &aux); err != nil {\nreturn fmt.Errorf(\"acp: %s: %%w\", err)\n}\n", gn)
		for _, f := range lenient {
			fmt.Fprintf(g.out, "v.%s = genLenient[%s](aux.%s)\n", f.Name, f.Type, f.Name)
		}
	}
	for _, f := range nonNil {
		fmt.Fprintf(g.out, "if v.%s == nil {\nv.%s = %s\n}\n", f.Name, f.Name, f.NonNil)
	}
	g.out.WriteString("return nil\n}\n\n")
	return nil
}

// requiredOf returns the required keys of a variant's object type.
func (g *gen) requiredOf(v *schema) []string {
	if ref := v.refName(); ref != "" {
		return g.defs[ref].Required
	}
	return v.Required
}

// uniqueKeys returns, for each set of required keys, the keys no other set
// requires: their presence identifies the variant.
func uniqueKeys(sets [][]string) ([][]string, error) {
	out := make([][]string, len(sets))
	for i := range sets {
		for _, k := range sets[i] {
			shared := false
			for j := range sets {
				shared = shared || (j != i && slices.Contains(sets[j], k))
			}
			if !shared {
				out[i] = append(out[i], k)
			}
		}
		if len(out[i]) == 0 {
			return nil, fmt.Errorf("variant %d has no distinguishing required property", i+1)
		}
	}
	return out, nil
}

func (g *gen) union(gn, lead string, s *schema) error {
	var (
		disc     string
		vs       []variant
		other    bool
		untagged []int
	)
	for _, v := range s.variants() {
		prop, tag := v.constProp()
		if isOther(v) {
			other = true
			continue
		}
		vr := variant{Tag: tag, Title: v.Title, Doc: v.Description}
		if prop != "" {
			if disc != "" && disc != prop {
				return fmt.Errorf("variants disagree on the discriminator (%s, %s)", disc, prop)
			}
			disc, vr.Field = prop, goName(tag)
		} else {
			vr.Field = goName(v.Title)
			if name, ok := variantNames[v.Title]; ok {
				vr.Field = name
			}
			untagged = append(untagged, len(vs))
		}
		if vr.Field == "" {
			return errors.New("variant without discriminator value or title")
		}
		switch ref := v.refName(); {
		case ref != "" && (g.kinds[ref] == kindStruct || g.kinds[ref] == kindUnion):
			vr.Type = goName(ref)
		case ref == "" && len(v.AllOf) == 0 && v.Type.main() == "object":
			vr.Type = gn + vr.Field
			inline := *v
			inline.Properties = maps.Clone(v.Properties)
			delete(inline.Properties, prop)
			inline.Required = slices.DeleteFunc(slices.Clone(v.Required), func(r string) bool { return r == prop })
			g.synth[vr.Type] = &inline
			g.pending = append(g.pending, vr.Type)
			g.pendingOut[vr.Type] = g.out
		default:
			return fmt.Errorf("variant %s: unsupported shape", vr.Field)
		}
		vs = append(vs, vr)
	}
	if len(untagged) > 1 { // structural selection
		var sets [][]string
		for _, i := range untagged {
			sets = append(sets, g.requiredOf(s.variants()[i]))
		}
		keys, err := uniqueKeys(sets)
		if err != nil {
			return err
		}
		for n, i := range untagged {
			vs[i].Keys = keys[n]
		}
	}
	common, err := g.fields(s)
	if err != nil {
		return err
	}
	for _, f := range common {
		if f.NonNil != "" {
			return fmt.Errorf("required array/map %s on a union is not supported", f.JSON)
		}
	}
	// Every object union keeps a variant it does not know in Other, so that
	// a peer speaking a newer schema does not fail the whole message. For
	// a closed union (no "other" branch in the schema) such a value is not
	// valid, and the strict Unmarshal rejects it through acpCheckVariant.
	// (A single variant without discriminator leaves nothing unknown.)
	closed := !other && !(disc == "" && len(untagged) == 1)
	other = other || closed

	// Type declaration.
	lead += "\nExactly one variant field"
	if other {
		lead += " (or Other)"
	}
	lead += " must be set when encoding."
	if disc != "" {
		lead += fmt.Sprintf("\nDecoding selects the variant by the %q property", disc)
		if len(untagged) > 0 {
			lead += ";\nthe untagged variant is chosen when the property is absent or equals its title"
		}
		lead += "."
	}
	g.doc(lead, s.Description)
	fmt.Fprintf(g.out, "type %s struct {\n", gn)
	g.writeFields(common)
	for _, v := range vs {
		d := fmt.Sprintf("%s selects the %s variant", v.Field, v.Type)
		switch {
		case v.Tag != "":
			d += fmt.Sprintf(`, encoded with "%s": %q.`, disc, v.Tag)
		case len(v.Keys) > 0:
			d += fmt.Sprintf(", recognised by the presence of %s.", strings.Join(v.Keys, " and "))
		default:
			d += ", encoded without a discriminator."
		}
		g.doc(d, v.Doc)
		fmt.Fprintf(g.out, "%s *%s `json:\"-\"`\n", v.Field, v.Type)
	}
	if other {
		d := "Other holds a variant this schema version does not define: its JSON object"
		if len(common) > 0 {
			d += "\nwithout the members held by the fields above"
		}
		d += ", re-encoded unchanged."
		if closed {
			d += "\nThe schema defines no other variants: decoding keeps an unknown one here so\nthat a newer peer's message does not fail, and Unmarshal rejects it."
		}
		g.doc(d, "")
		g.out.WriteString("Other json.RawMessage `json:\"-\"`\n")
	}
	g.out.WriteString("}\n\n")

	// MarshalJSON.
	fmt.Fprintf(g.out, "// MarshalJSON implements [json.Marshaler].\nfunc (u %s) MarshalJSON() ([]byte, error) {\n", gn)
	g.out.WriteString("var (\nn int\ntag string\nbody any\n)\n")
	for _, v := range vs {
		tag := `""`
		if v.Tag != "" {
			b, _ := json.Marshal(disc)
			t, _ := json.Marshal(v.Tag)
			tag = "`" + string(b) + ":" + string(t) + "`"
		}
		fmt.Fprintf(g.out, "if u.%s != nil {\nn, tag, body = n+1, %s, u.%s\n}\n", v.Field, tag, v.Field)
	}
	if other {
		g.out.WriteString("if u.Other != nil {\nn, body = n+1, u.Other\n}\n")
	}
	fmt.Fprintf(g.out, "if n != 1 {\nreturn nil, genCountError(%q, n)\n}\n", gn)
	if len(common) > 0 {
		fmt.Fprintf(g.out, "type alias %s\nreturn genJoin(tag, alias(u), body)\n}\n\n", gn)
	} else {
		g.out.WriteString("return genJoin(tag, body)\n}\n\n")
	}

	// UnmarshalJSON.
	fmt.Fprintf(g.out, "// UnmarshalJSON implements [json.Unmarshaler].\nfunc (u *%s) UnmarshalJSON(data []byte) error {\n", gn)
	if disc == "" && len(common) == 0 && len(untagged) == 1 {
		fmt.Fprintf(g.out, "if _, err := genObject(%q, data); err != nil {\nreturn err\n}\n*u = %s{}\n", gn, gn)
	} else {
		fmt.Fprintf(g.out, "obj, err := genObject(%q, data)\nif err != nil {\nreturn err\n}\n*u = %s{}\n", gn, gn)
	}
	var commonKeys []string
	if len(common) > 0 {
		strict, nullOK := requiredLists(common)
		fmt.Fprintf(g.out, "if err := genCheckObject(%q, obj, %s, %s); err != nil {\nreturn err\n}\n", gn, strict, nullOK)
		fmt.Fprintf(g.out, "type alias %s\nif err := json.Unmarshal(data, (*alias)(u)); err != nil {\nreturn fmt.Errorf(\"acp: %s: %%w\", err)\n}\n", gn, gn)
		for _, f := range common {
			commonKeys = append(commonKeys, strconv.Quote(f.JSON))
		}
	}
	decode := func(v variant) {
		fmt.Fprintf(g.out, "u.%s = new(%s)\nreturn genDecode(%q, %q, data, u.%s)\n", v.Field, v.Type, gn, v.Field, v.Field)
	}
	if disc != "" {
		fmt.Fprintf(g.out, "tag, tagged, err := genTag(%q, obj, %q)\nif err != nil {\nreturn err\n}\nif tagged {\nswitch tag {\n", gn, disc)
		for _, v := range vs {
			t := v.Tag
			if t == "" {
				t = v.Title
			}
			fmt.Fprintf(g.out, "case %q:\n", t)
			decode(v)
		}
		g.out.WriteString("}\n")
		if other {
			fmt.Fprintf(g.out, "u.Other, err = genRemainder(%q, data, obj%s)\nreturn err\n", gn, strings.Join(append([]string{""}, commonKeys...), ", "))
		} else {
			fmt.Fprintf(g.out, "return fmt.Errorf(\"acp: %s: unknown %s %%q\", tag)\n", gn, disc)
		}
		g.out.WriteString("}\n")
	}
	for _, i := range untagged {
		if len(untagged) == 1 {
			decode(vs[i])
			g.out.WriteString("}\n\n")
			if closed {
				g.checkVariant(gn, disc, vs, untagged)
			}
			return nil
		}
		fmt.Fprintf(g.out, "if genHasKeys(obj, %s) {\n", quoteList(vs[i].Keys))
		decode(vs[i])
		g.out.WriteString("}\n")
	}
	if len(untagged) > 0 {
		fmt.Fprintf(g.out, "u.Other, err = genRemainder(%q, data, obj%s)\nreturn err\n}\n\n", gn, strings.Join(append([]string{""}, commonKeys...), ", "))
	} else {
		fmt.Fprintf(g.out, "return fmt.Errorf(\"acp: %s: missing %%q\", %q)\n}\n\n", gn, disc)
	}
	if closed {
		g.checkVariant(gn, disc, vs, untagged)
	}
	return nil
}

// checkVariant writes the acpUnion method of a closed union: the variants
// the schema defines, with which the strict Unmarshal rejects an object of
// another variant (which decoding keeps in Other).
func (g *gen) checkVariant(gn, disc string, vs []variant, untagged []int) {
	var tags []string
	for _, v := range vs {
		t := v.Tag
		if t == "" {
			t = v.Title
		}
		tags = append(tags, strconv.Quote(t))
	}
	fmt.Fprintf(g.out, "// acpUnion describes the variants of %s for the strict Unmarshal.\n", gn)
	fmt.Fprintf(g.out, "func (%s) acpUnion() *unionInfo {\nreturn &unionInfo{name: %q", gn, gn)
	if disc != "" {
		fmt.Fprintf(g.out, ", disc: %q, tags: []string{%s}", disc, strings.Join(tags, ", "))
	}
	if len(untagged) > 1 {
		var sets []string
		for _, i := range untagged {
			sets = append(sets, "{"+quoteList(vs[i].Keys)+"}")
		}
		fmt.Fprintf(g.out, ", keys: [][]string{%s}", strings.Join(sets, ", "))
	}
	g.out.WriteString("}\n}\n\n")
}

func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

// valueUnion generates a union whose variants differ by JSON type.
func (g *gen) valueUnion(gn, lead string, s *schema) error {
	type vv struct {
		Field, Type, Kind string
		Keys              []string // array-of-object variants: keys identifying the first element
	}
	var vs []vv
	byKind := map[string][]int{}
	for _, v := range s.variants() {
		t, sh, err := g.goType(v)
		if err != nil {
			return err
		}
		x := vv{Field: goName(v.Title), Type: t, Kind: v.Type.main()}
		if sh != shapeSlice {
			x.Type = "*" + t
		}
		if x.Field == "" || len(byKind[x.Kind]) > 0 && x.Kind != "array" {
			return fmt.Errorf("cannot name or distinguish variant %s", x.Kind)
		}
		byKind[x.Kind] = append(byKind[x.Kind], len(vs))
		vs = append(vs, x)
	}
	if arr := byKind["array"]; len(arr) > 1 { // told apart by the first element
		var sets [][]string
		for _, i := range arr {
			if s.variants()[i].Items == nil || s.variants()[i].Items.refName() == "" {
				return errors.New("several array variants need object items to be told apart")
			}
			sets = append(sets, g.requiredOf(s.variants()[i].Items))
		}
		keys, err := uniqueKeys(sets)
		if err != nil {
			return err
		}
		for n, i := range arr {
			vs[i].Keys = keys[n]
		}
	}
	g.doc(lead+"\nExactly one field must be set when encoding; decoding picks the field by\nthe JSON type of the value (and, for arrays, by the first element).", s.Description)
	fmt.Fprintf(g.out, "type %s struct {\n", gn)
	for _, v := range vs {
		fmt.Fprintf(g.out, "// %s holds the %s variant, a JSON %s.\n%s %s `json:\"-\"`\n", v.Field, v.Field, v.Kind, v.Field, v.Type)
	}
	g.out.WriteString("}\n\n")
	fmt.Fprintf(g.out, "// MarshalJSON implements [json.Marshaler].\nfunc (u %s) MarshalJSON() ([]byte, error) {\nvar (\nn int\nv any\n)\n", gn)
	for _, v := range vs {
		fmt.Fprintf(g.out, "if u.%s != nil {\nn, v = n+1, u.%s\n}\n", v.Field, v.Field)
	}
	fmt.Fprintf(g.out, "if n != 1 {\nreturn nil, genCountError(%q, n)\n}\nreturn json.Marshal(v)\n}\n\n", gn)

	fmt.Fprintf(g.out, "// UnmarshalJSON implements [json.Unmarshaler].\n")
	fmt.Fprintf(g.out, "func (u *%s) UnmarshalJSON(data []byte) error {\n*u = %s{}\nk := genKind(data)\nswitch k {\n", gn, gn)
	decode := func(v vv) {
		if strings.HasPrefix(v.Type, "*") {
			fmt.Fprintf(g.out, "u.%s = new(%s)\n", v.Field, v.Type[1:])
			fmt.Fprintf(g.out, "return genDecode(%q, %q, data, u.%s)\n", gn, v.Field, v.Field)
		} else {
			fmt.Fprintf(g.out, "return genDecode(%q, %q, data, &u.%s)\n", gn, v.Field, v.Field)
		}
	}
	for _, k := range []string{"string", "boolean"} {
		if i := byKind[k]; len(i) == 1 {
			fmt.Fprintf(g.out, "case %q:\n", k)
			decode(vs[i[0]])
		}
	}
	ints, nums := byKind["integer"], byKind["number"]
	if len(ints) == 1 {
		v := vs[ints[0]]
		fmt.Fprintf(g.out, "case \"integer\":\nvar x %s\nif err := json.Unmarshal(data, &x); err == nil {\nu.%s = &x\nreturn nil\n}\n", v.Type[1:], v.Field)
		if len(nums) == 1 {
			g.out.WriteString("fallthrough\n")
		}
	}
	if len(nums) == 1 {
		if len(ints) == 0 {
			g.out.WriteString("case \"integer\", \"number\":\n")
		} else {
			g.out.WriteString("case \"number\":\n")
		}
		decode(vs[nums[0]])
	}
	if arr := byKind["array"]; len(arr) > 0 {
		g.out.WriteString("case \"array\":\n")
		if len(arr) == 1 {
			decode(vs[arr[0]])
		} else {
			fmt.Fprintf(g.out, "first, err := genFirstElement(%q, data)\nif err != nil {\nreturn err\n}\n", gn)
			for n, i := range arr {
				cond := fmt.Sprintf("genHasKeys(first, %s)", quoteList(vs[i].Keys))
				if n == 0 {
					cond = "first == nil || " + cond
				}
				fmt.Fprintf(g.out, "if %s {\n", cond)
				decode(vs[i])
				g.out.WriteString("}\n")
			}
			fmt.Fprintf(g.out, "return fmt.Errorf(\"acp: %s: cannot tell the variant of the array\")\n", gn)
		}
	}
	fmt.Fprintf(g.out, "}\nreturn fmt.Errorf(\"acp: %s: a JSON %%s is not a valid value\", k)\n}\n\n", gn)
	return nil
}

// methodConsts writes the method-name constants, each into the file of
// its first definition (fileOf, by Go name).
func (g *gen) methodConsts(fileOf func(goDef string) *bytes.Buffer) {
	names := slices.Sorted(maps.Keys(g.values))
	byFile := map[*bytes.Buffer][]string{}
	var files []*bytes.Buffer
	for _, c := range names {
		f := fileOf(g.methods[c][0])
		if byFile[f] == nil {
			files = append(files, f)
		}
		byFile[f] = append(byFile[f], c)
	}
	for _, f := range files {
		g.out = f
		sides := "// handled by the agent, ClientMethod* by the client, Method* by either side.\n"
		if slices.ContainsFunc(byFile[f], func(c string) bool { return strings.HasPrefix(c, "ProxyMethod") }) {
			sides = "// handled by the agent, ClientMethod* by the client, Method* by either side,\n// ProxyMethod* by proxies.\n"
		}
		g.out.WriteString("// Method names, from the schema's x-method annotations. AgentMethod* methods are\n" + sides + "const (\n")
		for _, c := range byFile[f] {
			fmt.Fprintf(g.out, "// %s is the method of %s.\n%s = %q\n", c, strings.Join(g.methods[c], " and "), c, g.values[c])
		}
		g.out.WriteString(")\n\n")
	}
}
