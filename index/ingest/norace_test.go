//go:build !race

package ingest

const raceBuild = false
