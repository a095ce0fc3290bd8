//go:build duckdb

package main

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/planner/sqlgen"
)

// sameAnswerInputs are the planner tests' inputs (planner/planner_test.go):
// the examples and a mainnet corpus block.
var sameAnswerInputs = []string{"../../examples/mainnet", "../../examples/scenarios/geth", "../../normalform/trace/testdata/corpus/mev-inspect-rs/res/11017338.data.json"}

// lakeStatements are the statements of the example query files and of
// the planner's data-driven tests.
func lakeStatements(t *testing.T) []string {
	var out []string
	files, _ := filepath.Glob("../../examples/queries/*.fq")
	var srcs []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, string(b))
	}
	b, err := os.ReadFile("../../planner/testdata/queries.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range strings.Split(string(b), "\n====\n") {
		head, _, _ := strings.Cut(strings.Trim(c, "\n"), "\n----")
		if lines := strings.Split(head, "\n"); len(lines) > 1 {
			srcs = append(srcs, strings.Join(lines[1:], "\n"))
		}
	}
	for _, src := range srcs {
		sts, err := lang.Parse("x", src)
		if err != nil {
			continue // a case that tests a parse error: not a statement
		}
		for _, st := range sts {
			out = append(out, strings.TrimSpace(src[st.Pos().Offset:st.End().Offset]))
		}
	}
	return out
}

// ordered says a statement states the order of its rows.
func ordered(stmt string) bool {
	s := strings.ToLower(stmt)
	return strings.Contains(s, "order by") || strings.HasPrefix(s, "count") || strings.HasPrefix(s, "anomalies")
}

// TestLakeSameAnswersAsBadger runs every statement of examples/queries
// and planner/testdata/queries.txt on the Badger index and on the lake
// written from the same inputs, and compares their rows (sorted when the
// statement states no order). The statements the lake does not support
// must say so.
func TestLakeSameAnswersAsBadger(t *testing.T) {
	idx, lk := filepath.Join(t.TempDir(), "index"), t.TempDir()
	if _, errs, code := flowq(t, nil, "", append([]string{"ingest", "--index", idx, "--quiet"}, sameAnswerInputs...)...); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	if _, errs, code := flowq(t, nil, "", append([]string{"ingest", "--lake", lk}, sameAnswerInputs...)...); code != 0 {
		t.Fatalf("ingest --lake: %s", errs)
	}
	var same, unsupported int
	seen := map[string]bool{}
	for _, stmt := range lakeStatements(t) {
		if seen[stmt] || strings.HasPrefix(stmt, "explain") { // explain prints the SQL on the lake: TestLakeExplainPrintsSQL
			continue
		}
		seen[stmt] = true
		want, werrs, wcode := flowq(t, nil, "", "query", "--index", idx, "--format", "csv", stmt)
		got, gerrs, gcode := flowq(t, nil, "", "query", "--lake", lk, "--format", "csv", stmt)
		if strings.Contains(gerrs, "not supported on the lake: ") {
			unsupported++
			t.Logf("not supported on the lake: %s", stmt)
			continue
		}
		if wcode != gcode {
			t.Errorf("%s\nexit %d on the index (%s), %d on the lake (%s)", stmt, wcode, strings.TrimSpace(werrs), gcode, strings.TrimSpace(gerrs))
			continue
		}
		if !ordered(stmt) {
			want, got = sortLines(want), sortLines(got)
		}
		if want != got {
			t.Errorf("%s\n--- index:\n%s--- lake:\n%s", stmt, want, got)
			continue
		}
		same++
	}
	t.Logf("%d statements answer the same, %d not supported on the lake", same, unsupported)
	if same < 40 {
		t.Errorf("only %d statements compared", same)
	}
}

func sortLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 1 {
		body := lines[1:] // the CSV header stays first
		sort.Strings(body)
	}
	return strings.Join(lines, "\n") + "\n"
}

// TestLakeExplainPrintsSQL: explain on the lake prints the SQL it runs
// (in --dialect's spelling); a match whose reference is not in the lake
// says so; block findings are not supported, by name.
func TestLakeExplainPrintsSQL(t *testing.T) {
	lk := t.TempDir()
	if _, errs, code := flowq(t, nil, "", "ingest", "--lake", lk, mainnetDir); code != 0 {
		t.Fatalf("ingest --lake: %s", errs)
	}
	out, errs, code := flowq(t, nil, "", "query", "--lake", lk, "explain find where touches USDC")
	if code != 0 || !strings.HasPrefix(out, "SELECT "+sqlgen.RowColumns+" FROM lake WHERE list_contains(tokens, ") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	out, _, _ = flowq(t, nil, "", "query", "--lake", lk, "--dialect", "clickhouse", "explain find where touches USDC")
	if !strings.Contains(out, "has(tokens, ") {
		t.Errorf("clickhouse explain: %q", out)
	}
	missing := "0x" + strings.Repeat("ab", 32)
	_, errs, code = flowq(t, nil, "", "query", "--lake", lk, "match "+missing)
	if code != 1 || !strings.Contains(errs, "tx "+missing+" is not in the lake") {
		t.Errorf("match of a missing reference: exit %d, stderr %q", code, errs)
	}
	_, errs, code = flowq(t, nil, "", "query", "--lake", lk, "count sandwiches by block")
	if code != 1 || !strings.Contains(errs, "not supported on the lake: count sandwiches") {
		t.Errorf("findings: exit %d, stderr %q", code, errs)
	}
	out, errs, code = flowq(t, nil, "", "query", "--lake", lk, "--format", "json", "count by verdict")
	if code != 0 || !strings.Contains(out, `"verdict"`) {
		t.Errorf("json: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
