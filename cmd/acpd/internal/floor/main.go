//go:build linux

// Command floor is the same-dependencies floor of acpd's start-up
// benchmark: a minimal NDJSON responder that links (and initialises) the
// packages acpd links, answers initialize and exits at EOF. acpd cannot
// start faster than this.
package main

import (
	"bufio"
	"encoding/json"
	"os"

	_ "github.com/aymanbagabas/go-udiff"
	_ "github.com/bmatcuk/doublestar/v4"
	_ "github.com/charmbracelet/log"
	_ "github.com/creack/pty"
	_ "github.com/fsnotify/fsnotify"
	_ "github.com/google/jsonschema-go/jsonschema"
	_ "github.com/landlock-lsm/go-landlock/landlock"
	_ "github.com/modelcontextprotocol/go-sdk/mcp"
	_ "github.com/pelletier/go-toml/v2"
	_ "github.com/sabhiram/go-gitignore"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/sourcegraph/jsonrpc2"
	_ "github.com/spf13/cobra"
	_ "mvdan.cc/sh/v3/syntax"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 64<<10), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	for in.Scan() {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(in.Bytes(), &req) != nil || req.ID == nil {
			continue
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{}}})
		out.Write(append(b, '\n'))
		out.Flush()
	}
}
