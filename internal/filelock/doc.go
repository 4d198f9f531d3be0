// Package filelock takes exclusive, advisory, whole-file locks between
// processes (flock(2) on unix, LockFileEx on Windows). A lock dies with its
// process, so a crash never leaves a file locked. Used for files several
// acpd processes rewrite: remembered permissions and stored credentials.
package filelock
