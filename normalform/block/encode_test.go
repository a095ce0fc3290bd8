package block_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/block"
)

// findingsOnly is a report without the parts its binary form leaves to
// the records (Txs; Swaps empty).
func findingsOnly(r *block.Report) block.Report {
	c := *r
	c.Txs, c.Swaps = nil, []block.Swap{}
	return c
}

// TestFindingsRoundTrip: the binary form of a block's findings decodes to
// the same findings (JSON compared) for a sandwich with two victims, a
// back-run, a partial block with a count and the mainnet block; Roles
// gives back each row's roles; the form is a fraction of the JSON, and a
// block with no findings costs a few bytes.
func TestFindingsRoundTrip(t *testing.T) {
	sandwich := []*normalform.Analysis{
		swapTx(t, 0, "A", "BOTA", "POOL", "3", "WETH", "300", "TKN"),
		swapTx(t, 1, "U1", "BOTU1", "POOL", "5", "WETH", "450", "TKN"),
		swapTx(t, 2, "U2", "BOTU2", "POOL", "1", "WETH", "80", "TKN"),
		swapTx(t, 3, "A", "BOTA", "POOL", "300", "TKN", "3.5", "WETH"),
	}
	backrun := []*normalform.Analysis{
		swapTx(t, 0, "U1", "BOTU1", "P1", "30000", "USDT", "9", "WETH"),
		swapTx(t, 1, "U2", "BOTU2", "P1", "300", "USDT", "0.1", "WETH"),
		arbTx(t, 2),
	}
	cases := []struct {
		name  string
		n     uint64
		txs   []*normalform.Analysis
		count int
	}{
		{"sandwich", 7, sandwich, -1},
		{"back-run", 7, backrun, -1},
		{"partial with a count", 7, []*normalform.Analysis{backrun[0], backrun[2]}, 5},
		{"mainnet block", 11017338, analyzeBlockFile(t, mainnetBlock), -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := block.AnalyzeCount(c.n, c.txs, nil, c.count)
			if err != nil {
				t.Fatal(err)
			}
			if c.count > 0 {
				r.Count = c.count
			}
			b := r.AppendFindings(nil)
			got, err := block.DecodeFindings(c.n, b)
			if err != nil {
				t.Fatal(err)
			}
			want := findingsOnly(r)
			wj, _ := json.Marshal(want)
			gj, _ := json.Marshal(got)
			if string(wj) != string(gj) {
				t.Fatalf("decoded\n%s\nwant\n%s", gj, wj)
			}
			roles := block.Roles(got)
			for _, row := range r.Txs {
				if !reflect.DeepEqual(roles[row.Index], row.Roles) {
					t.Errorf("tx %d: roles %v, the report's %v", row.Index, roles[row.Index], row.Roles)
				}
			}
			full, _ := json.Marshal(r)
			t.Logf("%d sandwiches, %d back-runs: %d bytes (JSON of the report %d)", len(r.Sandwiches), len(r.Backruns), len(b), len(full))
			if len(b)*4 > len(full) {
				t.Errorf("%d bytes: more than a quarter of the report's JSON (%d)", len(b), len(full))
			}
			if len(r.Sandwiches)+len(r.Backruns) == 0 && len(b) > 40 {
				t.Errorf("a block without findings costs %d bytes", len(b))
			}
			// Every strict prefix fails with the package's error, never a panic.
			for i := 0; i < len(b); i++ {
				if _, err := block.DecodeFindings(c.n, b[:i]); !errors.Is(err, block.ErrBadFindings) {
					t.Fatalf("prefix of %d bytes: %v", i, err)
				}
			}
		})
	}
}

// FuzzDecodeFindings: any bytes either fail with ErrBadFindings or decode
// to findings whose binary form decodes to the same findings; never a
// panic.
func FuzzDecodeFindings(f *testing.F) {
	txs := []*normalform.Analysis{
		swapTx(f, 0, "A", "BOTA", "POOL", "3", "WETH", "300", "TKN"),
		swapTx(f, 1, "U1", "BOTU1", "POOL", "5", "WETH", "450", "TKN"),
		swapTx(f, 2, "A", "BOTA", "POOL", "300", "TKN", "3.5", "WETH"),
		arbTx(f, 3),
	}
	r, err := block.AnalyzeCount(7, txs, nil, 6)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(r.AppendFindings(nil))
	f.Add((&block.Report{}).AppendFindings(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := block.DecodeFindings(7, b)
		if err != nil {
			if !errors.Is(err, block.ErrBadFindings) {
				t.Fatalf("error not ErrBadFindings: %v", err)
			}
			return
		}
		again, err := block.DecodeFindings(7, got.AppendFindings(nil))
		if err != nil {
			t.Fatalf("re-encoded findings do not decode: %v", err)
		}
		x, _ := json.Marshal(got)
		y, _ := json.Marshal(again)
		if string(x) != string(y) {
			t.Fatalf("re-encoded findings differ:\n%s\n%s", x, y)
		}
	})
}
