//go:build !linux

package main

import "time"

// threadCPU is not measured here: 0.
func threadCPU() time.Duration { return 0 }
