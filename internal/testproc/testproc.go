// Package testproc lets tests check on and kill the processes a test
// started (helpers for tests that prove no process outlives acpd). The
// functions are safe for concurrent use.
package testproc
