// Command loadfloor is the Go floor of session/load
// (BenchmarkTableLoad10k): for each request line on stdin,
// {"id":N,"params":{"sessionId":S,"path":P}}, it reads the session log P,
// decodes every line with encoding/json (the record's envelope, its data
// kept as raw JSON: checked, not decoded) and writes every stored update
// as a newline-delimited JSON-RPC session/update notification to stdout,
// through a 64 KiB buffer, then the reply {"jsonrpc":"2.0","id":N,"result":{}}.
// It merges nothing: the whole job a replay does, at its cheapest in Go.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriterSize(os.Stdout, 64<<10)
	for in.Scan() {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				SessionID string `json:"sessionId"`
				Path      string `json:"path"`
			} `json:"params"`
		}
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			fail(err)
		}
		if err := load(out, req.Params.SessionID, req.Params.Path); err != nil {
			fail(err)
		}
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":{}}`+"\n", req.ID)
		if err := out.Flush(); err != nil {
			fail(err)
		}
	}
}

// load writes the notifications of the log at path.
func load(out *bufio.Writer, sid, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	prefix := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"` + sid + `","update":`
	for line := range bytes.Lines(data) {
		var rec struct {
			Kind string          `json:"kind"`
			Data json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(line, &rec); err != nil {
			return err
		}
		if rec.Kind != "update" {
			continue
		}
		out.WriteString(prefix)
		out.Write(rec.Data)
		out.WriteString("}}\n")
	}
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "loadfloor:", err)
	os.Exit(1)
}
