package procgroup

import (
	"os"
	"strconv"
)

// liveMember reports whether process group pgid has a non-zombie member.
// The group's leader (pid pgid, the child procgroup started) is looked at
// first: while it runs, the group is alive without a scan of every
// process, which Stop's polling would otherwise repeat every pollInterval
// for each group it waits on. Only once the leader is a zombie or gone is
// /proc scanned for the rest of the group. ok is false when /proc cannot
// be read.
func liveMember(pgid int) (alive, ok bool) {
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pgid) + "/stat"); err == nil {
		if state, pg, ok := parseProcStat(b); ok && pg == pgid && state != 'Z' && state != 'X' {
			return true, true
		}
	}
	d, err := os.Open("/proc")
	if err != nil {
		return false, false
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return false, false
	}
	for _, name := range names {
		if name == "" || name[0] < '0' || name[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + name + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		state, pg, ok := parseProcStat(b)
		if ok && pg == pgid && state != 'Z' && state != 'X' {
			return true, true
		}
	}
	return false, true
}

// parseProcStat extracts the state and process group from /proc/<pid>/stat:
// "pid (comm) state ppid pgrp ...", where comm may contain spaces and
// parentheses.
func parseProcStat(b []byte) (state byte, pgrp int, ok bool) {
	i := len(b) - 1
	for i >= 0 && b[i] != ')' {
		i--
	}
	if i < 0 {
		return 0, 0, false
	}
	var fields [3]string
	rest := string(b[i+1:])
	for k := range fields {
		for len(rest) > 0 && rest[0] == ' ' {
			rest = rest[1:]
		}
		j := 0
		for j < len(rest) && rest[j] != ' ' {
			j++
		}
		if j == 0 {
			return 0, 0, false
		}
		fields[k], rest = rest[:j], rest[j:]
	}
	pg, err := strconv.Atoi(fields[2])
	if err != nil || len(fields[0]) != 1 {
		return 0, 0, false
	}
	return fields[0][0], pg, true
}
