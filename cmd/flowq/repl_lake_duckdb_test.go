//go:build duckdb

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/planner/sqlgen"
	"github.com/flowq/flowq/repl"
)

// TestREPLOpenLake: .open --lake DIR runs the statements on the lake
// (find, count, match, anomalies, show, explain printing SQL, shortened
// references), .status and the prompt say which is open, the commands
// that need the index say a lake is open, and .open PATH goes back to the
// Badger index; flowq repl --lake DIR starts on the lake.
func TestREPLOpenLake(t *testing.T) {
	idx, lk := filepath.Join(t.TempDir(), "index"), mainnetLake(t)
	if _, errs, code := flowq(t, nil, "", "ingest", "--index", idx, "--quiet", mainnetDir); code != 0 {
		t.Fatalf("ingest: %s", errs)
	}
	const stmts = "count by verdict;\nfind order by block;\nmatch 0xddbf97 at family order by block;\nanomalies for bot 0x7a250d5630b4cf539739df2c5dacb4c659f2488d;\nshow 0xddbf97;\n"
	onIndex, errs, code := flowq(t, nil, stmts, "repl", "--index", idx)
	if code != 0 {
		t.Fatalf("on the index: exit %d: %s", code, errs)
	}
	env := map[string]string{"HOME": t.TempDir()}
	script := ".status\n.open --lake " + lk + "\n.status\n" + stmts + ".stats\nexplain find where touches USDC;\n.open " + idx + "\n.status\ncount by verdict;\n"
	out, errs, code := flowq(t, env, script, "repl", "--index", idx, "--allow-writes")
	if code != 1 { // .stats fails on the lake
		t.Fatalf("exit %d, stderr %s", code, errs)
	}
	wantOut := "index " + idx + " (Badger)\n" +
		"lake " + lk + ": statements run as SQL on DuckDB over its range files (.open PATH goes back to an index)\n" +
		"lake " + lk + " (Parquet range files; statements run as SQL on DuckDB; .open PATH goes back to an index)\n" +
		onIndex
	if !strings.HasPrefix(out, wantOut) {
		t.Fatalf("the lake's answers differ from the index's\n--- got:\n%s--- want (prefix):\n%s", out, wantOut)
	}
	rest := out[len(wantOut):]
	if !strings.HasPrefix(rest, "SELECT "+sqlgen.RowColumns+" FROM lake WHERE list_contains(tokens, ") {
		t.Errorf("explain on the lake prints no SQL:\n%s", rest)
	}
	count, _, _ := flowq(t, nil, "count by verdict;", "repl", "--index", idx)
	if !strings.HasSuffix(rest, "index "+idx+"\nindex "+idx+" (Badger)\n"+count) {
		t.Errorf(".open PATH did not go back to the index:\n%s", rest)
	}
	if errs != "the lake "+lk+" is open, not an index: this command needs a Badger index (.open PATH); a lake is written with flowq ingest --lake\n" {
		t.Errorf("stderr %q", errs)
	}

	// flowq repl --lake DIR
	out, errs, code = flowq(t, env, ".status\n"+stmts, "repl", "--lake", lk)
	if code != 0 || out != "lake "+lk+" (Parquet range files; statements run as SQL on DuckDB; .open PATH goes back to an index)\n"+onIndex {
		t.Errorf("repl --lake: exit %d, stderr %s, stdout:\n%s", code, errs, out)
	}
	if out, _, _ = flowq(t, env, "find;", "repl", "--lake", lk); !strings.HasSuffix(out, "\n(rows in lake order: by block, then position in the block; order by METRIC chooses another)\n") {
		t.Errorf("a find without order by on the lake: no order note:\n%s", out)
	}
	if _, errs, code = flowq(t, env, "", "repl", "--lake", lk, "--index", idx); code != 2 || !strings.Contains(errs, "not both") {
		t.Errorf("--lake and --index: exit %d, %s", code, errs)
	}
	if _, errs, code = flowq(t, env, "", "repl", "--lake", filepath.Join(lk, "none")); code != 1 || !strings.Contains(errs, "flowq repl: lake ") {
		t.Errorf("--lake of no directory: exit %d, %s", code, errs)
	}

	// the prompt says a lake is open
	l, err := openLake(normalform.DefaultConfig(), lk, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	r := repl.New(repl.Options{Lake: l})
	defer r.Close()
	if p := r.Prompt(); p != repl.LakePrompt {
		t.Errorf("prompt %q on a lake", p)
	}
}

// TestREPLLakeCorruptRangeWarnsBeforeRows: in the REPL, a statement over
// a lake with an unreadable range file prints the warning (the file, the
// blocks missing) before its rows, and "partial answer" after them; the
// script's exit status is 1.
func TestREPLLakeCorruptRangeWarnsBeforeRows(t *testing.T) {
	lk := mainnetLake(t)
	bad := rangeFile(lk, 11117996)
	if err := os.WriteFile(bad, []byte("garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	var both bytes.Buffer
	code := run([]string{"repl", "--lake", lk}, strings.NewReader("find order by block;\n"), &both, &both, func(string) (string, bool) { return "", false })
	out := both.String()
	warn := strings.Index(out, "warning: partial answer: blocks 11117000..11117999 of chain ethereum missing: lake file "+bad)
	row := strings.Index(out, "0xb04c")
	after := strings.Index(out, "stdin:1:1: partial answer: blocks 11117000..11117999 of chain ethereum missing")
	if code != 1 || warn < 0 || row < 0 || after < 0 || !(warn < row && row < after) {
		t.Fatalf("exit %d; want the warning, the rows, then the partial answer's error:\n%s", code, out)
	}
}
