//go:build !duckdb

package main

import (
	"context"
	"errors"
)

// Built without DuckDB, the command stops before it writes anything.
func checkLakeEngine() error {
	return errors.New("built without DuckDB: run it as 'go run -tags duckdb ./internal/workload/cmd/lakebench' (the lake's queries run on embedded DuckDB)")
}

type lakeEngine struct{}

func openLake(string) (*lakeEngine, error) { return nil, checkLakeEngine() }

func (*lakeEngine) name() string { return "lake" }
func (*lakeEngine) close()       {}
func (*lakeEngine) run(context.Context, string, func(string)) (int, error) {
	return 0, checkLakeEngine()
}

func (l *lakeEngine) sqlOnlyEngine() engine { return l }
