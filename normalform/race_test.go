//go:build race

package normalform

// raceBuild: the tests run under the race detector, where sync.Pool drops
// a quarter of what is put back at random, so pooled storage is allocated
// again: allocation counts say nothing there.
const raceBuild = true
