package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"acpd/agent"
	"acpd/config"
	"acpd/model"
	"acpd/model/provider"
)

// modelSource adapts the provider registry to the agent: errors about
// missing models wrap agent.ErrNoModel, and the default model is looked up
// once (it may probe local servers).
type modelSource struct {
	reg *provider.Registry
}

// newModelSource builds the registry from the user configuration and the
// environment (ACPD_DISCOVER=0 turns off probing for local servers;
// ACPD_RECORD=path records all model traffic as a replay script).
func newModelSource(cfg *config.Config, lg *slog.Logger) (*modelSource, io.Closer, error) {
	var rec io.Writer
	var closer io.Closer = io.NopCloser(nil)
	if p := os.Getenv("ACPD_RECORD"); p != "" {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("ACPD_RECORD: %w", err)
		}
		rec, closer = f, f
	}
	reg := provider.New(provider.Options{
		Config:      cfg,
		Credentials: provider.OpenCredentials(""),
		Discover:    os.Getenv("ACPD_DISCOVER") != "0",
		Record:      rec,
		Logger:      lg,
		Version:     acpdVersion(),
	})
	return &modelSource{reg: reg}, closerFunc(func() error {
		return errors.Join(reg.Close(), closer.Close())
	}), nil
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

func (m *modelSource) resolve(ref string) (model.Backend, model.ModelInfo, error) {
	if ref == "" {
		return nil, model.ModelInfo{}, agent.ErrNoModel
	}
	b, info, err := m.reg.Resolve(ref)
	if err != nil && errors.Is(err, provider.ErrUnavailable) {
		err = fmt.Errorf("%w: %w", agent.ErrNoModel, err)
	}
	return b, info, err
}

func (m *modelSource) defaultModel(ctx context.Context) (string, error) {
	return m.reg.Default(ctx)
}

func (m *modelSource) models(ctx context.Context) []string {
	return m.reg.Models(ctx)
}
