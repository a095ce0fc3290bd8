//go:build duckdb

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowq/flowq/index/lake"
)

// mainnetLake is a lake of examples/mainnet: four transactions, each in
// its own range of 1,000 blocks.
func mainnetLake(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, errs, code := flowq(t, nil, "", "ingest", "--lake", dir, mainnetDir); code != 0 {
		t.Fatalf("ingest --lake: exit %d: %s", code, errs)
	}
	return dir
}

// rangeFile is the range file of the lake holding block b.
func rangeFile(dir string, b uint64) string {
	l := lake.Layout{Dir: dir, Chain: "ethereum", RangeSize: lake.DefaultRangeSize}
	return l.Path(l.RangeOf(b))
}

// TestLakeCorruptRangeAnswersPartially: with one range file cut short and
// one of garbage, flowq query --lake answers from the other ranges: a
// warning before the rows names each file and the blocks it holds, every
// statement runs, and the exit status is 1 with "partial answer" and the
// missing ranges, so that no script takes the rows for the whole answer.
func TestLakeCorruptRangeAnswersPartially(t *testing.T) {
	dir := mainnetLake(t)
	torn, junk := rangeFile(dir, 11117996), rangeFile(dir, 10663903) // triangular_arb, curve_arb
	b, err := os.ReadFile(torn)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(torn, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(junk, []byte(strings.Repeat("not parquet at all\n", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := flowq(t, nil, "", "query", "--lake", dir, "--format", "csv", "find order by block; count by verdict")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (a partial answer)\nstdout %s\nstderr %s", code, out, errs)
	}
	for _, tx := range []string{"0xb04ce776ebd9a3c53b1607d8bb97571ebfa6bea1c97575b849e085a2859c9245", "0xd369757f482fb8c62b86a136742c0ff11881ef0427a69be79f7d301bf9cf9a89"} {
		if !strings.Contains(out, tx) {
			t.Errorf("the other ranges' transaction %s is not in the answer:\n%s", tx, out)
		}
	}
	if strings.Contains(out, "0xddbf97f7") || strings.Contains(out, "0x0e0e7c69") {
		t.Errorf("rows of the corrupt files:\n%s", out)
	}
	if !strings.Contains(out, "verdict,transactions,example") {
		t.Errorf("the second statement did not run:\n%s", out)
	}
	for _, want := range []string{
		"warning: partial answer: blocks 11117000..11117999 of chain ethereum missing: lake file " + torn,
		"warning: partial answer: blocks 10663000..10663999 of chain ethereum missing: lake file " + junk,
		"<query>:1:1: partial answer: blocks 10663000..10663999 of chain ethereum, blocks 11117000..11117999 of chain ethereum missing",
		"<query>:1:22: partial answer:",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if strings.Contains(errs, "LINE 1") || strings.Contains(errs, "goroutine") {
		t.Errorf("stderr: %s", errs)
	}
	// match of a reference in a missing range: not "not in the lake"
	_, errs, code = flowq(t, nil, "", "query", "--lake", dir, "match 0xddbf97f758bd0958487e18d9e307cd1256b1ad6763cd34090f4c9720ba1b4acc")
	if code != 1 || !strings.Contains(errs, "is not in the lake's readable files: it may be in [blocks 10663000..10663999 of chain ethereum blocks 11117000..11117999 of chain ethereum]") {
		t.Errorf("match of a reference in a corrupt range: exit %d, stderr %s", code, errs)
	}
	// every file unreadable: an error naming them, no rows
	for _, f := range []string{rangeFile(dir, 2340153), rangeFile(dir, 11189945)} {
		os.WriteFile(f, []byte("junk"), 0o644)
	}
	out, errs, code = flowq(t, nil, "", "query", "--lake", dir, "count by verdict")
	if code != 1 || out != "" || !strings.Contains(errs, filepath.Base(rangeFile(dir, 2340153))) {
		t.Errorf("no readable file: exit %d, stdout %q, stderr %s", code, out, errs)
	}
}

// TestLakeShortRefsAsBadger: shortened references (a prefix, 0x3db1…dcfa)
// resolve on the lake as on the index: the same rows, and the same
// not-found and ambiguity errors, word for word.
func TestLakeShortRefsAsBadger(t *testing.T) {
	idx, lk := filepath.Join(t.TempDir(), "index"), t.TempDir()
	if _, errs, code := flowq(t, nil, "", append([]string{"ingest", "--index", idx, "--quiet"}, sameAnswerInputs...)...); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	if _, errs, code := flowq(t, nil, "", append([]string{"ingest", "--lake", lk}, sameAnswerInputs...)...); code != 0 {
		t.Fatalf("ingest --lake: %s", errs)
	}
	fam, _, _ := flowq(t, nil, "", "query", "--index", idx, "--format", "csv", "count by family limit 1")
	lines := strings.Split(fam, "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[1], "0x") {
		t.Fatalf("count by family: %q", fam)
	}
	fam = strings.Split(lines[1], ",")[0]
	for _, stmt := range []string{
		"show 0x3db1a7",
		"show 0x3db1…dcfa",
		"match 0x3db1a7 at shape",
		"match 0x3db1…dcfa at family order by block",
		"same 0x3db1a776c9b6aa721514c… 0x68b1…1f06",
		"find where bot = 0xbfee…db74 order by block",
		"find where touches 0xbfee84c order by block",
		"anomalies for bot 0xbfee…db74",
		"find where family = " + fam[:10] + "…" + fam[62:] + " order by block",
		"show 0x3db1…dcfb",
		"show 0xffffff",
		"find where sender = 0xffffff",
		"find where bot = 0x000000",
		"find where family = 0xffffff",
		"show 0x3db1a",
	} {
		want, werrs, wcode := flowq(t, nil, "", "query", "--index", idx, "--format", "csv", stmt)
		got, gerrs, gcode := flowq(t, nil, "", "query", "--lake", lk, "--format", "csv", stmt)
		if wcode != gcode || want != got || werrs != gerrs {
			t.Errorf("%s\n--- index: exit %d\n%s%s--- lake: exit %d\n%s%s", stmt, wcode, want, werrs, gcode, got, gerrs)
		}
	}
	// explain prints the SQL with the whole value
	out, errs, code := flowq(t, nil, "", "query", "--lake", lk, "explain match 0x3db1a7 at shape")
	if code != 0 || !strings.Contains(out, "WHERE tx_hash = '0x3db1a776c9b6aa721514c563ffa0a609ca243bc16a2c46e16e31c46936b9dcfa'") {
		t.Errorf("explain: exit %d, stdout %s, stderr %s", code, out, errs)
	}
}

// TestLakeBadInput: on the lake, a match reference not in it, a
// statement over block findings (named) and a bad --dialect get clear
// errors, from flowq query --lake and from the REPL, with no rows.
func TestLakeBadInput(t *testing.T) {
	lk := mainnetLake(t)
	missing := "0x" + strings.Repeat("ab", 32)
	for _, c := range []struct {
		stmt, want string
	}{
		{"match " + missing + " at shape", "<query>:1:1: tx " + missing + " is not in the lake: ingest it first (flowq ingest --lake)"},
		{"match 0xabab12", "<query>:1:7: no transaction in the index starts with 0xabab12"},
		{"find sandwiches", "<query>:1:1: not supported on the lake: find sandwiches (block findings are not in the lake; use the Badger index)"},
		{"count backruns by bot", "<query>:1:1: not supported on the lake: count backruns (block findings are not in the lake; use the Badger index)"},
		{"show block 11117996", "<query>:1:1: not supported on the lake: show block (block findings are not in the lake; use the Badger index)"},
	} {
		out, errs, code := flowq(t, nil, "", "query", "--lake", lk, c.stmt)
		if code != 1 || out != "" || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q\nwant %q", c.stmt, code, out, errs, c.want)
		}
		out, errs, code = flowq(t, nil, c.stmt+";\n", "repl", "--lake", lk)
		if want := strings.Replace(c.want, "<query>", "stdin", 1); code != 1 || out != "" || !strings.Contains(errs, want) {
			t.Errorf("repl: %s: exit %d, stdout %q, stderr %q\nwant %q", c.stmt, code, out, errs, want)
		}
	}
	_, errs, code := flowq(t, nil, "", "query", "--lake", lk, "--dialect", "oracle", "explain count by verdict")
	if code != 2 || !strings.Contains(errs, `--dialect "oracle": want duckdb or clickhouse`) {
		t.Errorf("a bad dialect: exit %d, stderr %q", code, errs)
	}
}

// TestLakeCorruptPagesAnswerPartially: a range file whose frame is whole
// (magic bytes, footer) but whose pages are not is found by DuckDB when it
// reads it, left out the same way, and named with its blocks.
func TestLakeCorruptPagesAnswerPartially(t *testing.T) {
	dir := mainnetLake(t)
	bad := rangeFile(dir, 11117996)
	b, err := os.ReadFile(bad)
	if err != nil {
		t.Fatal(err)
	}
	for i := 200; i < len(b)/2; i++ {
		b[i] = 0xff
	}
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := flowq(t, nil, "", "query", "--lake", dir, "--format", "csv", "count by verdict")
	if code != 1 || out != "verdict,transactions,example\nnone,2,0xb04ce776ebd9a3c53b1607d8bb97571ebfa6bea1c97575b849e085a2859c9245\nwarning,1,0xd369757f482fb8c62b86a136742c0ff11881ef0427a69be79f7d301bf9cf9a89\n" ||
		!strings.Contains(errs, "warning: partial answer: blocks 11117000..11117999 of chain ethereum missing: lake file "+bad) ||
		!strings.Contains(errs, "<query>:1:1: partial answer: blocks 11117000..11117999 of chain ethereum missing") {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
}
