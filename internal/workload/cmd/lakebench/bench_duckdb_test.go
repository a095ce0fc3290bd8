//go:build duckdb

package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// The whole run, small: two writer processes, Badger, every statement on
// both engines with equal rows, and the table.
func TestBenchSmall(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	code := benchMain([]string{"--n", "5000", "--range-size", "10", "--rounds", "2", "--dir", dir, "--scenarios", testScenarios}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errb.String(), out.String())
	}
	s := out.String()
	for _, want := range []string{
		"lake writer 0/2: 3000 rows in 3 files", "lake writer 1/2: 2000 rows in 2 files",
		"lake: 5000 rows, 5 files", "badger: 5000 transactions",
		"| write: tx/s (wall) |", "| bytes/tx |",
		"| `count by family` (count by family) | 10 |",
		"| `find where pools >= 3 and hops >= 4` (a filtered scan) | 1045 |",
		"(a bot's transactions)", "(a block range (10 blocks)) | 1000 |", "(match TX at shape)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %q in\n%s", want, s)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "lake", "chain=mainnet", "*.parquet")); len(files) != 5 {
		t.Errorf("%d range files", len(files))
	}
}
