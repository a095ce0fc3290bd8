//go:build duckdb

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowq/flowq/index/lake"
)

func TestSQLOverLakeCorruptRangeNamed(t *testing.T) {
	dir := t.TempDir()
	if _, errs, code := flowq(t, nil, "", "ingest", "--lake", dir, mainnetDir); code != 0 {
		t.Fatalf("ingest exit %d: %s", code, errs)
	}
	out, errs, code := flowq(t, nil, "", "sql", "--lake", dir, "select count(*) as n, count(distinct chain) as chains from lake")
	if code != 0 || out != "n\tchains\n4\t1\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	out, _, _ = flowq(t, nil, "", "sql", "--lake", dir, "select tx_hash from lake limit 1")
	if !strings.Contains(out, "0x") {
		t.Errorf("a hash prints as %q", out)
	}
	files, _ := lake.Files(dir)
	bad := files[0]
	b, _ := os.ReadFile(bad)
	os.WriteFile(bad, b[:len(b)/3], 0o644)
	out, errs, code = flowq(t, nil, "", "sql", "--lake", dir, "select count(*) as n from lake")
	if code != 1 || out != "n\n3\n" || !strings.Contains(errs, "left out: lake file "+bad) || strings.Contains(errs, "LINE 1") {
		t.Fatalf("exit %d, stdout %q, stderr %q: want 1, the 3 rows of the other ranges, %s named", code, out, errs, filepath.Base(bad))
	}
}
