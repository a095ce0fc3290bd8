//go:build !duckdb

package main

import (
	"strings"
	"testing"
)

func TestSQLWithoutDuckDBSaysHowToBuild(t *testing.T) {
	_, errs, code := flowq(t, nil, "", "sql", "--lake", t.TempDir(), "select 1")
	if code != 1 || !strings.Contains(errs, "-tags duckdb") {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
}
