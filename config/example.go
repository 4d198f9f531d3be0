package config

import _ "embed"

// Example is example.toml, the annotated user configuration that documents
// every key; `acpd config example` prints it.
//
//go:embed example.toml
var Example string
