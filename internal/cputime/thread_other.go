//go:build !linux

package cputime

import "time"

// Thread is not measured here: 0.
func Thread() time.Duration { return 0 }
