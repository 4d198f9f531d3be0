package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"acpd/config"
	"acpd/internal/lazy"

	"acpd/internal/atomicfile"
	"acpd/internal/filelock"
)

const (
	// credentialsVersion is the version of the credentials file format.
	credentialsVersion = 1
	// maxCredentialsBytes bounds the credentials file.
	maxCredentialsBytes = 1 << 20
	// lockTimeout bounds the wait for another process's update.
	lockTimeout = 10 * time.Second
)

// providerNameRE is what a provider name may look like (as in config).
var providerNameRE = lazy.Value[*regexp.Regexp]{New: func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]+$`) }}

// Credentials are API keys stored by `acpd login`, one per provider name,
// in a JSON file readable by its owner only:
//
//	{"version": 1, "providers": {"anthropic": {"apiKey": "..."}}}
//
// The file is read on every Get and Providers call, so keys stored by
// another process are seen at once. A file that is accessible by other
// users, owned by another user, or malformed is not used: Get reports no
// key, and [Registry] errors about a missing key say why. Set and Delete
// rewrite the file atomically (a new 0600 file renamed over the old one)
// under an advisory lock, so concurrent updates from several processes
// are not lost. A Credentials is safe for concurrent use.
type Credentials struct {
	path string
	mu   sync.Mutex // serialises updates within the process
}

// credFile is the file format.
type credFile struct {
	Version   int                  `json:"version"`
	Providers map[string]credEntry `json:"providers"`
}

type credEntry struct {
	APIKey string `json:"apiKey"`
}

// OpenCredentials returns the credentials stored at path, which need not
// exist yet. An empty path means credentials.json in config.UserDir
// ($XDG_CONFIG_HOME/acpd, ~/.config/acpd, %APPDATA%\acpd on Windows); when
// no location is usable, Get finds nothing and Set fails.
func OpenCredentials(path string) *Credentials {
	if path == "" {
		if dir := config.UserDir(os.Getenv); dir != "" {
			path = filepath.Join(dir, "credentials.json")
		}
	}
	return &Credentials{path: path}
}

// Path is the credentials file ("" when no location is usable).
func (c *Credentials) Path() string { return c.path }

// Get returns the key stored for provider.
func (c *Credentials) Get(provider string) (string, bool) {
	keys, err := c.readShared()
	if err != nil {
		return "", false
	}
	k, ok := keys[provider]
	return k, ok
}

// Providers returns the names of the providers with a stored key, sorted.
func (c *Credentials) Providers() []string {
	keys, err := c.readShared()
	if err != nil {
		return nil
	}
	return slices.Sorted(maps.Keys(keys))
}

// Set stores key for provider, replacing any earlier key. Surrounding
// white space is removed; an empty key, a key with control characters and
// an invalid provider name are errors. The directory is created with mode
// 0700 when missing; the file always gets mode 0600.
func (c *Credentials) Set(provider, key string) error {
	if !providerNameRE.Get().MatchString(provider) {
		return fmt.Errorf("credentials: invalid provider name %q: use letters, digits, '.', '_' and '-'", provider)
	}
	key = strings.TrimSpace(key)
	if key == "" {
		return errors.New("credentials: empty key")
	}
	if err := checkKey(key); err != nil {
		return fmt.Errorf("credentials: the key %v", err)
	}
	return c.update(func(keys map[string]string) { keys[provider] = key })
}

// Delete removes the key of provider, or every key when provider is "".
// Deleting a key that is not stored is not an error. When no key remains
// the file is removed; Delete("") removes it even when it is malformed.
func (c *Credentials) Delete(provider string) error {
	if provider == "" {
		return c.update(nil)
	}
	return c.update(func(keys map[string]string) { delete(keys, provider) })
}

// check returns why the stored credentials cannot be used, or nil when
// they can (or there are none).
func (c *Credentials) check() error {
	_, err := c.readShared()
	return err
}

// update applies change to the stored keys under the locks and writes the
// result; a nil change removes every key without reading the file.
func (c *Credentials) update(change func(map[string]string)) error {
	if c.path == "" {
		return errors.New("credentials: no location: set XDG_CONFIG_HOME or HOME")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	dir := filepath.Dir(c.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	unlock, err := filelock.Lock(c.path+".lock", lockTimeout)
	if err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	defer unlock()
	if change == nil {
		return c.write(nil)
	}
	// Not strict: rewriting a file that others could read fixes its mode.
	keys, err := c.read(false)
	if err != nil {
		return fmt.Errorf("%w (fix or delete the file)", err)
	}
	change(keys)
	return c.write(keys)
}

// readShared is read(true) outside update: on Windows it holds the lock
// shared (atomicfile.ReaderLock), so that this open reader never makes an
// update's replacement of the file fail.
func (c *Credentials) readShared() (map[string]string, error) {
	if c.path != "" {
		unlock, err := atomicfile.ReaderLock(c.path+".lock", lockTimeout)
		if err != nil {
			return nil, fmt.Errorf("credentials: %w", err)
		}
		defer unlock()
	}
	return c.read(true)
}

// read returns the stored keys; a missing file holds none. strict rejects
// a file that is not private to the user.
func (c *Credentials) read(strict bool) (map[string]string, error) {
	keys := map[string]string{}
	if c.path == "" {
		return keys, nil
	}
	f, err := atomicfile.Open(c.path)
	if errors.Is(err, os.ErrNotExist) {
		return keys, nil
	}
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("credentials file %s is not a regular file", c.path)
	}
	if strict {
		if err := checkPrivate(fi); err != nil {
			return nil, fmt.Errorf("credentials file %s is %v", c.path, err)
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxCredentialsBytes+1))
	if err != nil {
		return nil, fmt.Errorf("credentials: %w", err)
	}
	if len(data) > maxCredentialsBytes {
		return nil, fmt.Errorf("credentials file %s is larger than %d bytes", c.path, maxCredentialsBytes)
	}
	return decodeCredentials(c.path, data)
}

// decodeCredentials parses the credentials file data. Its errors never
// quote the file's content.
func decodeCredentials(path string, data []byte) (map[string]string, error) {
	var cf credFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cf); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("credentials file %s is not valid JSON (at byte %d)", path, se.Offset)
		}
		return nil, fmt.Errorf("credentials file %s does not have the expected format", path)
	}
	if dec.More() {
		return nil, fmt.Errorf("credentials file %s has data after its JSON object", path)
	}
	if cf.Version != credentialsVersion {
		return nil, fmt.Errorf("credentials file %s has version %d, want %d", path, cf.Version, credentialsVersion)
	}
	keys := make(map[string]string, len(cf.Providers))
	for name, e := range cf.Providers {
		if !providerNameRE.Get().MatchString(name) || e.APIKey == "" || checkKey(e.APIKey) != nil {
			return nil, fmt.Errorf("credentials file %s has an invalid entry (provider %q)", path, safeName(name))
		}
		keys[name] = e.APIKey
	}
	return keys, nil
}

// safeName returns name when it is a valid provider name, else a
// placeholder (it may be anything a broken file holds).
func safeName(name string) string {
	if providerNameRE.Get().MatchString(name) && len(name) <= 64 {
		return name
	}
	return "(invalid name)"
}

// write replaces the file with keys atomically, or removes it when keys
// is empty.
func (c *Credentials) write(keys map[string]string) error {
	if len(keys) == 0 {
		if err := os.Remove(c.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("credentials: %w", err)
		}
		if err := atomicfile.SyncDir(filepath.Dir(c.path)); err != nil {
			return fmt.Errorf("credentials: %w", err)
		}
		return nil
	}
	cf := credFile{Version: credentialsVersion, Providers: map[string]credEntry{}}
	for name, k := range keys {
		cf.Providers[name] = credEntry{APIKey: k}
	}
	data, err := json.MarshalIndent(cf, "", "  ")
	if err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	data = append(data, '\n')

	if err := atomicfile.WriteFile(c.path, data, 0o600); err != nil {
		return fmt.Errorf("credentials: %w", err)
	}
	return nil
}
