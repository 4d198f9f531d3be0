package packaging

import (
	_ "embed"
	"strings"
)

//go:embed version
var versionFile string

// Version is the version of the next (or current) release, X.Y.Z, kept
// once in the file version beside this one: the ACP Registry entry names
// it, GoReleaser stamps it into snapshots as X.Y.Z-dev+COMMIT, and a
// binary built without release ldflags reports X.Y.Z-dev.
var Version = strings.TrimSpace(versionFile)
