package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// blockBundle joins the scenario sandwich's three per-transaction geth
// bundles (block 137) into one whole-block bundle, as flowq fetch --blocks
// writes it: the debug_traceBlockByNumber list of {"txHash", "result"},
// the receipts and the header. keep says which transactions (by index)
// the bundle holds; corrupt, which one's trace is replaced by one that
// does not decode.
func blockBundle(t *testing.T, keep []int, corrupt int) string {
	t.Helper()
	type entry struct {
		TxHash string          `json:"txHash"`
		Result json.RawMessage `json:"result"`
	}
	var traces []entry
	var receipts []json.RawMessage
	var header json.RawMessage
	for i, n := range []string{"sandwich_front", "sandwich_victim", "sandwich_back"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", "scenarios", "geth", n+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var b struct {
			Block    json.RawMessage   `json:"block"`
			Receipts []json.RawMessage `json:"receipts"`
			Traces   json.RawMessage   `json:"traces"`
		}
		if err := json.Unmarshal(data, &b); err != nil {
			t.Fatal(err)
		}
		header = b.Block
		kept := false
		for _, k := range keep {
			kept = kept || k == i
		}
		if !kept {
			continue
		}
		var rc struct {
			Hash string `json:"transactionHash"`
		}
		if err := json.Unmarshal(b.Receipts[0], &rc); err != nil {
			t.Fatal(err)
		}
		tr := b.Traces
		if i == corrupt {
			tr = json.RawMessage(`{"from":"0x12","to":"nonsense","calls":7}`)
		}
		traces = append(traces, entry{TxHash: rc.Hash, Result: tr})
		receipts = append(receipts, b.Receipts[0])
	}
	out, err := json.Marshal(map[string]any{"block": header, "receipts": receipts, "traces": traces})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "block137.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestIngestWholeBlockBundle: a whole-block bundle (debug_traceBlock
// shape) of the scenario sandwich block gives its sandwich; the same block
// with its victim left out, or with the victim's trace not decoding, is
// ingested partly: show block says so (index 1 missing) and no sandwich
// is found across the transaction it cannot see.
func TestIngestWholeBlockBundle(t *testing.T) {
	cases := []struct {
		name      string
		keep      []int
		corrupt   int
		exit      int
		sandwich  bool
		showWants []string
	}{
		{"whole", []int{0, 1, 2}, -1, 0, true, []string{"sandwich_front", "sandwich_victim", "sandwich_back"}},
		{"victim left out", []int{0, 2}, -1, 0, false, []string{"(not in the index)", "missing", "partial block"}},
		{"victim's trace does not decode", []int{0, 1, 2}, 1, 1, false, []string{"(not in the index)", "missing", "partial block"}},
		// the last transaction left out: only the header's list of
		// transactions tells that it is missing (stored with the block)
		{"back left out (the last)", []int{0, 1}, -1, 0, false, []string{"(not in the index)", "missing", "partial block"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "index")
			file := blockBundle(t, c.keep, c.corrupt)
			_, errs, code := flowq(t, nil, "", "ingest", "--index", dir, file)
			if code != c.exit || !strings.Contains(errs, "findings of 1 blocks computed") {
				t.Fatalf("ingest: exit %d, want %d: %s", code, c.exit, errs)
			}
			out, errs, code := flowq(t, nil, "", "query", "--index", dir, "find sandwiches")
			if code != 0 {
				t.Fatalf("find sandwiches: exit %d: %s", code, errs)
			}
			if got := !strings.Contains(out, "(no rows)"); got != c.sandwich {
				t.Errorf("find sandwiches: found %v, want %v:\n%s", got, c.sandwich, out)
			}
			show, errs, code := flowq(t, nil, "", "query", "--index", dir, "show block 137")
			if code != 0 {
				t.Fatalf("show block: exit %d: %s", code, errs)
			}
			for _, w := range c.showWants {
				if !strings.Contains(show, w) {
					t.Errorf("show block 137 lacks %q:\n%s", w, show)
				}
			}
		})
	}
}
