package provider

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"

	"acpd/model"
)

// Probe checks that the model ref can be reached without asking it
// anything: an exec plug-in is started and must answer its hello; an HTTP
// provider's endpoint must accept a connection. It is for `acpd doctor`,
// where "the model resolves" says nothing about a plug-in that exits at
// once or an endpoint that refuses connections. ctx bounds the probe.
func (r *Registry) Probe(ctx context.Context, ref string) error {
	name, _, err := model.ParseRef(ref)
	if err != nil {
		return err
	}
	if name == replayProvider {
		return nil // a file, read when resolved
	}
	r.mu.Lock()
	s, ok := r.spec(name)
	var e *entry
	var base string
	if ok {
		e, err = r.backend(s)
		if err == nil && e.lister == nil {
			base, err = r.base(s, r.found)
		}
	}
	r.mu.Unlock()
	switch {
	case !ok:
		return fmt.Errorf("unknown provider %q", name)
	case err != nil:
		return err
	case e.lister != nil:
		if _, err := e.lister.Models(ctx); err != nil {
			return fmt.Errorf("the plug-in did not answer its hello: %w", err)
		}
		return nil
	case base == "":
		return nil // a factory backend: nothing to connect to
	}
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return fmt.Errorf("endpoint %s is not a URL", redactURL(base))
	}
	host := u.Host
	if u.Port() == "" {
		port := "443"
		if u.Scheme == "http" {
			port = "80"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return fmt.Errorf("endpoint %s does not accept connections: %w", redactURL(base), err)
		}
		// No name, no route, no answer: maybe only from here.
		return &UnreachableError{Endpoint: redactURL(base), Err: err}
	}
	return c.Close()
}

// UnreachableError is a probe that could not reach the endpoint at all (no
// name resolution, no route, no answer in time), which may say more
// about the machine's network than about the configuration.
type UnreachableError struct {
	Endpoint string
	Err      error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("endpoint %s is not reachable from here: %v", e.Endpoint, e.Err)
}

func (e *UnreachableError) Unwrap() error { return e.Err }
