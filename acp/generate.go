package acp

// types_gen.go, unstable_gen.go and methods_gen.go are generated from the
// ACP JSON Schemas (schema.json and schema.unstable.json) installed by
// `cd testdata && npm ci`; the schema path is resolved from the module root.
//go:generate go run ./internal/schemagen
