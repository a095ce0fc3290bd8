//go:build !(linux || darwin || freebsd)

package serve

// processAlive cannot tell here: a server that does not answer is stale.
func processAlive(int) bool { return true }
