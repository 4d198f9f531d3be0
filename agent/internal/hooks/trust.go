package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"acpd/internal/atomicfile"
)

// Trust remembers which project hooks the user approved: per project root,
// the digests ([Set.Digest]) of the hook sets approved. A changed hook
// file has another digest, so it is asked about again. It may be used
// concurrently; processes sharing the file may each lose the other's
// concurrent approval, which is then asked again (never granted).
type Trust struct {
	mu   sync.Mutex
	path string
}

// NewTrust keeps approvals in the file path (under acpd's state directory).
func NewTrust(path string) *Trust { return &Trust{path: path} }

// maxApprovals bounds the digests kept per project (the newest stay).
const maxApprovals = 16

func (t *Trust) read() (map[string][]string, error) {
	data, err := os.ReadFile(t.path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string][]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	m := map[string][]string{}
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", t.path, err)
	}
	return m, nil
}

// Trusted reports whether the hooks with digest were approved for project.
// An unreadable file trusts nothing.
func (t *Trust) Trusted(project, digest string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	m, err := t.read()
	return err == nil && slices.Contains(m[project], digest)
}

// Approve remembers digest for project, writing the file atomically (a
// crash leaves the old file or the new one).
func (t *Trust) Approve(project, digest string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	m, err := t.read()
	if err != nil {
		m = map[string][]string{}
	}
	if slices.Contains(m[project], digest) {
		return nil
	}
	list := append(m[project], digest)
	if len(list) > maxApprovals {
		list = list[len(list)-maxApprovals:]
	}
	m[project] = list
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o700); err != nil {
		return err
	}
	return atomicfile.WriteFile(t.path, append(data, '\n'), 0o600)
}
