package main

import (
	"fmt"
	"path/filepath"
	"sync"

	"acpd/agent"
	"acpd/config"
	"acpd/model"
	"acpd/model/replay"
)

// resolver turns provider/model references into backends, caching one
// backend per reference. Safe for concurrent use.
type resolver struct {
	loader *config.Loader

	mu    sync.Mutex
	cache map[string]resolved
}

type resolved struct {
	b    model.Backend
	info model.ModelInfo
}

func newResolver(l *config.Loader) *resolver {
	return &resolver{loader: l, cache: map[string]resolved{}}
}

// models lists the references offered in the model config option.
func (r *resolver) models() []string {
	cfg := r.loader.User()
	var refs []string
	if cfg.Model != "" {
		refs = append(refs, cfg.Model)
	}
	return refs
}

func (r *resolver) resolve(ref string) (model.Backend, model.ModelInfo, error) {
	if ref == "" {
		return nil, model.ModelInfo{}, agent.ErrNoModel
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.cache[ref]; ok {
		return c.b, c.info, nil
	}
	provider, name, err := model.ParseRef(ref)
	if err != nil {
		return nil, model.ModelInfo{}, err
	}
	var c resolved
	switch provider {
	case "replay":
		path, err := filepath.Abs(name)
		if err != nil {
			return nil, model.ModelInfo{}, err
		}
		b, err := replay.New(path)
		if err != nil {
			return nil, model.ModelInfo{}, err
		}
		c = resolved{b: b, info: model.ModelInfo{ID: name, Name: "replay " + filepath.Base(name), Tools: true, Images: true, Reasoning: true}}
	default:
		return nil, model.ModelInfo{}, fmt.Errorf("%w: provider %q is not available", agent.ErrNoModel, provider)
	}
	r.cache[ref] = c
	return c.b, c.info, nil
}
