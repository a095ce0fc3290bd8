//go:build !duckdb

package main

import (
	"strings"
	"testing"
)

// TestREPLLakeWithoutDuckDBSaysHowToBuild: .open --lake and flowq repl
// --lake, in a flowq built without DuckDB, say how to build it.
func TestREPLLakeWithoutDuckDBSaysHowToBuild(t *testing.T) {
	dir := replIndex(t)
	out, errs, code := flowq(t, nil, ".open --lake "+t.TempDir()+"\n.status\n", "repl", "--index", dir, "--allow-writes")
	if code != 1 || !strings.Contains(errs, "-tags duckdb") || !strings.Contains(out, "index "+dir+" (Badger)") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	_, errs, code = flowq(t, nil, "", "repl", "--lake", t.TempDir())
	if code != 1 || !strings.Contains(errs, "-tags duckdb") {
		t.Fatalf("repl --lake: exit %d, stderr %q", code, errs)
	}
}
