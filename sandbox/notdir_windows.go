package sandbox

func isNotDir(error) bool { return false }
