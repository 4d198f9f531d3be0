package skills

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeSkill(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name, "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Skills are found in every location, the most precedent keeps a name,
// and invalid frontmatter is skipped.
func TestLoad(t *testing.T) {
	root, cfg, home := t.TempDir(), t.TempDir(), t.TempDir()
	writeSkill(t, filepath.Join(root, ".agents", "skills"), "pdf", "---\nname: pdf\ndescription: Fill PDF forms.\n---\n# PDF\nUse forms.py.\n")
	writeSkill(t, filepath.Join(root, ".claude", "skills"), "pdf", "---\nname: pdf\ndescription: An older PDF skill.\n---\nold\n")
	writeSkill(t, filepath.Join(cfg, "skills"), "review", "---\nname: review\ndescription: \"Review code: find bugs.\"\n---\nLook closely.\n")
	writeSkill(t, filepath.Join(home, ".claude", "skills"), "bad", "---\nname: Bad_Name\ndescription: x\n---\n")
	writeSkill(t, filepath.Join(home, ".claude", "skills"), "nodesc", "---\nname: nodesc\n---\nbody\n")
	writeSkill(t, filepath.Join(home, ".claude", "skills"), "nofront", "just text\n")
	sks := Load(Sources(root, cfg, home, ""))
	if len(sks) != 2 || sks[0].Name != "pdf" || sks[0].Description != "Fill PDF forms." || sks[1].Name != "review" || sks[1].Description != "Review code: find bugs." {
		t.Fatalf("skills = %+v", sks)
	}
	body, err := Body(sks[0])
	if err != nil || body != "# PDF\nUse forms.py." {
		t.Errorf("body %q, %v", body, err)
	}
	use, err := Use(sks[0], "fill the tax form")
	if err != nil || !strings.Contains(use, "Use forms.py.") || !strings.Contains(use, sks[0].Dir) || !strings.Contains(use, "fill the tax form") {
		t.Errorf("Use = %q, %v", use, err)
	}
}

// The listing holds names and descriptions, never bodies, within its
// budget; the rest are counted.
func TestListing(t *testing.T) {
	var sks []Skill
	for _, n := range []string{"a", "b", "c"} {
		sks = append(sks, Skill{Name: n, Description: strings.Repeat(n, 40)})
	}
	full := Listing(sks, ListingBudget)
	if strings.Count(full, "\n- ") != 3 || strings.Contains(full, "more skills") {
		t.Errorf("listing %q", full)
	}
	short := Listing(sks, len(full)-20)
	if !strings.Contains(short, "(1 more skills") {
		t.Errorf("over budget: %q", short)
	}
	if Listing(nil, 100) != "" {
		t.Error("listing without skills")
	}
	if strings.Contains(full, "MCP server") {
		t.Errorf("local skills marked as a server's: %q", full)
	}
	// An MCP server's skill is marked as that server's, in the listing
	// and in the skill tool's list.
	mcp := append(sks, Skill{Name: "docs:pdf", Description: "PDFs.", Server: "docs"})
	for _, got := range []string{Listing(mcp, ListingBudget), All(mcp)} {
		if !strings.Contains(got, "- docs:pdf: PDFs. (from MCP server docs)\n") || !strings.Contains(got, "- a: ") {
			t.Errorf("with an MCP skill: %q", got)
		}
	}
	if !strings.Contains(Listing(mcp, ListingBudget), "untrusted") {
		t.Error("the listing does not say MCP skills are untrusted")
	}
}

func TestValidate(t *testing.T) {
	for _, n := range []string{"pdf", "pdf-forms", "a1"} {
		if Validate(n, "d") != nil {
			t.Errorf("%q rejected", n)
		}
	}
	for _, n := range []string{"", "-a", "a-", "a--b", "A", "a_b", strings.Repeat("a", 65)} {
		if Validate(n, "d") == nil {
			t.Errorf("%q accepted", n)
		}
	}
	if Validate("a", "") == nil || Validate("a", strings.Repeat("x", 1025)) == nil {
		t.Error("bad descriptions accepted")
	}
}
