// Package packaging holds the release version (Version, from the file
// version) and tests the release packaging kept beside it (the ACP
// Registry entry in acp-registry/ and the archive names and contents of
// .goreleaser.yaml) against the registry's published schema, and that
// they name the repository of the file repository, the licence of
// ../LICENSE and the version of the file version.
package packaging
