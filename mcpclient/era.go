package mcpclient

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"acpd/internal/filelock"
)

// Protocol versions a [Server.ProtocolVersion] may pin.
const (
	// ProtocolStateless is the stateless revision (server/discover first).
	ProtocolStateless = "2026-07-28"
	// ProtocolLegacy is the newest revision connected with initialize; the
	// server may negotiate an older one.
	ProtocolLegacy = "2025-11-25"
)

// The eras of [ServerStatus.Era].
const (
	EraStateless  = "stateless"
	EraInitialize = "initialize"
)

// eraOf is the era of a connection that negotiated version.
func eraOf(version string) string {
	switch version {
	case "":
		return ""
	case ProtocolStateless:
		return EraStateless
	default:
		return EraInitialize
	}
}

// eraFile is the file in Options.StateDir remembering which stdio server
// commands need the initialize handshake.
const eraFile = "mcp-eras.json"

// eraStore remembers, per stdio server command, that the server dies on
// server/discover and must be connected with initialize. The file is read
// once per Manager, by the first connection that asks: twenty servers
// starting at once do not read it twenty times, one after another, under
// the lock.
type eraStore struct {
	path string // empty: remember nothing
	mu   sync.Mutex
	seen map[string]string // the file's verdicts, once read (guarded by mu)
}

// eraKey identifies a stdio server by its command line.
func eraKey(s Server) string {
	h := sha256.New()
	h.Write([]byte(s.Command))
	for _, a := range s.Args {
		h.Write([]byte{0})
		h.Write([]byte(a))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func (e *eraStore) load() map[string]string {
	out := map[string]string{}
	if e.path == "" {
		return out
	}
	b, err := os.ReadFile(e.path)
	if err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

// legacy reports whether s was seen dying on server/discover.
func (e *eraStore) legacy(s Server) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.seen == nil {
		e.seen = e.load()
	}
	return strings.HasPrefix(e.seen[eraKey(s)], "2") // a version string
}

// rememberLegacy records that s needs initialize. Failures are ignored: the
// verdict is relearned next time.
func (e *eraStore) rememberLegacy(s Server) {
	if e.path == "" {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(e.path), 0o700); err != nil {
		return
	}
	unlock, err := filelock.Lock(e.path+".lock", 2*time.Second)
	if err != nil {
		return
	}
	defer unlock()
	m := e.load()
	for k, v := range e.seen { // what this store read stays known
		if _, ok := m[k]; !ok {
			m[k] = v
		}
	}
	m[eraKey(s)] = ProtocolLegacy
	e.seen = m
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(e.path), eraFile+".*")
	if err != nil {
		return
	}
	_, werr := tmp.Write(append(b, '\n'))
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), e.path) != nil {
		os.Remove(tmp.Name())
	}
}
