package workload

import (
	"bytes"
	"testing"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

func scenarios(t *testing.T) map[string][]byte {
	t.Helper()
	out, err := LoadScenarios("../../examples/scenarios/geth")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func analyse(t *testing.T, data []byte, name string) []*normalform.Analysis {
	t.Helper()
	res := trace.Decode(data, trace.Options{Source: name})
	for _, e := range res.Errors {
		t.Errorf("%s: %v", name, e)
	}
	var out []*normalform.Analysis
	for _, tx := range res.Txs {
		a, err := normalform.Analyze(tx, normalform.DefaultConfig())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, a)
	}
	return out
}

// TestSynthetic: every synthetic transaction decodes, keeps its scenario's
// shape and family hashes and verdict, and has a fresh hash, position,
// addresses and (for transactions with transfers) exact hash.
func TestSynthetic(t *testing.T) {
	sc := scenarios(t)
	orig := map[string]*normalform.Analysis{}
	for n, b := range sc {
		as := analyse(t, b, n)
		if len(as) != 1 {
			t.Fatalf("%s: %d transactions", n, len(as))
		}
		orig[n] = as[0]
	}
	g, err := New(sc, Options{Seed: 7, BlockTxs: 60, Weights: map[string]int{}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	hashes := map[normalform.Hash]bool{}
	exactSame := 0
	for range 3 {
		blk := g.Block()
		as := analyse(t, blk.Bundle, "synthetic")
		if len(as) != len(blk.Scenarios) || len(as) != 60 {
			t.Fatalf("block %d: %d transactions decoded, %d generated", blk.Number, len(as), len(blk.Scenarios))
		}
		for i, a := range as {
			n := blk.Scenarios[i]
			o := orig[n]
			seen[n] = true
			m := a.Tx.Meta
			if !m.HasBlock || m.Block != blk.Number || !m.HasIndex || m.Index != i {
				t.Errorf("%s: position %d/%d, want %d/%d", n, m.Block, m.Index, blk.Number, i)
			}
			if hashes[m.Hash] || m.Hash == o.Tx.Meta.Hash {
				t.Errorf("%s: transaction hash %s not fresh", n, m.Hash.Hex())
			}
			hashes[m.Hash] = true
			if len(a.Tx.Transfers) != len(o.Tx.Transfers) {
				t.Fatalf("%s: %d transfers, the scenario has %d", n, len(a.Tx.Transfers), len(o.Tx.Transfers))
			}
			oh, ah := o.Hashes(), a.Hashes()
			if ah.Shape != oh.Shape || ah.Family != oh.Family {
				t.Errorf("%s: shape or family hash differs from the scenario's", n)
			}
			if a.Verdict != o.Verdict {
				t.Errorf("%s: verdict %v, the scenario's %v", n, a.Verdict, o.Verdict)
			}
			if m.HasFrom && m.From == o.Tx.Meta.From {
				t.Errorf("%s: sender not rewritten", n)
			}
			if len(a.Tx.Transfers) > 0 && ah.Exact == oh.Exact {
				exactSame++
			}
		}
	}
	if len(seen) < len(sc)/2 {
		t.Errorf("only %d of %d scenarios drawn", len(seen), len(sc))
	}
	if exactSame > 0 {
		t.Errorf("%d synthetic transactions with transfers have their scenario's exact hash", exactSame)
	}
}

func TestDeterministic(t *testing.T) {
	sc := scenarios(t)
	block := func(seed int64) []byte {
		g, err := New(sc, Options{Seed: seed, BlockTxs: 20})
		if err != nil {
			t.Fatal(err)
		}
		g.Block()
		return g.Block().Bundle
	}
	if !bytes.Equal(block(3), block(3)) {
		t.Error("one seed, two workloads")
	}
	if bytes.Equal(block(3), block(4)) {
		t.Error("two seeds, one workload")
	}
}
