//go:build unix && !linux

package procgroup

// liveMember cannot tell zombies from live members without /proc: kill(2)
// decides (an unreaped zombie then counts as alive until reaped).
func liveMember(int) (alive, ok bool) { return false, false }
