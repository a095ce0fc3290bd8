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
