//go:build unix

package mcpclient

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// TestLineConnReads: a stdio server's connection reads a message per
// JSON line, skips what is not JSON, reads a batch as its messages in
// order, and ends with io.EOF when the server's stdout does.
func TestLineConnReads(t *testing.T) {
	script := `printf '%s\n' 'a banner' '{"jsonrpc":"2.0","id":1,"result":{"ok":true}}' ` +
		`'[{"jsonrpc":"2.0","method":"notifications/one"},{"jsonrpc":"2.0","id":"x","method":"ping"}]' ` +
		`'{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}'`
	p, err := startStdio(exec.Command("sh", "-c", script), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := newLineConn(p)
	defer c.Close()
	ctx := context.Background()
	var got []string
	for {
		m, err := c.Read(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Read: %v (after %q)", err, got)
		}
		switch m := m.(type) {
		case *jsonrpc.Response:
			if m.Error != nil {
				got = append(got, "error "+m.Error.Error())
			} else {
				got = append(got, "result "+string(m.Result))
			}
		case *jsonrpc.Request:
			got = append(got, "request "+m.Method)
		}
	}
	want := []string{`result {"ok":true}`, "request notifications/one", "request ping", "error no"}
	if len(got) != len(want) {
		t.Fatalf("read %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("message %d: %q, want %q", i, got[i], want[i])
		}
	}
}

// A Read waiting for a line of a server that writes none ends when its
// context does, and when the connection closes (with io.EOF).
func TestLineConnReadEnds(t *testing.T) {
	start := func() *lineConn {
		p, err := startStdio(exec.Command("sh", "-c", "exec sleep 60"), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := newLineConn(p)
		t.Cleanup(func() { c.Close() })
		return c
	}
	read := func(c *lineConn, ctx context.Context) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := c.Read(ctx)
			done <- err
		}()
		return done
	}
	wait := func(done <-chan error) error {
		select {
		case err := <-done:
			return err
		case <-time.After(30 * time.Second):
			t.Fatal("Read did not end")
			return nil
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := read(start(), ctx)
	time.Sleep(20 * time.Millisecond) // let the read start
	cancel()
	if err := wait(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Read after its context ended: %v, want context.Canceled", err)
	}

	c := start()
	done = read(c, context.Background())
	time.Sleep(20 * time.Millisecond)
	go c.Close()
	if err := wait(done); err != io.EOF {
		t.Errorf("Read after Close: %v, want io.EOF", err)
	}
}
