//go:build !duckdb

package main

import (
	"fmt"
	"io"
)

func runSQL(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("sql", sqlUsage, stderr)
	fs.String("lake", "", "the lake's directory")
	if _, code, ok := parseArgs(fs, args); !ok {
		return code
	}
	fmt.Fprintln(stderr, "flowq sql: this flowq was built without DuckDB: build it with 'go build -tags duckdb ./cmd/flowq', or query the lake with duckdb's own CLI (see the README's Lake section)")
	return 1
}
