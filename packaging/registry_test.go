package packaging

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"text/template"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

const (
	entryFile  = "acp-registry/acpd/agent.json"
	iconFile   = "acp-registry/acpd/icon.svg"
	schemaFile = "testdata/agent.schema.json"
	// repositoryFile names the repository once, for .goreleaser.yaml and
	// the registry entry.
	repositoryFile = "repository"
)

// targets maps the registry's platform names to GOOS/GOARCH.
var targets = map[string][2]string{
	"darwin-aarch64":  {"darwin", "arm64"},
	"darwin-x86_64":   {"darwin", "amd64"},
	"linux-aarch64":   {"linux", "arm64"},
	"linux-x86_64":    {"linux", "amd64"},
	"windows-aarch64": {"windows", "arm64"},
	"windows-x86_64":  {"windows", "amd64"},
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestRegistryEntryMatchesSchema validates the entry against the registry's
// schema, asserting formats (uri) too.
func TestRegistryEntryMatchesSchema(t *testing.T) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(readFile(t, schemaFile)))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("agent.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("agent.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	// The validator must reject what the schema rejects.
	if err := sch.Validate(map[string]any{"id": "acpd"}); err == nil {
		t.Fatal("schema accepted an entry without name, version and distribution")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(readFile(t, entryFile)))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Fatalf("%s: %v", entryFile, err)
	}
}

type entry struct {
	ID           string `json:"id"`
	Version      string `json:"version"`
	Repository   string `json:"repository"`
	License      string `json:"license"`
	Distribution struct {
		Binary map[string]struct {
			Archive string   `json:"archive"`
			Cmd     string   `json:"cmd"`
			Args    []string `json:"args"`
		} `json:"binary"`
	} `json:"distribution"`
}

// TestRegistryEntryPointsAtReleaseArchives checks that the entry lists the
// six targets, each the archive .goreleaser.yaml names for it, of the
// entry's version, on the repository's release page, with the binary
// inside it as the command.
func TestRegistryEntryPointsAtReleaseArchives(t *testing.T) {
	var e entry
	if err := json.Unmarshal(readFile(t, entryFile), &e); err != nil {
		t.Fatal(err)
	}
	if e.ID != "acpd" || e.License == "" || e.Repository == "" {
		t.Errorf("id %q, license %q, repository %q", e.ID, e.License, e.Repository)
	}
	config := string(readFile(t, "../.goreleaser.yaml"))
	for _, want := range []string{
		`name_template: "{{ .ProjectName }}_{{ .Version }}_{{ .Os }}_{{ .Arch }}"`,
		"goos: [darwin, linux, windows]", "goarch: [amd64, arm64]", "binary: acpd",
		"- CGO_ENABLED=0", "formats: [tar.gz]", "formats: [zip]",
	} {
		if !strings.Contains(config, want) {
			t.Errorf(".goreleaser.yaml lacks %q", want)
		}
	}
	repo := strings.TrimSpace(string(readFile(t, repositoryFile)))
	if !regexp.MustCompile(`^https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`).MatchString(repo) {
		t.Errorf("%s holds %q, want https://github.com/OWNER/NAME", repositoryFile, repo)
	}
	if e.Repository != repo {
		t.Errorf("repository %q is not the one of %s (%q)", e.Repository, repositoryFile, repo)
	}
	owner, name := releaseRepository(t, config)
	if e.Repository != fmt.Sprintf("https://github.com/%s/%s", owner, name) {
		t.Errorf("repository %q is not the release repository of .goreleaser.yaml (%s/%s)", e.Repository, owner, name)
	}
	if len(e.Distribution.Binary) != len(targets) {
		t.Errorf("%d binary targets, want %d", len(e.Distribution.Binary), len(targets))
	}
	for platform, goTarget := range targets {
		b, ok := e.Distribution.Binary[platform]
		if !ok {
			t.Errorf("no %s archive", platform)
			continue
		}
		ext, cmd := "tar.gz", "./acpd"
		if goTarget[0] == "windows" {
			ext, cmd = "zip", "./acpd.exe"
		}
		want := fmt.Sprintf("%s/releases/download/v%s/acpd_%s_%s_%s.%s", e.Repository, e.Version, e.Version, goTarget[0], goTarget[1], ext)
		if b.Archive != want {
			t.Errorf("%s archive %s, want %s", platform, b.Archive, want)
		}
		if b.Cmd != cmd || len(b.Args) != 1 || b.Args[0] != "serve" {
			t.Errorf("%s runs %s %v, want %s serve", platform, b.Cmd, b.Args, cmd)
		}
	}
}

// releaseRepository evaluates the owner and name of .goreleaser.yaml's
// release.github (contents config) as GoReleaser does: Go templates in which
// mustReadFile reads a file of the repository, trimmed.
func releaseRepository(t *testing.T, config string) (owner, name string) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^release:\n  github:\n    owner: '([^']*)'\n    name: '([^']*)'$`).FindStringSubmatch(config)
	if m == nil {
		t.Fatal(".goreleaser.yaml has no release.github owner and name")
	}
	funcs := template.FuncMap{
		"split": strings.Split,
		"mustReadFile": func(p string) (string, error) {
			b, err := os.ReadFile("../" + p)
			return strings.TrimSpace(string(b)), err
		},
	}
	eval := func(s string) string {
		tmpl, err := template.New("").Option("missingkey=error").Funcs(funcs).Parse(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		var out strings.Builder
		if err := tmpl.Execute(&out, nil); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return out.String()
	}
	return eval(m[1]), eval(m[2])
}

// TestLicense checks that the project's licence is the one the registry
// entry names, that the entry links its text at the entry's version, and
// that the release archives carry it.
func TestLicense(t *testing.T) {
	text := string(readFile(t, "../LICENSE"))
	for _, want := range []string{"Apache License\n                           Version 2.0, January 2004", "END OF TERMS AND CONDITIONS"} {
		if !strings.Contains(text, want) {
			t.Errorf("LICENSE lacks %q: it is not the Apache License 2.0", want)
		}
	}
	var e struct {
		entry
		LicenseURL string `json:"license_url"`
	}
	if err := json.Unmarshal(readFile(t, entryFile), &e); err != nil {
		t.Fatal(err)
	}
	if e.License != "Apache-2.0" {
		t.Errorf("license %q, want the SPDX identifier Apache-2.0", e.License)
	}
	if want := e.Repository + "/blob/v" + e.Version + "/LICENSE"; e.LicenseURL != want {
		t.Errorf("license_url %q, want %q", e.LicenseURL, want)
	}
	config := string(readFile(t, "../.goreleaser.yaml"))
	if !regexp.MustCompile(`(?m)^    files:\n(      - \S+\n)*      - LICENSE\n`).MatchString(config) {
		t.Error(".goreleaser.yaml does not put LICENSE in the archives")
	}
}

// TestRegistryIcon checks the icon the registry wants: a 16×16 SVG drawn
// only in currentColor, so that editors can tint it.
func TestRegistryIcon(t *testing.T) {
	data := readFile(t, iconFile)
	var svg struct {
		XMLName xml.Name
		Width   string `xml:"width,attr"`
		Height  string `xml:"height,attr"`
		ViewBox string `xml:"viewBox,attr"`
	}
	if err := xml.Unmarshal(data, &svg); err != nil {
		t.Fatal(err)
	}
	if svg.XMLName.Local != "svg" || svg.Width != "16" || svg.Height != "16" || svg.ViewBox != "0 0 16 16" {
		t.Errorf("icon is %s %sx%s, viewBox %q; want a 16x16 svg", svg.XMLName.Local, svg.Width, svg.Height, svg.ViewBox)
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	paints := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch el.Name.Local {
		case "svg", "g", "path", "rect", "circle", "ellipse", "line", "polyline", "polygon":
		default:
			t.Errorf("icon uses <%s>", el.Name.Local)
		}
		for _, a := range el.Attr {
			switch a.Name.Local {
			case "fill", "stroke", "color", "stop-color":
				if a.Value != "currentColor" && a.Value != "none" {
					t.Errorf("<%s %s=%q>: only currentColor may paint", el.Name.Local, a.Name.Local, a.Value)
				}
				if a.Value == "currentColor" {
					paints++
				}
			case "style":
				t.Errorf("<%s> has a style attribute", el.Name.Local)
			}
		}
	}
	if paints == 0 {
		t.Error("icon paints nothing in currentColor")
	}
}

// TestOneVersionScheme checks that the release version is kept once: the
// registry entry names packaging/version, snapshots are built as its -dev
// with the commit, and the archives carry what the README and the CLI point
// to.
func TestOneVersionScheme(t *testing.T) {
	if !regexp.MustCompile(`^[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(Version) {
		t.Fatalf("version file holds %q, want X.Y.Z", Version)
	}
	var e entry
	if err := json.Unmarshal(readFile(t, entryFile), &e); err != nil {
		t.Fatal(err)
	}
	if e.Version != Version {
		t.Errorf("registry entry version %q, packaging/version %q", e.Version, Version)
	}
	config := string(readFile(t, "../.goreleaser.yaml"))
	for _, want := range []string{
		`version_template: '{{ trim (mustReadFile "packaging/version") }}-dev+{{ envOrDefault "ACPD_COMMIT" .ShortCommit }}'`,
		"-X main.commit=", "-X main.version={{ .Version }}",
	} {
		if !strings.Contains(config, want) {
			t.Errorf(".goreleaser.yaml lacks %q", want)
		}
	}
	for _, f := range []string{"config/example.toml", "testdata/replay/hello.jsonl"} {
		if !strings.Contains(config, "      - "+f+"\n") {
			t.Errorf(".goreleaser.yaml does not put %s in the archives", f)
		}
		if _, err := os.Stat("../" + f); err != nil {
			t.Error(err)
		}
	}
}
