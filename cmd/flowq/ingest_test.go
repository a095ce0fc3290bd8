package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const mainnetDir = "../../examples/mainnet"

func TestIngestAndExport(t *testing.T) {
	idx := filepath.Join(t.TempDir(), "idx")
	_, errs, code := flowq(t, nil, "", "ingest", "--index", idx, mainnetDir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "4 transactions stored, 0 skipped (already indexed), 0 failed; 4 inputs (0 skipped)") {
		t.Errorf("summary: %s", errs)
	}
	if strings.Contains(errs, "\r") {
		t.Errorf("a progress bar on a non-terminal: %q", errs)
	}
	// Again: every input is skipped.
	_, errs, code = flowq(t, nil, "", "ingest", mainnetDir, "--index", idx)
	if code != 0 || !strings.Contains(errs, "0 transactions stored, 4 skipped (already indexed), 0 failed; 4 inputs (4 skipped)") {
		t.Errorf("second ingest: exit %d: %s", code, errs)
	}
	// --progress forces the bar.
	_, errs, _ = flowq(t, nil, "", "ingest", "--index", idx, "--progress", "--force", mainnetDir)
	if !strings.Contains(errs, "\r[") || !strings.Contains(errs, "4/4 inputs") {
		t.Errorf("no progress bar: %q", errs)
	}

	out, errs, code := flowq(t, nil, "", "export", "--index", idx, "--format", "csv")
	if code != 0 {
		t.Fatalf("export: exit %d: %s", code, errs)
	}
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || strings.Join(rows[0][:6], ",") != "hash,block,verdict,reasons,cycles,latency_ms" {
		t.Fatalf("csv: %v", rows)
	}
	found := false
	for _, r := range rows[1:] {
		if r[0] == "0xddbf97f758bd0958487e18d9e307cd1256b1ad6763cd34090f4c9720ba1b4acc" {
			found = true
			if r[1] != "11117996" || r[2] != "warning" || r[3] != "costs_unknown" || r[4] != "1" {
				t.Errorf("triangular_arb row %v", r)
			}
		}
	}
	if !found {
		t.Error("triangular_arb not exported")
	}

	file := filepath.Join(t.TempDir(), "out.jsonl")
	_, errs, code = flowq(t, nil, "", "export", "--index", idx, "--format", "jsonl", "--out", file, "--blocks", "11117996")
	if code != 0 || !strings.Contains(errs, "1 transactions written to "+file) {
		t.Fatalf("export jsonl: exit %d: %s", code, errs)
	}
	data, _ := os.ReadFile(file)
	var j map[string]any
	if err := json.Unmarshal(data, &j); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	if j["verdict"] != "warning" || j["tier"] != "probable" || j["hashes"] == nil {
		t.Errorf("jsonl: %s", data)
	}
}

func TestIngestFailuresAndRetry(t *testing.T) {
	dir := t.TempDir()
	good, err := os.ReadFile(filepath.Join(mainnetDir, "curve_arb.json"))
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, good[:len(good)/3], 0o644)
	env := map[string]string{"FLOWQ_INDEX": filepath.Join(t.TempDir(), "idx")}
	_, errs, code := flowq(t, env, "", "ingest", dir)
	if code != 1 || !strings.Contains(errs, "bad.json: decode") || !strings.Contains(errs, "1 failed") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	out, _, code := flowq(t, env, "", "ingest", "--failures")
	if code != 0 || !strings.Contains(out, "bad.json: decode") {
		t.Errorf("--failures: exit %d: %s", code, out)
	}
	os.WriteFile(bad, good, 0o644)
	_, errs, code = flowq(t, env, "", "ingest", "--retry-failed")
	if code != 0 || !strings.Contains(errs, "1 transactions stored") || !strings.Contains(errs, "0 failed") {
		t.Errorf("--retry-failed: exit %d: %s", code, errs)
	}
	out, _, _ = flowq(t, env, "", "ingest", "--failures")
	if out != "" {
		t.Errorf("failures left after the retry: %s", out)
	}
}

func TestIngestUsage(t *testing.T) {
	env := map[string]string{"FLOWQ_INDEX": filepath.Join(t.TempDir(), "idx")}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"ingest"}, 2, "give the files or directories"},
		{[]string{"ingest", "--retry-failed", mainnetDir}, 2, "take no inputs"},
		{[]string{"ingest", "no/such/dir"}, 2, "no such file"},
		{[]string{"ingest", "--chain", "nowhere", mainnetDir}, 2, "nowhere"},
		{[]string{"ingest", "--rpc", "http://127.0.0.1:1", "--blocks", "1..2", "--confirm", "traces"}, 2, "--confirm needs --mode receipts"},
		{[]string{"ingest", "--rpc", "http://127.0.0.1:1", "--blocks", "1..2", "--mode", "geth", "--confirm", "traces"}, 2, "--confirm needs --mode receipts"},
		{[]string{"ingest", "--confirm", "traces", mainnetDir}, 2, "--confirm needs --mode receipts"},
		{[]string{"ingest", "--rpc", "http://127.0.0.1:1", "--blocks", "1..2", "--mode", "receipts", "--confirm", "receipts"}, 2, "want traces"},
		{[]string{"ingest", "--mode", "receipts", "--confirm", "traces", mainnetDir}, 2, "go with --rpc URL --blocks"},
		{[]string{"ingest", "--blocks", "1..2", "--mode", "receipts"}, 2, "--blocks needs --rpc"},
		{[]string{"ingest", "--rpc", "http://127.0.0.1:1", "--blocks", "2..1"}, 2, "2..1"},
		{[]string{"ingest", "--rpc", "http://127.0.0.1:1", "--blocks", "1..2", mainnetDir}, 2, "--blocks takes no files"},
		// a billion workers was a fatal out-of-memory and a dump of every goroutine
		{[]string{"ingest", "--workers", "1000000000", mainnetDir}, 2, "--workers 1000000000: want 1 to 1024"},
		{[]string{"ingest", "--workers", "-3", mainnetDir}, 2, "--workers -3"},
		{[]string{"ingest", "--batch", "100000000000", mainnetDir}, 2, "--batch 100000000000: want 1 to 65536"},
		{[]string{"ingest", "--rpc", "http://127.0.0.1:1", "--blocks", "1..2", "--concurrency", "1000000000"}, 2, "--concurrency 1000000000: want 1 to 256"},
		{[]string{"ingest", "--rpc", "http://127.0.0.1:1", "--blocks", "1..2", "--rpc-batch", "5000"}, 2, "--rpc-batch 5000: want 1 to 1024"},
		{[]string{"fetch", "--rpc", "http://127.0.0.1:1", "--out", "OUT", "--blocks", "1..2", "--concurrency", "1000000000"}, 2, "--concurrency 1000000000: want 1 to 256"},
		{[]string{"fetch", "--rpc", "http://127.0.0.1:1", "--out", "OUT", "--blocks", "1..2", "--batch", "5000"}, 2, "--batch 5000: want 1 to 1024"},
		{[]string{"export", "--format", "xml"}, 2, "unknown export format"},
		{[]string{"export", "--blocks", "9..3"}, 2, "ends before it starts"},
		{[]string{"export", "--blocks", "3", "--query", "find arbitrages"}, 2, "--blocks and --query"},
		{[]string{"export"}, 1, "no index at"},
		// after the export above: this one opens (makes) the index before it dials
		{[]string{"ingest", "--rpc", "ws://127.0.0.1:1", "--blocks", "1..2"}, 1, "is a WebSocket endpoint"},
	} {
		for i, a := range tc.args {
			if a == "OUT" {
				tc.args[i] = filepath.Join(t.TempDir(), "out")
			}
		}
		_, errs, code := flowq(t, env, "", tc.args...)
		if code != tc.code || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, want %d and %q: %s", tc.args, code, tc.code, tc.want, errs)
		}
	}
}

func TestIndexDir(t *testing.T) {
	for _, tc := range []struct {
		flag string
		env  map[string]string
		want string
	}{
		{"/x", map[string]string{"FLOWQ_INDEX": "/y"}, "/x"},
		{"", map[string]string{"FLOWQ_INDEX": "/y", "XDG_DATA_HOME": "/d"}, "/y"},
		{"", map[string]string{"XDG_DATA_HOME": "/d", "HOME": "/h"}, "/d/flowq/index"},
		{"", map[string]string{"HOME": "/h"}, "/h/.local/share/flowq/index"},
	} {
		got, err := indexDir(tc.flag, func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok })
		if err != nil || got != filepath.FromSlash(tc.want) {
			t.Errorf("%q %v: %q, %v", tc.flag, tc.env, got, err)
		}
	}
}
