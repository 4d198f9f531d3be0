package mcpclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"acpd/internal/lazy"
	"acpd/mcpclient/internal/yamlsub"
)

// MCP skills (extension io.modelcontextprotocol/skills, SEP-2640): a server
// serves Agent Skills as resources, conventionally skill://<path>/SKILL.md
// and the files beside it, and lists them with skills/list: each entry
// carries the SKILL.md's frontmatter and the digest and size of every file
// of the skill. The Manager lists a declaring server's skills when it
// connects, and reads a skill's files only when asked ([Manager.LoadSkill],
// [Manager.ReadSkillFile]), each checked against the listed digest and
// size, the SKILL.md's frontmatter against the listed one.

// SkillsExtension is the skills extension's identifier, the key a server
// declares in its capabilities' extensions.
const SkillsExtension = "io.modelcontextprotocol/skills"

// The extension's methods.
const (
	methodListSkills = "skills/list"
	methodGetSkill   = "skills/get"
)

// Limits on skills.
const (
	// maxSkillsPerServer bounds how many skills one server may contribute;
	// listing stops there (a warning is logged).
	maxSkillsPerServer = 256
	// maxSkillListPages bounds the pages of one skills/list.
	maxSkillListPages = 50
	// MaxSkillFiles and MaxSkillBytes are the extension's limits on one
	// skill: the entries of its resources and the sum of their sizes. A
	// listed skill beyond either is skipped.
	MaxSkillFiles = 512
	MaxSkillBytes = 16 << 20
	// maxSkillNameLen bounds a skill's qualified name.
	maxSkillNameLen = 128
)

// ErrUnknownSkill is returned (wrapped) by [Manager.LoadSkill] and
// [Manager.ReadSkillFile] for a qualified name [Manager.Skills] does not
// list.
var ErrUnknownSkill = errors.New("mcpclient: unknown skill")

// ErrSkillNotLoaded is returned (wrapped) by [Manager.ReadSkillFile] for a
// skill that [Manager.LoadSkill] has not loaded: a skill's files are read
// only while it is in use.
var ErrSkillNotLoaded = errors.New("mcpclient: skill not loaded")

// ErrSkillVerification is returned (wrapped, with what did not match) when
// a skill's file is not what its listed entry describes: a size or digest
// that differs, a SKILL.md whose frontmatter differs from the entry's, or a
// file the entry does not list. The content is never returned then.
var ErrSkillVerification = errors.New("skill verification failed")

// Skill is one skill a connected server lists: its entry as the Manager
// holds it, which every file read is verified against.
type Skill struct {
	// Server is the Server.Name that serves the skill.
	Server string
	// QualifiedName is "<server>:<name>" (the server part sanitized as in
	// [Prompt.QualifiedName]), or "<server>:<skill path>" when the server
	// lists several skills of that name; unique among the Manager's skills.
	QualifiedName string
	// URI is the skill's SKILL.md URI; Name and Description its
	// frontmatter's (valid as the Agent Skills format requires).
	URI, Name, Description string
	// Frontmatter is the entry's frontmatter, every field the author wrote.
	Frontmatter map[string]any
	// Files are the skill's files, SKILL.md included, as the entry lists
	// them.
	Files []SkillFile
}

// SkillFile is one file of a [Skill].
type SkillFile struct {
	// URI is the file's resource URI; Path its path relative to the
	// skill's directory ("SKILL.md", "references/FORMS.md").
	URI, Path string
	// Digest is "sha256:" and 64 lower-case hex digits; Size the length in
	// bytes of the file's content.
	Digest string
	Size   int64
}

// LoadedSkill is a skill's SKILL.md, verified.
type LoadedSkill struct {
	Skill
	// Content is the whole SKILL.md; Body what follows its frontmatter.
	Content, Body string
}

// Skills returns a snapshot of every skill of every ready or restarting
// server, ordered by the order servers were added, then in the order the
// server lists them. Listing fetches none of a skill's files.
func (m *Manager) Skills() []Skill {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.freshLocked()
	out := make([]Skill, len(m.skills))
	copy(out, m.skills)
	return out
}

// skillFor returns the held entry of the skill with the given qualified
// name and its server.
func (m *Manager) skillFor(qualified string) (Skill, *srv, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return Skill{}, nil, ErrClosed
	}
	m.freshLocked()
	for i, sk := range m.skills {
		if sk.QualifiedName == qualified {
			return sk, m.skillOwners[i], nil
		}
	}
	return Skill{}, nil, fmt.Errorf("%w: %q", ErrUnknownSkill, qualified)
}

// heldKey names a skill in Manager.held: its server and URI.
func heldKey(sk Skill) string { return sk.Server + " " + sk.URI }

// LoadSkill reads the SKILL.md of the skill with the given qualified name
// (resources/read) and verifies it against the listed entry: its size and
// digest, then its YAML frontmatter, field by field, against the entry's.
// A mismatch is an [ErrSkillVerification] and the content is not returned.
// No other file of the skill is read. Once loaded, the skill's files can
// be read ([Manager.ReadSkillFile]), verified against the entry it was
// loaded from; a load that fails ends that until the next one succeeds.
func (m *Manager) LoadSkill(ctx context.Context, qualified string) (_ LoadedSkill, err error) {
	sk, s, err := m.skillFor(qualified)
	if err != nil {
		return LoadedSkill{}, err
	}
	defer func() {
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.held == nil {
			m.held = map[string]Skill{}
		}
		if err != nil {
			delete(m.held, heldKey(sk))
		} else {
			m.held[heldKey(sk)] = sk
		}
	}()
	data, err := m.readSkillFile(ctx, sk, s, sk.URI)
	if errors.Is(err, ErrSkillVerification) {
		// The listing may be stale: with a fresh entry (skills/get) that
		// describes another SKILL.md, try once more against that one.
		if fresh, ferr := m.RefreshSkill(ctx, qualified); ferr == nil && fresh.skillMD() != sk.skillMD() {
			m.log.Info("skill changed since it was listed; loading it as it is now", "server", sk.Server, "skill", sk.URI)
			sk = fresh
			data, err = m.readSkillFile(ctx, sk, s, sk.URI)
		}
	}
	if err != nil {
		return LoadedSkill{}, err
	}
	front, body, ok := splitFrontmatter(string(data))
	if !ok {
		return LoadedSkill{}, fmt.Errorf("mcp server %q: skill %s: %w: its SKILL.md has no YAML frontmatter", sk.Server, sk.URI, ErrSkillVerification)
	}
	got, err := yamlsub.Object(front)
	if err != nil {
		return LoadedSkill{}, fmt.Errorf("mcp server %q: skill %s: %w: its SKILL.md's frontmatter is not a YAML mapping acpd reads: %v", sk.Server, sk.URI, ErrSkillVerification, err)
	}
	if diff := frontmatterDiff(got, sk.Frontmatter); diff != "" {
		return LoadedSkill{}, fmt.Errorf("mcp server %q: skill %s: %w: its SKILL.md's frontmatter differs from the listed one (%s); the skill is not loaded", sk.Server, sk.URI, ErrSkillVerification, diff)
	}
	return LoadedSkill{Skill: sk, Content: string(data), Body: body}, nil
}

// ReadSkillFile reads one file of the skill with the given qualified name,
// which [Manager.LoadSkill] must have loaded ([ErrSkillNotLoaded]
// otherwise): file is its path relative to the skill's directory or its
// URI, and must be one the entry the skill was loaded from lists. Its
// content is verified against that entry's size and digest; a mismatch,
// or a file the entry does not list, is an [ErrSkillVerification].
func (m *Manager) ReadSkillFile(ctx context.Context, qualified, file string) (SkillFile, []byte, error) {
	listed, s, err := m.skillFor(qualified)
	if err != nil {
		return SkillFile{}, nil, err
	}
	m.mu.Lock()
	sk, ok := m.held[heldKey(listed)]
	m.mu.Unlock()
	if !ok {
		return SkillFile{}, nil, fmt.Errorf("mcp server %q: skill %s: %w: load it (its SKILL.md, verified) before reading its files", listed.Server, listed.URI, ErrSkillNotLoaded)
	}
	f, ok := sk.file(file)
	if !ok {
		return SkillFile{}, nil, fmt.Errorf("mcp server %q: skill %s: %w: %q is not one of the skill's listed files", sk.Server, sk.URI, ErrSkillVerification, file)
	}
	data, err := m.readSkillFile(ctx, sk, s, f.URI)
	if err != nil {
		return SkillFile{}, nil, err
	}
	return f, data, nil
}

// skillMD is the listed SKILL.md's digest and size.
func (sk Skill) skillMD() string {
	f, _ := sk.file(sk.URI)
	return f.Digest + " " + strconv.FormatInt(f.Size, 10)
}

// RefreshSkill fetches the current entry of the skill with the given
// qualified name from its server (skills/get) and holds it in place of
// the listed one; a skill loaded from the old entry must be loaded again
// before its files are read.
func (m *Manager) RefreshSkill(ctx context.Context, qualified string) (Skill, error) {
	sk, s, err := m.skillFor(qualified)
	if err != nil {
		return Skill{}, err
	}
	c, err := m.live(ctx, s)
	if err != nil {
		return Skill{}, fmt.Errorf("mcp server %q: skill %s: %w", sk.Server, sk.URI, err)
	}
	res, err := mcp.CallCustomMethod[*getSkillParams, *getSkillResult](ctx, c.session, methodGetSkill, &getSkillParams{URI: sk.URI})
	if err != nil {
		return Skill{}, fmt.Errorf("mcp server %q: getting skill %s: %w", sk.Server, sk.URI, scrub(err, c.server.URL))
	}
	fresh, err := parseSkill(res.Skill)
	if err != nil {
		return Skill{}, fmt.Errorf("mcp server %q: getting skill %s: %w", sk.Server, sk.URI, err)
	}
	if fresh.URI != sk.URI {
		return Skill{}, fmt.Errorf("mcp server %q: getting skill %s: the server answered for %s", sk.Server, sk.URI, fresh.URI)
	}
	fresh.Server = sk.Server
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.held, heldKey(sk))
	for i := range s.skills {
		if s.skills[i].URI == sk.URI {
			s.skills[i] = fresh
		}
	}
	m.rebuildSkillsLocked()
	fresh.QualifiedName = qualified
	for _, x := range m.skills {
		if x.Server == fresh.Server && x.URI == fresh.URI {
			fresh.QualifiedName = x.QualifiedName
		}
	}
	return fresh, nil
}

// file finds the listed file named by its URI or its path relative to the
// skill's directory.
func (sk Skill) file(name string) (SkillFile, bool) {
	rel := path.Clean(strings.TrimPrefix(name, "./"))
	for _, f := range sk.Files {
		if f.URI == name || f.Path == rel {
			return f, true
		}
	}
	return SkillFile{}, false
}

// readSkillFile reads the listed file uri of sk from its server s and
// verifies its size and digest.
func (m *Manager) readSkillFile(ctx context.Context, sk Skill, s *srv, uri string) ([]byte, error) {
	f, ok := sk.file(uri)
	if !ok {
		return nil, fmt.Errorf("mcp server %q: skill %s: %w: %s is not one of the skill's listed files", sk.Server, sk.URI, ErrSkillVerification, uri)
	}
	c, err := m.live(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: skill %s: %w", sk.Server, sk.URI, err)
	}
	res, err := c.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, fmt.Errorf("mcp server %q: reading skill file %s: %w", sk.Server, uri, scrub(err, c.server.URL))
	}
	var rc *mcp.ResourceContents
	for _, x := range res.Contents {
		if x != nil && (x.URI == uri || len(res.Contents) == 1) {
			rc = x
			break
		}
	}
	if rc == nil {
		return nil, fmt.Errorf("mcp server %q: skill file %s: the server returned no contents for it", sk.Server, uri)
	}
	data := rc.Blob
	if data == nil {
		data = []byte(rc.Text)
	}
	if int64(len(data)) != f.Size {
		return nil, fmt.Errorf("mcp server %q: skill file %s: %w: it has %d bytes, the skill's entry says %d (changed or tampered with since it was listed); its content is not used", sk.Server, uri, ErrSkillVerification, len(data), f.Size)
	}
	if d := digestOf(data); d != f.Digest {
		return nil, fmt.Errorf("mcp server %q: skill file %s: %w: its digest is %s, the skill's entry says %s (changed or tampered with since it was listed); its content is not used", sk.Server, uri, ErrSkillVerification, d, f.Digest)
	}
	return data, nil
}

// digestOf is data's digest as skill entries write it.
func digestOf(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// The skills/list and skills/get messages.
type listSkillsParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listSkillsResult struct {
	mcp.ResultBase
	Skills     []json.RawMessage `json:"skills"`
	NextCursor string            `json:"nextCursor,omitempty"`
}

type getSkillParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type getSkillResult struct {
	mcp.ResultBase
	Skill json.RawMessage `json:"skill"`
}

// registerSkillMethods lets client send the extension's methods.
func registerSkillMethods(client *mcp.Client) {
	// Neither shadows a standard method, so neither can fail.
	_ = mcp.AddSendingCustomMethod[*listSkillsParams, *listSkillsResult](client, methodListSkills)
	_ = mcp.AddSendingCustomMethod[*getSkillParams, *getSkillResult](client, methodGetSkill)
}

// declaresSkills reports whether c's server declared the skills extension.
func declaresSkills(c *conn) bool {
	caps := c.session.InitializeResult().Capabilities
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[SkillsExtension]
	return ok
}

// listSkills lists the skills of c's server (skills/list, following
// pagination) when it declares the extension. Entries that are invalid
// (see parseSkill) are skipped with a warning.
func (m *Manager) listSkills(ctx context.Context, c *conn) ([]Skill, error) {
	if !declaresSkills(c) {
		return nil, nil
	}
	var out []Skill
	seen := map[string]bool{}
	cursor := ""
	for range maxSkillListPages {
		res, err := mcp.CallCustomMethod[*listSkillsParams, *listSkillsResult](ctx, c.session, methodListSkills, &listSkillsParams{Cursor: cursor})
		if err != nil {
			return out, err
		}
		for _, raw := range res.Skills {
			sk, err := parseSkill(raw)
			if err != nil {
				m.log.Warn("skipping a listed skill", "server", c.server.Name, "err", err)
				continue
			}
			if seen[sk.URI] {
				continue
			}
			if len(out) == maxSkillsPerServer {
				m.log.Warn("server lists too many skills; ignoring the rest", "server", c.server.Name, "limit", maxSkillsPerServer)
				return out, nil
			}
			seen[sk.URI] = true
			sk.Server = c.server.Name
			out = append(out, sk)
		}
		if res.NextCursor == "" || res.NextCursor == cursor {
			return out, nil
		}
		cursor = res.NextCursor
	}
	return out, nil
}

// digestRE is a valid digest, compiled on first use: most processes
// never see a server's skills.
var digestRE = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^sha256:[0-9a-f]{64}$`) }}

// parseSkill reads and checks one skill entry: a SKILL.md URI whose last
// path segment is the frontmatter's name; a frontmatter with a valid name
// and description; resources listing SKILL.md and only files under the
// skill's directory, each once, with a valid digest and size, within the
// extension's limits. A "dynamic" skill (no digests) is refused: acpd
// loads only skills it can verify.
func parseSkill(raw json.RawMessage) (Skill, error) {
	var e struct {
		URI         string          `json:"uri"`
		Frontmatter map[string]any  `json:"frontmatter"`
		Resources   json.RawMessage `json:"resources"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return Skill{}, fmt.Errorf("malformed skill entry: %w", err)
	}
	root, ok := strings.CutSuffix(e.URI, "/SKILL.md")
	if !ok || !strings.Contains(root, "://") {
		return Skill{}, fmt.Errorf("skill %q: the URI does not name a SKILL.md", e.URI)
	}
	name, _ := e.Frontmatter["name"].(string)
	desc, _ := e.Frontmatter["description"].(string)
	if err := ValidateSkill(name, desc); err != nil {
		return Skill{}, fmt.Errorf("skill %s: %w", e.URI, err)
	}
	if last := root[strings.LastIndexByte(root, '/')+1:]; last != name {
		return Skill{}, fmt.Errorf("skill %s: the name %q is not the URI's last segment", e.URI, name)
	}
	if bytes.Equal(bytes.TrimSpace(e.Resources), []byte(`"dynamic"`)) {
		return Skill{}, fmt.Errorf("skill %s: its content is dynamic (no digests to verify it by)", e.URI)
	}
	var files []struct {
		URI    string          `json:"uri"`
		Digest string          `json:"digest"`
		Size   json.RawMessage `json:"size"`
	}
	if err := json.Unmarshal(e.Resources, &files); err != nil || files == nil {
		return Skill{}, fmt.Errorf("skill %s: resources is neither a list of files nor \"dynamic\"", e.URI)
	}
	if len(files) > MaxSkillFiles {
		return Skill{}, fmt.Errorf("skill %s: %d files, more than the %d a skill may have", e.URI, len(files), MaxSkillFiles)
	}
	sk := Skill{URI: e.URI, Name: name, Description: desc, Frontmatter: e.Frontmatter}
	var total int64
	seen := map[string]bool{}
	for _, f := range files {
		size, err := strconv.ParseInt(string(f.Size), 10, 64)
		switch {
		case err != nil || size < 0:
			return Skill{}, fmt.Errorf("skill %s: file %q has no valid size", e.URI, f.URI)
		case !digestRE.Get().MatchString(f.Digest):
			return Skill{}, fmt.Errorf("skill %s: file %q has no valid sha256 digest", e.URI, f.URI)
		case seen[f.URI]:
			return Skill{}, fmt.Errorf("skill %s: file %q is listed twice", e.URI, f.URI)
		}
		rel, ok := strings.CutPrefix(f.URI, root+"/")
		if !ok || rel == "" || path.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") {
			return Skill{}, fmt.Errorf("skill %s: file %q is not in the skill's directory", e.URI, f.URI)
		}
		seen[f.URI] = true
		total += size
		sk.Files = append(sk.Files, SkillFile{URI: f.URI, Path: rel, Digest: f.Digest, Size: size})
	}
	if !seen[e.URI] {
		return Skill{}, fmt.Errorf("skill %s: its resources do not list the SKILL.md", e.URI)
	}
	if total > MaxSkillBytes {
		return Skill{}, fmt.Errorf("skill %s: %d bytes of files, more than the %d a skill may have", e.URI, total, MaxSkillBytes)
	}
	return sk, nil
}

// ValidateSkill checks a skill's name and description as the Agent Skills
// format requires: a name of 1-64 lower case letters, digits and hyphens
// (not starting or ending with one, no "--"), and a description of 1-1024
// characters.
func ValidateSkill(name, description string) error {
	if name == "" || len(name) > 64 || strings.HasPrefix(name, "-") || strings.HasSuffix(name, "-") || strings.Contains(name, "--") {
		return fmt.Errorf("invalid skill name %q", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return fmt.Errorf("invalid skill name %q (lower case letters, digits and hyphens)", name)
		}
	}
	if n := utf8.RuneCountInString(strings.TrimSpace(description)); n == 0 || n > 1024 {
		return fmt.Errorf("skill %s: the description must have 1 to 1024 characters", name)
	}
	return nil
}

// frontRE matches a leading YAML frontmatter block, compiled on first use.
var frontRE = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp {
	return regexp.MustCompile(`^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)`)
}}

// splitFrontmatter cuts a SKILL.md into its frontmatter's YAML and its
// body (trimmed).
func splitFrontmatter(text string) (front, body string, ok bool) {
	text = strings.TrimPrefix(text, "\ufeff")
	loc := frontRE.Get().FindStringSubmatchIndex(text)
	if loc == nil {
		return "", "", false
	}
	return text[loc[2]:loc[3]], strings.TrimSpace(text[loc[1]:]), true
}

// frontmatterDiff compares a SKILL.md's frontmatter with an entry's, field
// by field (an absent field equals null), and names the fields that
// differ; "" when they are the same.
func frontmatterDiff(file, entry map[string]any) string {
	// The entry's values came from JSON; round-trip the file's the same
	// way so numbers and nesting compare alike.
	norm := func(v any) any {
		b, err := json.Marshal(v)
		if err != nil {
			return v
		}
		var out any
		if json.Unmarshal(b, &out) != nil {
			return v
		}
		return out
	}
	keys := map[string]bool{}
	for k := range file {
		keys[k] = true
	}
	for k := range entry {
		keys[k] = true
	}
	var diffs []string
	for k := range keys {
		if !reflect.DeepEqual(norm(file[k]), norm(entry[k])) {
			diffs = append(diffs, k)
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	slices.Sort(diffs)
	return "fields " + strings.Join(diffs, ", ")
}

// rebuildSkillsLocked recomputes m.skills from m.servers, with their
// qualified names.
func (m *Manager) rebuildSkillsLocked() {
	var all []Skill
	var owners []*srv
	for _, s := range m.servers {
		count := map[string]int{}
		for _, sk := range s.skills {
			count[sk.Name]++
		}
		for _, sk := range s.skills {
			plain := serverPart(s.cfg.Name) + ":" + sk.Name
			if count[sk.Name] > 1 {
				// Names collide within the server: its skill path tells
				// them apart.
				p := sk.URI[strings.Index(sk.URI, "://")+3:]
				plain = serverPart(s.cfg.Name) + ":" + strings.TrimSuffix(p, "/SKILL.md")
			}
			sk.QualifiedName = plain
			all = append(all, sk)
			owners = append(owners, s)
		}
	}
	keys := make([]toolKey, len(all))
	plains := make(map[toolKey]string, len(all))
	for i, sk := range all {
		keys[i] = toolKey{sk.Server, sk.URI}
		plains[keys[i]] = sk.QualifiedName
	}
	names := uniqueNames(keys, maxSkillNameLen, func(k toolKey) string { return plains[k] })
	for i := range all {
		all[i].QualifiedName = names[i]
	}
	m.skills, m.skillOwners = all, owners
}
