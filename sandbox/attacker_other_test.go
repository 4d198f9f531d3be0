//go:build !linux

package sandbox

func attacker() {}
