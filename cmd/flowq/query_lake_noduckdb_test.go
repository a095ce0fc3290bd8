//go:build !duckdb

package main

import (
	"strings"
	"testing"
)

func TestLakeQueryWithoutDuckDBSaysHowToBuild(t *testing.T) {
	_, errs, code := flowq(t, nil, "", "query", "--lake", t.TempDir(), "count by verdict")
	if code != 1 || !strings.Contains(errs, "-tags duckdb") || !strings.Contains(errs, "--sql") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}

// A bad --dialect is a usage error (exit 2) with or without DuckDB.
func TestLakeQueryBadDialectWithoutDuckDB(t *testing.T) {
	_, errs, code := flowq(t, nil, "", "query", "--lake", t.TempDir(), "--dialect", "oracle", "count by verdict")
	if code != 2 || !strings.Contains(errs, `--dialect "oracle": want duckdb or clickhouse`) {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}
