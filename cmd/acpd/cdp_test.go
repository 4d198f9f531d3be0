package main

// A minimal Chrome DevTools Protocol client for the browser tests: headless
// Chromium with --remote-debugging-pipe reads commands on its fd 3 and
// writes answers and events on its fd 4, each a JSON object ended by a NUL
// byte. No websocket, no library.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// chromiumHint is how to install the browser the level-2 tests drive.
const chromiumHint = "apt-get install -y --no-install-recommends chromium"

// requireChromium returns the Chromium binary; it skips the test when
// there is none, and fails it under CI=true.
func requireChromium(tb testing.TB) string {
	tb.Helper()
	if runtime.GOOS == "windows" {
		tb.Skip("the DevTools pipe needs file descriptors 3 and 4 (os/exec ExtraFiles), which Windows lacks")
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		tb.Fatalf("Chromium is missing (CI=true): %s", chromiumHint)
	}
	tb.Skipf("Chromium is missing; %s", chromiumHint)
	return ""
}

// cdpEvent is one event of the browser.
type cdpEvent struct {
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	SessionID string          `json:"sessionId"`
}

// cdpBrowser is a running headless Chromium and its protocol pipe. Its
// reader goroutine ends when the browser exits; close kills and waits.
type cdpBrowser struct {
	cmd *exec.Cmd
	w   *os.File

	mu      sync.Mutex
	nextID  int
	waiting map[int]chan cdpReply
	onEvent func(cdpEvent) // called on the reader goroutine
	done    chan struct{}
	wg      sync.WaitGroup
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// startChromium starts headless Chromium with a private profile; onEvent
// receives every event.
func startChromium(t *testing.T, bin string, onEvent func(cdpEvent)) *cdpBrowser {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--headless", "--remote-debugging-pipe", "--user-data-dir=" + t.TempDir(),
		"--no-first-run", "--no-default-browser-check", "--disable-gpu", "--disable-dev-shm-usage",
		"--disable-extensions", "--disable-background-networking", "--disable-sync", "--mute-audio",
		"--window-size=1100,900", "about:blank"}
	if os.Geteuid() == 0 {
		args = append(args, "--no-sandbox") // Chromium refuses its sandbox as root
	}
	cmd := exec.Command(bin, args...)
	cmd.ExtraFiles = []*os.File{inR, outW} // fd 3: commands in, fd 4: messages out
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{b: &stderr, n: 64 << 10}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	inR.Close()
	outW.Close()
	b := &cdpBrowser{cmd: cmd, w: inW, waiting: map[int]chan cdpReply{}, onEvent: onEvent, done: make(chan struct{})}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer close(b.done)
		defer outR.Close()
		rd := bufio.NewReaderSize(outR, 1<<20)
		for {
			msg, err := rd.ReadBytes(0)
			if err != nil {
				return
			}
			var m struct {
				ID int `json:"id"`
				cdpReply
				cdpEvent
			}
			if json.Unmarshal(msg[:len(msg)-1], &m) != nil {
				continue
			}
			if m.ID != 0 {
				b.mu.Lock()
				ch := b.waiting[m.ID]
				delete(b.waiting, m.ID)
				b.mu.Unlock()
				if ch != nil {
					ch <- m.cdpReply
				}
				continue
			}
			if b.onEvent != nil {
				b.onEvent(m.cdpEvent)
			}
		}
	}()
	t.Cleanup(func() {
		b.w.Close()
		cmd.Process.Kill()
		cmd.Wait()
		b.wg.Wait()
		if t.Failed() {
			t.Logf("chromium stderr:\n%s", stderr.String())
		}
	})
	return b
}

// limitedWriter keeps the first n bytes written.
type limitedWriter struct {
	mu sync.Mutex
	b  *strings.Builder
	n  int
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if room := w.n - w.b.Len(); room > 0 {
		w.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// call sends one command (to a target's session when session is not
// empty) and returns its result.
func (b *cdpBrowser) call(ctx context.Context, session, method string, params any) (json.RawMessage, error) {
	if params == nil {
		params = map[string]any{}
	}
	ch := make(chan cdpReply, 1)
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	b.waiting[id] = ch
	msg, err := json.Marshal(map[string]any{"id": id, "method": method, "params": params, "sessionId": session})
	if err == nil {
		_, err = b.w.Write(append(msg, 0))
	}
	b.mu.Unlock()
	if err != nil {
		return nil, err
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, r.Error.Message)
		}
		return r.Result, nil
	case <-b.done:
		return nil, errors.New("the browser exited")
	case <-ctx.Done():
		b.mu.Lock()
		delete(b.waiting, id)
		b.mu.Unlock()
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// poll calls f every 100ms until it reports done or ctx ends.
func poll(ctx context.Context, what string, f func() (bool, error)) error {
	var last error
	for {
		ok, err := f()
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last error: %v)", what, ctx.Err(), last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
