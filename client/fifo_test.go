//go:build unix

package client

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"acpd/acp"
	"acpd/acp/jsonrpc"
)

// TestReadTextFileRefusesFIFO: a FIFO in the root is refused at once
// instead of blocking the request until a writer appears.
func TestReadTextFileRefusesFIFO(t *testing.T) {
	_, conn, dir := newClient(t, Options{})
	p := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	var res acp.ReadTextFileResponse
	err := call(t, conn, acp.ClientMethodFsReadTextFile, acp.ReadTextFileRequest{SessionID: "s", Path: p}, &res)
	var rerr *jsonrpc.Error
	if !errors.As(err, &rerr) || !strings.Contains(rerr.Message, "not a regular file") {
		t.Fatalf("read of a FIFO: %v, want a refusal naming it not a regular file", err)
	}
}
