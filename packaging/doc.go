// Package packaging holds no code: it tests the release packaging kept
// beside it (the ACP Registry entry in acp-registry/ and the archive names
// of .goreleaser.yaml) against the registry's published schema, and that
// both name the repository of the file repository and the licence of
// ../LICENSE.
package packaging
