package main

import (
	"strings"
	"testing"
)

// TestSQLQueryPrintsDialects: flowq query --sql prints a statement's SQL
// over the lake, in DuckDB's or ClickHouse's dialect, without DuckDB.
func TestSQLQueryPrintsDialects(t *testing.T) {
	stmt := "find where touches USDC order by gross profit desc limit 3; count by family"
	out, errs, code := flowq(t, nil, "", "query", "--sql", stmt)
	if code != 0 || !strings.Contains(out, "list_contains(tokens, '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48')") || !strings.Contains(out, "GROUP BY k") || strings.Count(out, ";\n") != 2 {
		t.Fatalf("duckdb: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	out, errs, code = flowq(t, nil, "", "query", "--sql", "--dialect", "clickhouse", stmt)
	if code != 0 || !strings.Contains(out, "has(tokens, '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48')") || !strings.Contains(out, "argMin(") {
		t.Fatalf("clickhouse: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if _, errs, code = flowq(t, nil, "", "query", "--sql", "--dialect", "oracle", stmt); code != 2 || !strings.Contains(errs, "--dialect") {
		t.Fatalf("a bad dialect: exit %d, stderr %q", code, errs)
	}
	_, errs, code = flowq(t, nil, "", "query", "--sql", "find sandwiches")
	if code != 1 || !strings.Contains(errs, "<query>:1:1: not supported on the lake: find sandwiches") {
		t.Fatalf("findings: exit %d, stderr %q", code, errs)
	}
}
