//go:build !duckdb

package main

import (
	"io"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/repl"
)

// lakeSession: without DuckDB, flowq query --lake says how to build it.
func (q *queryFlags) lakeSession(cfg *normalform.Config, stdout io.Writer) (*repl.Session, func() error, int, error) {
	return nil, nil, 1, errNoLake
}
