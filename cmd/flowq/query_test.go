package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// queryIndex is an index of the bundled mainnet examples and the geth
// scenarios.
func queryIndex(t *testing.T) string {
	t.Helper()
	idx := filepath.Join(t.TempDir(), "idx")
	_, errs, code := flowq(t, nil, "", "ingest", "--index", idx, mainnetDir, "../../examples/scenarios/geth")
	if code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errs)
	}
	return idx
}

func TestQueryAndRun(t *testing.T) {
	idx := queryIndex(t)

	// The brief's sentence, in words.
	out, errs, code := flowq(t, nil, "", "query", "--index", idx, "--format", "json",
		"arbitrages with profit over 0.01 WETH through at least three pools")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) == 0 || lines[0] == "" {
		t.Fatalf("no rows: %q", out)
	}
	for _, l := range lines {
		var row struct {
			Verdict string
			Pools   int
		}
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if row.Verdict != "arbitrage" || row.Pools < 3 {
			t.Errorf("row breaks the query: %v", row)
		}
	}

	// Statements from stdin, CSV.
	out, errs, code = flowq(t, nil, "count by verdict", "query", "--index", idx, "--format", "csv", "-")
	if code != 0 || !strings.HasPrefix(out, "verdict,") || !strings.Contains(out, "arbitrage,") {
		t.Errorf("count by verdict: exit %d: %s%s", code, out, errs)
	}

	// A bad query: exit 1, the position and a caret.
	_, errs, code = flowq(t, nil, "", "query", "--index", idx, "find where pools >> 2")
	if code != 1 || !strings.Contains(errs, "<query>:1:") || !strings.Contains(errs, "^") {
		t.Errorf("bad query: exit %d: %s", code, errs)
	}

	// A script stops at its first failing statement and names its line.
	dir := t.TempDir()
	script := filepath.Join(dir, "s.fq")
	src := "-- two good statements, then one that fails\ncount by verdict;\nfind arbitrages limit 1;\nfind where net profit > 1 NOSUCHTOKEN;\ncount by bot;\n"
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code = flowq(t, nil, "", "run", "--index", idx, script)
	if code != 1 || !strings.Contains(errs, script+":4:") || !strings.Contains(errs, "NOSUCHTOKEN") {
		t.Errorf("run: exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "verdict") || !strings.Contains(out, "arbitrage") {
		t.Errorf("the statements before the error did not run:\n%s", out)
	}
	if strings.Contains(out, "bots") || strings.Count(out, "\n") > 12 {
		t.Errorf("run went on after the error:\n%s", out)
	}
	// A syntax error anywhere stops the script before it runs anything.
	if err := os.WriteFile(script, []byte("count by verdict;\nfind where tier = excellent;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code = flowq(t, nil, "", "run", "--index", idx, script)
	if code != 1 || out != "" || !strings.Contains(errs, script+":2:19: unknown tier \"excellent\"") {
		t.Errorf("run with a syntax error: exit %d: %q %s", code, out, errs)
	}

	// No index: a usage error naming where it looked.
	_, errs, code = flowq(t, nil, "", "query", "--index", filepath.Join(dir, "none"), "count by verdict")
	if code != 2 || !strings.Contains(errs, "no index at") {
		t.Errorf("missing index: exit %d: %s", code, errs)
	}
	// A bad --format.
	_, errs, code = flowq(t, nil, "", "query", "--index", idx, "--format", "xml", "count by verdict")
	if code != 2 || !strings.Contains(errs, `--format "xml"`) {
		t.Errorf("bad format: exit %d: %s", code, errs)
	}
}
