// Package skilltest serves Agent Skills over MCP for tests: a Go SDK server
// on 127.0.0.1 (streamable HTTP) that declares the skills extension
// (io.modelcontextprotocol/skills), answers skills/list and skills/get with
// each skill's frontmatter and the digest and size of each of its files,
// serves the files as skill:// resources, records every resources/read and
// can be made to serve a file other than the one it lists (tampering) or
// to change a file and its entry together (an update).
package skilltest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.yaml.in/yaml/v3"
)

// Extension is the skills extension's identifier.
const Extension = "io.modelcontextprotocol/skills"

// Skill is one skill to serve.
type Skill struct {
	// Path is the skill's path ("pdf-processing", "acme/refunds"); its
	// last segment is the skill's name.
	Path string
	// Frontmatter is the SKILL.md's frontmatter (name and description
	// at least), written as YAML into the file and as JSON into the
	// entry.
	Frontmatter map[string]any
	// Body is the SKILL.md after its frontmatter.
	Body string
	// Files are the other files, by path relative to the skill's
	// directory.
	Files map[string]string
}

// Server is a running skills server.
type Server struct {
	// URL is its streamable HTTP endpoint.
	URL string

	mu      sync.Mutex
	entries []map[string]any
	content map[string]string // uri -> what resources/read returns
	reads   []string
}

// URI is the resource URI of a skill's file.
func URI(skillPath, file string) string { return "skill://" + skillPath + "/" + file }

// Content is a skill's SKILL.md as the server lists it.
func (sk Skill) Content() string {
	y, err := yaml.Marshal(sk.Frontmatter)
	if err != nil {
		panic(err)
	}
	return "---\n" + string(y) + "---\n" + sk.Body
}

// Digest is data's digest as skill entries write it.
func Digest(data string) string {
	sum := sha256.Sum256([]byte(data))
	return "sha256:" + hex.EncodeToString(sum[:])
}

type listParams struct {
	mcp.ParamsBase
	Cursor string `json:"cursor,omitempty"`
}

type listResult struct {
	mcp.ResultBase
	Skills []map[string]any `json:"skills"`
}

type getParams struct {
	mcp.ParamsBase
	URI string `json:"uri"`
}

type getResult struct {
	mcp.ResultBase
	Skill map[string]any `json:"skill"`
}

// New serves skills (the server's name is name) until the test ends.
func New(t testing.TB, name string, skills ...Skill) *Server {
	t.Helper()
	s := &Server{content: map[string]string{}}
	caps := &mcp.ServerCapabilities{Resources: &mcp.ResourceCapabilities{}}
	caps.AddExtension(Extension, map[string]any{})
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "1"}, &mcp.ServerOptions{Capabilities: caps})
	for _, sk := range skills {
		files := map[string]string{"SKILL.md": sk.Content()}
		maps.Copy(files, sk.Files)
		var res []map[string]any
		for _, rel := range slices.Sorted(maps.Keys(files)) {
			uri := URI(sk.Path, rel)
			data := files[rel]
			s.content[uri] = data
			res = append(res, map[string]any{"uri": uri, "digest": Digest(data), "size": len(data)})
			srv.AddResource(&mcp.Resource{URI: uri, Name: rel, MIMEType: "text/markdown"}, s.read)
		}
		s.entries = append(s.entries, map[string]any{"uri": URI(sk.Path, "SKILL.md"), "frontmatter": sk.Frontmatter, "resources": res})
	}
	must(t, mcp.AddReceivingCustomMethod(srv, "skills/list", func(context.Context, *mcp.ServerSession, *listParams) (*listResult, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return &listResult{Skills: slices.Clone(s.entries)}, nil
	}))
	must(t, mcp.AddReceivingCustomMethod(srv, "skills/get", func(_ context.Context, _ *mcp.ServerSession, p *getParams) (*getResult, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, e := range s.entries {
			if e["uri"] == p.URI {
				return &getResult{Skill: e}, nil
			}
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no skill is served at " + p.URI}
	}))
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	s.URL = hs.URL
	return s
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func (s *Server) read(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads = append(s.reads, uri)
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: s.content[uri]}}}, nil
}

// Tamper makes the server serve content for uri from now on, while its
// entry keeps the listed digest and size.
func (s *Server) Tamper(uri, content string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.content[uri] = content
}

// Update changes the file uri and its digest and size in every entry
// listing it (skills/list and skills/get answer with the new entry).
func (s *Server) Update(uri, content string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.content[uri] = content
	for i, e := range s.entries {
		e = maps.Clone(e)
		var res []map[string]any
		for _, f := range e["resources"].([]map[string]any) {
			if f["uri"] == uri {
				f = map[string]any{"uri": uri, "digest": Digest(content), "size": len(content)}
			}
			res = append(res, f)
		}
		e["resources"] = res
		s.entries[i] = e
	}
}

// Reads returns the URIs read so far, in order.
func (s *Server) Reads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reads)
}

// Entries returns the skill entries the server lists, as JSON.
func (s *Server) Entries() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, _ := json.Marshal(s.entries)
	return b
}
