package main

// Shared harness of the end-to-end tests: they build the acpd binary once,
// run it in an isolated environment (temporary HOME and XDG directories),
// talk to it over its stdio, and validate every message it sends against the
// ACP JSON schema of the pinned TypeScript SDK.

import (
	"acpd/internal/syncbuf"
	"acpd/sandbox"

	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.uber.org/goleak"
)

var (
	flagRaceBinary = flag.Bool("acpd.race", false, "build the acpd binary under test with the race detector")
	flagBinary     = flag.String("acpd.bin", "", "run this acpd binary instead of building one (to compare two builds in turn)")
	flagReplyWait  = flag.Duration("acpd.wait", 30*time.Second, "how long a test waits for one message from acpd before it fails as hung")
)

// sdkDir is where `cd testdata && npm ci` installs the official ACP
// TypeScript SDK, relative to this package.
var sdkDir = filepath.Join("..", "..", "testdata", "node_modules", "@agentclientprotocol", "sdk")

const npmHint = "run: cd testdata && npm ci"

func TestMain(m *testing.M) {
	sandbox.Init()
	flag.Parse()
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error
)

// acpdBinary builds ./cmd/acpd once per test binary run and returns its path.
func acpdBinary(tb testing.TB) string {
	tb.Helper()
	if *flagBinary != "" {
		return *flagBinary
	}
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "acpd-e2e-bin-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "acpd")
		// go test puts its own GOROOT/bin first on PATH.
		goTool := "go"
		args := []string{"build", "-o", binPath}
		if *flagRaceBinary {
			args = append(args, "-race")
		}
		cmd := exec.Command(goTool, append(args, ".")...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binPath
}

// requirePeers skips the test when node or the npm peers are missing, and
// fails it under CI=true, where they must be installed.
func requirePeers(tb testing.TB) (node string) {
	tb.Helper()
	missing := func(what string) {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("%s is missing (CI=true): %s", what, npmHint)
		}
		tb.Skipf("%s is missing; %s", what, npmHint)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node")
	}
	if _, err := os.Stat(filepath.Join(sdkDir, "package.json")); err != nil {
		missing("the ACP TypeScript SDK (testdata/node_modules)")
	}
	return node
}

// isolation is a private HOME, XDG state and config for one test, so acpd
// never touches the real user's files.
type isolation struct {
	Home, State, Config string
	env                 []string
}

// Variables of the test's own environment that must not reach acpd: they
// would point it at the real user's state or at a real model provider.
var (
	envPrefixesDropped = []string{"HOME=", "XDG_", "ACPD_", "ANTHROPIC_", "OPENAI_", "GEMINI_", "GOOGLE_", "OLLAMA_"}
	envSuffixesDropped = []string{"_API_KEY", "_TOKEN", "_BASE_URL"}
)

func newIsolation(tb testing.TB) *isolation {
	tb.Helper()
	root := tb.TempDir()
	iso := &isolation{Home: filepath.Join(root, "home"), State: filepath.Join(root, "state"), Config: filepath.Join(root, "config")}
	for _, d := range []string{iso.Home, iso.State, iso.Config} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			tb.Fatal(err)
		}
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, p := range envPrefixesDropped {
			drop = drop || strings.HasPrefix(kv, p)
		}
		for _, suf := range envSuffixesDropped {
			drop = drop || strings.HasSuffix(name, suf)
		}
		if !drop {
			iso.env = append(iso.env, kv)
		}
	}
	iso.env = append(iso.env, "HOME="+iso.Home, "XDG_STATE_HOME="+iso.State, "XDG_CONFIG_HOME="+iso.Config)
	return iso
}

// Env returns the environment for processes of this test.
func (iso *isolation) Env() []string { return append([]string(nil), iso.env...) }

// writeUserConfig writes $XDG_CONFIG_HOME/acpd/config.toml.
func (iso *isolation) writeUserConfig(tb testing.TB, toml string) {
	tb.Helper()
	dir := filepath.Join(iso.Config, "acpd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(toml), 0o600); err != nil {
		tb.Fatal(err)
	}
}

// writeFile writes a file, creating its directory.
func writeFile(tb testing.TB, path, content string) string {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// proc is an acpd process driven with raw JSON-RPC lines. One goroutine (owned
// by proc, ended by the process closing its stdout, awaited by close) reads
// stdout into lines; everything else runs on the test goroutine.
type proc struct {
	tb     testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte // bounded; the reader blocks when the test stops reading
	readWG sync.WaitGroup
	stderr *syncbuf.Buffer
	closed bool
	exit   error

	nextID  int
	sent    [][]byte // every line written to stdin
	got     [][]byte // every line read from stdout
	backlog [][]byte // lines read by call while looking for its reply
}

// startProc starts the acpd binary with args in env.
func startProc(tb testing.TB, env []string, args ...string) *proc {
	tb.Helper()
	cmd := exec.Command(acpdBinary(tb), args...)
	cmd.Env = env
	return startCmd(tb, cmd)
}

// startCmd starts cmd, an acpd binary with its arguments, environment and
// credentials set, as a proc.
func startCmd(tb testing.TB, cmd *exec.Cmd) *proc {
	tb.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	cmd.Stdout = w
	p := &proc{tb: tb, cmd: cmd, stdin: stdin, lines: make(chan []byte, 256), stderr: &syncbuf.Buffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		tb.Fatal(err)
	}
	w.Close()
	p.readWG.Add(1)
	go func() {
		defer p.readWG.Done()
		defer close(p.lines)
		defer r.Close()
		br := bufio.NewReaderSize(r, 1<<16)
		for {
			line, err := br.ReadBytes('\n')
			if len(line) > 0 {
				p.lines <- bytes.TrimSuffix(line, []byte("\n"))
			}
			if err != nil {
				return
			}
		}
	}()
	tb.Cleanup(func() {
		if !p.closed {
			p.kill()
		}
	})
	return p
}

// pid is the process id of acpd.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// send writes one raw line (a newline is added).
func (p *proc) send(line string) {
	p.tb.Helper()
	p.sent = append(p.sent, []byte(line))
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		p.tb.Fatalf("writing to acpd: %v\nstderr:\n%s", err, p.stderr.String())
	}
}

// next returns the next line acpd wrote (from the backlog first).
func (p *proc) next() []byte {
	p.tb.Helper()
	if len(p.backlog) > 0 {
		l := p.backlog[0]
		p.backlog = p.backlog[1:]
		return l
	}
	return p.read()
}

func (p *proc) read() []byte {
	p.tb.Helper()
	timer := time.NewTimer(*flagReplyWait)
	defer timer.Stop()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.tb.Fatalf("acpd closed stdout; stderr:\n%s", p.stderr.String())
		}
		p.got = append(p.got, l)
		return l
	case <-timer.C:
		p.tb.Fatalf("no message from acpd within %v; stderr:\n%s", *flagReplyWait, p.stderr.String())
	}
	return nil
}

// wireMsg is a decoded JSON-RPC message.
type wireMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *rpcError       `json:"error"`
	raw     []byte
}

type rpcError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%d %s", e.Code, e.Message) }

func decodeMsg(tb testing.TB, line []byte) wireMsg {
	tb.Helper()
	var m wireMsg
	if err := json.Unmarshal(line, &m); err != nil {
		tb.Fatalf("acpd sent invalid JSON %q: %v", line, err)
	}
	m.raw = line
	return m
}

// isResponse reports whether m answers a request (it has no method).
func (m wireMsg) isResponse() bool { return m.Method == "" }

// reply waits for the response with this raw id; other messages go to the
// backlog.
func (p *proc) reply(id string) wireMsg {
	p.tb.Helper()
	for i, l := range p.backlog {
		m := decodeMsg(p.tb, l)
		if m.isResponse() && string(m.ID) == id {
			p.backlog = append(p.backlog[:i:i], p.backlog[i+1:]...)
			return m
		}
	}
	for {
		l := p.read()
		m := decodeMsg(p.tb, l)
		if m.isResponse() && string(m.ID) == id {
			return m
		}
		p.backlog = append(p.backlog, l)
	}
}

// request sends a request with a fresh numeric id and returns the raw id.
func (p *proc) request(method string, params any) string {
	p.tb.Helper()
	p.nextID++
	id := fmt.Sprint(p.nextID)
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": p.nextID, "method": method, "params": params})
	if err != nil {
		p.tb.Fatal(err)
	}
	p.send(string(b))
	return id
}

// call sends a request and waits for its response.
func (p *proc) call(method string, params any) (json.RawMessage, *rpcError) {
	p.tb.Helper()
	m := p.reply(p.request(method, params))
	return m.Result, m.Error
}

// mustCall is call that fails the test on an error response.
func (p *proc) mustCall(method string, params any, result any) {
	p.tb.Helper()
	res, rerr := p.call(method, params)
	if rerr != nil {
		p.tb.Fatalf("%s: %v\nstderr:\n%s", method, rerr, p.stderr.String())
	}
	if result != nil {
		if err := json.Unmarshal(res, result); err != nil {
			p.tb.Fatalf("%s result %s: %v", method, res, err)
		}
	}
}

// initialize performs the initialize exchange with an empty client.
func (p *proc) initialize() {
	p.tb.Helper()
	p.mustCall("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil)
}

// newSession creates a session in cwd and returns its id.
func (p *proc) newSession(cwd string) string {
	p.tb.Helper()
	var r struct {
		SessionID string `json:"sessionId"`
	}
	p.mustCall("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, &r)
	return r.SessionID
}

// close closes acpd's stdin, reads what is left of its output and waits for
// it to exit; it fails the test when acpd does not exit within the reply wait
// or exits non-zero.
func (p *proc) close() {
	p.tb.Helper()
	if p.closed {
		return
	}
	p.closed = true
	p.stdin.Close()
	p.drainAndWait()
	if p.exit != nil {
		p.tb.Fatalf("acpd exited with %v; stderr:\n%s", p.exit, p.stderr.String())
	}
	p.checkStderr()
}

func (p *proc) drainAndWait() {
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	timer := time.NewTimer(*flagReplyWait)
	defer timer.Stop()
	lines := p.lines
	for lines != nil || done != nil {
		select {
		case l, ok := <-lines:
			if !ok {
				lines = nil
				continue
			}
			p.got = append(p.got, l)
		case err := <-done:
			p.exit, done = err, nil
		case <-timer.C:
			p.cmd.Process.Kill()
			p.tb.Errorf("acpd did not exit within %v of stdin closing; stderr:\n%s", *flagReplyWait, p.stderr.String())
			timer.Reset(time.Hour)
		}
	}
	p.readWG.Wait()
}

// kill ends the process at once (test cleanup after a failure).
func (p *proc) kill() {
	p.closed = true
	p.stdin.Close()
	p.cmd.Process.Kill()
	p.drainAndWait()
}

// checkStderr fails on signs of a crash in acpd's log.
func (p *proc) checkStderr() {
	p.tb.Helper()
	checkLog(p.tb, "acpd", p.stderr.String())
}

func checkLog(tb testing.TB, name, log string) {
	tb.Helper()
	for _, bad := range []string{"panic:", "goroutine ", "DATA RACE", "fatal error:"} {
		if strings.Contains(log, bad) {
			tb.Errorf("%s log contains %q:\n%s", name, bad, log)
			return
		}
	}
}

// runCLI runs a non-protocol acpd subcommand and returns stdout, stderr and
// the exit code.
func runCLI(tb testing.TB, env []string, args ...string) (stdout, stderr string, code int) {
	tb.Helper()
	return runCLIStdin(tb, env, nil, args...)
}

// runCLIStdin is runCLI with stdin (nil: none).
func runCLIStdin(tb testing.TB, env []string, stdin io.Reader, args ...string) (stdout, stderr string, code int) {
	tb.Helper()
	bin := acpdBinary(tb) // built before the deadline starts: a build on a loaded machine is slow
	ctx, cancel := context.WithTimeout(context.Background(), *flagReplyWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.Stdin = stdin
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.ExitCode()
	default:
		tb.Fatalf("acpd %s: %v", strings.Join(args, " "), err)
	}
	return o.String(), e.String(), code
}

// ---- ACP schema validation -------------------------------------------------

// acpSchema validates messages acpd sends against the SDK's schema.json: the
// root schema (an anyOf of every message kind) and the $defs entry for the
// message's method. The root alone proves little: its extension branches
// (ExtNotification, ExtResponse, …) accept almost any object, so a
// session/update with an unknown kind or a bad stopReason passes it; the
// per-method check is what catches those.
type acpSchema struct {
	root *jsonschema.Schema
	// byDef holds compiled $defs entries by name.
	byDef map[string]*jsonschema.Schema
	// outRequest maps a client-side method (a request or notification acpd
	// sends) to its params definition; response maps an agent-side method
	// to its result definition.
	outRequest map[string]string
	response   map[string]string
}

var (
	schemaOnce sync.Once
	schemaVal  *acpSchema
	schemaErr  error
)

// loadSchema compiles the ACP schema of the installed SDK once. When the SDK
// is missing it fails under CI=true; otherwise it skips the test, or, with
// optional (tests that need no node), logs and returns nil, which
// validateConversation treats as "do not validate".
func loadSchema(tb testing.TB, optional bool) *acpSchema {
	tb.Helper()
	path := filepath.Join(sdkDir, "schema", "v1", "schema.json")
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("ACP schema missing (CI=true): %s", npmHint)
		}
		if optional {
			tb.Logf("ACP schema missing, messages are not validated; %s", npmHint)
			return nil
		}
		tb.Skipf("ACP schema missing; %s", npmHint)
	}
	schemaOnce.Do(func() { schemaVal, schemaErr = compileSchema(path) })
	if schemaErr != nil {
		tb.Fatal(schemaErr)
	}
	return schemaVal
}

func compileSchema(path string) (*acpSchema, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema.json: %w", err)
	}
	const url = "file:///acp/v1/schema.json"
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	s := &acpSchema{byDef: map[string]*jsonschema.Schema{}, outRequest: map[string]string{}, response: map[string]string{}}
	if s.root, err = c.Compile(url); err != nil {
		return nil, fmt.Errorf("compiling the root schema: %w", err)
	}
	var meta struct {
		Defs map[string]struct {
			Side   string `json:"x-side"`
			Method string `json:"x-method"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		return nil, err
	}
	for name, d := range meta.Defs {
		switch {
		case d.Method == "":
		case d.Side == "client" && !strings.HasSuffix(name, "Response"):
			s.outRequest[d.Method] = name
		case d.Side == "agent" && strings.HasSuffix(name, "Response"):
			s.response[d.Method] = name
		case d.Side == "protocol":
			s.outRequest[d.Method] = name
		}
	}
	for _, name := range []string{"Error", "SessionNotification"} {
		if _, ok := meta.Defs[name]; !ok {
			return nil, fmt.Errorf("schema.json has no $defs/%s", name)
		}
	}
	for name := range meta.Defs {
		sch, err := c.Compile(url + "#/$defs/" + name)
		if err != nil {
			return nil, fmt.Errorf("compiling $defs/%s: %w", name, err)
		}
		s.byDef[name] = sch
	}
	return s, nil
}

// validateDef validates a JSON value against one $defs entry.
func (s *acpSchema) validateDef(name string, v json.RawMessage) error {
	sch := s.byDef[name]
	if sch == nil {
		return fmt.Errorf("no $defs/%s in the schema", name)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(v))
	if err != nil {
		return err
	}
	return sch.Validate(inst)
}

// validateConversation checks every line acpd sent (out) given every line the
// client sent (in): valid JSON-RPC 2.0, valid against the root schema and
// against the definition of its method; responses match a client request by
// id and answer it once. With allAnswered, every client request must have
// been answered.
func (s *acpSchema) validateConversation(tb testing.TB, name string, in, out [][]byte, allAnswered bool) {
	tb.Helper()
	if s == nil {
		return
	}
	methodOf := map[string]string{} // client request id -> method
	for _, l := range in {
		var m wireMsg
		if json.Unmarshal(l, &m) != nil || m.Method == "" || m.ID == nil {
			continue
		}
		methodOf[string(m.ID)] = m.Method
	}
	answered := map[string]int{}
	errs := 0
	fail := func(i int, line []byte, format string, args ...any) {
		errs++
		if errs <= 10 {
			tb.Errorf("%s: message %d from acpd %s: %s", name, i+1, clipBytes(line, 600), fmt.Sprintf(format, args...))
		}
	}
	for i, l := range out {
		var m wireMsg
		var env map[string]json.RawMessage
		if err := json.Unmarshal(l, &env); err != nil {
			fail(i, l, "not a JSON object: %v", err)
			continue
		}
		_ = json.Unmarshal(l, &m)
		if m.JSONRPC != "2.0" {
			fail(i, l, `jsonrpc is not "2.0"`)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(l))
		if err != nil {
			fail(i, l, "%v", err)
			continue
		}
		if err := s.root.Validate(inst); err != nil {
			fail(i, l, "invalid against the root schema: %v", err)
		}
		_, hasID := env["id"]
		_, hasResult := env["result"]
		_, hasError := env["error"]
		switch {
		case m.Method != "" && hasID: // request to the client
			def := s.outRequest[m.Method]
			if def == "" || m.Method == "$/cancel_request" {
				fail(i, l, "acpd sent a request with a method the client side does not define")
				continue
			}
			if err := s.validateDef(def, m.Params); err != nil {
				fail(i, l, "params invalid as %s: %v", def, err)
			}
		case m.Method != "": // notification
			def := s.outRequest[m.Method]
			if def == "" || !strings.HasSuffix(def, "Notification") {
				fail(i, l, "acpd sent a notification the client side does not define")
				continue
			}
			if err := s.validateDef(def, m.Params); err != nil {
				fail(i, l, "params invalid as %s: %v", def, err)
			}
		default: // response
			if hasResult == hasError {
				fail(i, l, "a response needs exactly one of result and error")
				continue
			}
			id := string(m.ID)
			if hasError {
				if err := s.validateDef("Error", env["error"]); err != nil {
					fail(i, l, "error invalid: %v", err)
				}
				if id == "null" {
					continue
				}
			}
			method, ok := methodOf[id]
			if !ok {
				fail(i, l, "response to id %s, which the client never used", id)
				continue
			}
			answered[id]++
			if answered[id] > 1 {
				fail(i, l, "second response to id %s", id)
			}
			if hasResult {
				def := s.response[method]
				if strings.HasPrefix(method, "_") {
					// An extension method (acpd's are documented in
					// docs/): its result is the extension's, an object.
					if !bytes.HasPrefix(bytes.TrimSpace(m.Result), []byte("{")) {
						fail(i, l, "result for the extension method %s is not an object", method)
					}
					continue
				}
				if def == "" {
					fail(i, l, "result for %s, which has no response definition", method)
					continue
				}
				if err := s.validateDef(def, m.Result); err != nil {
					fail(i, l, "result invalid as %s: %v", def, err)
				}
			}
		}
	}
	if allAnswered {
		for id, method := range methodOf {
			if answered[id] == 0 {
				tb.Errorf("%s: request %s (id %s) was never answered", name, method, id)
			}
		}
	}
	if errs > 10 {
		tb.Errorf("%s: %d more invalid messages", name, errs-10)
	}
}

// validate checks the whole conversation of a raw-line process.
func (p *proc) validate(s *acpSchema, allAnswered bool) {
	p.tb.Helper()
	s.validateConversation(p.tb, fmt.Sprintf("acpd pid %d", p.pid()), p.sent, p.got, allAnswered)
}

func clipBytes(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + fmt.Sprintf("…(%d bytes)", len(b))
}

// readLines reads a JSONL file into lines (no trailing newlines).
func readLines(tb testing.TB, path string) [][]byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}
