package acp

// types_gen.go is generated from the ACP JSON Schema installed by
// `cd testdata && npm ci`; the schema path is resolved from the module root.
//go:generate go run ./internal/schemagen
