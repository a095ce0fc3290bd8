//go:build !duckdb

package main

import (
	"io"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/repl"
)

// lakeSession: without DuckDB, flowq query --lake says how to build it.
func (q *queryFlags) lakeSession(cfg *normalform.Config, stdout, stderr io.Writer) (*repl.Session, func() error, int, error) {
	return nil, nil, 1, errNoLake
}

// openLake: without DuckDB, .open --lake and flowq repl --lake say how to
// build it.
func openLake(cfg *normalform.Config, dir string, warn io.Writer) (repl.Lake, error) {
	return nil, errNoLake
}
