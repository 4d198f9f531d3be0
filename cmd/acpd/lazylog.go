package main

import (
	"context"
	"log/slog"
	"slices"
	"sync"
)

// lazyHandler is a slog.Handler that builds the handler it stands for on
// the first record it is given at an enabled level: the daemon's logger
// (charmbracelet/log, with lipgloss and termenv behind it) costs its
// styling stack's start-up only in a process that logs. Enabled answers
// from level without building anything; WithAttrs and WithGroup are
// recorded and applied, in order, to the built handler. It is safe for
// concurrent use, as slog requires.
type lazyHandler struct {
	level slog.Leveler
	root  *lazyRoot
	ops   []func(slog.Handler) slog.Handler // attrs and groups, in order
	once  sync.Once
	h     slog.Handler
}

// lazyRoot builds the real handler once, for a lazyHandler and every
// handler derived from it.
type lazyRoot struct {
	once  sync.Once
	build func() slog.Handler
	h     slog.Handler
}

// newLazyHandler returns a handler that calls build on its first enabled
// record; build's handler must be enabled at level and above only.
func newLazyHandler(level slog.Leveler, build func() slog.Handler) *lazyHandler {
	return &lazyHandler{level: level, root: &lazyRoot{build: build}}
}

func (l *lazyHandler) handler() slog.Handler {
	l.once.Do(func() {
		l.root.once.Do(func() { l.root.h = l.root.build() })
		h := l.root.h
		for _, op := range l.ops {
			h = op(h)
		}
		l.h = h
	})
	return l.h
}

func (l *lazyHandler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= l.level.Level()
}

func (l *lazyHandler) Handle(ctx context.Context, r slog.Record) error {
	return l.handler().Handle(ctx, r)
}

func (l *lazyHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return l.with(func(h slog.Handler) slog.Handler { return h.WithAttrs(attrs) })
}

func (l *lazyHandler) WithGroup(name string) slog.Handler {
	return l.with(func(h slog.Handler) slog.Handler { return h.WithGroup(name) })
}

func (l *lazyHandler) with(op func(slog.Handler) slog.Handler) slog.Handler {
	return &lazyHandler{level: l.level, root: l.root, ops: append(slices.Clip(l.ops), op)}
}

// built reports whether the real handler has been built (for tests).
func (l *lazyHandler) built() bool { return l.root.h != nil }
