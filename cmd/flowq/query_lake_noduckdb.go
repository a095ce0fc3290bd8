//go:build !duckdb

package main

import (
	"fmt"
	"io"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/planner/sqlgen"
	"github.com/flowq/flowq/repl"
)

// lakeSession: without DuckDB, flowq query --lake says how to build it
// (after the usage errors, as with DuckDB).
func (q *queryFlags) lakeSession(cfg *normalform.Config, stdout, stderr io.Writer) (*repl.Session, func() error, int, error) {
	if _, ok := sqlgen.ParseDialect(*q.lake.dialect); !ok {
		return nil, nil, 2, fmt.Errorf("--dialect %q: want duckdb or clickhouse", *q.lake.dialect)
	}
	return nil, nil, 1, errNoLake
}

// openLake: without DuckDB, .open --lake and flowq repl --lake say how to
// build it.
func openLake(cfg *normalform.Config, dir string, warn io.Writer) (repl.Lake, error) {
	return nil, errNoLake
}
