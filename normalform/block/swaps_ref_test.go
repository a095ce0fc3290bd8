package block

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/holiman/uint256"

	"github.com/flowq/flowq/internal/workload"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// swapsOfReference is swapsOf as it was before issue 22's rewrite (maps
// keyed by address and token, pools sorted by hex text): the oracle the
// rewrite must agree with.
func swapsOfReference(pos int, a *normalform.Analysis, cfg *normalform.Config) []*swap {
	if a.Tx.Meta.HasReceipt && a.Tx.Meta.Status == normalform.StatusFailed {
		return nil
	}
	junction := map[normalform.Address]bool{}
	var walk func(t *normalform.Term)
	walk = func(t *normalform.Term) {
		if t.Kind == normalform.TSwap {
			junction[t.At] = true
		}
		for _, p := range t.Parts {
			walk(p)
		}
	}
	for _, t := range a.Terms() {
		walk(t)
	}
	origin := map[normalform.Address]bool{}
	if a.NF != nil {
		for _, n := range a.NF.Children {
			if n.Chain != nil {
				origin[n.Chain.Origin()] = true
			}
		}
	}
	type key struct {
		addr normalform.Address
		tok  normalform.Token
	}
	bal := map[key]*normalform.Signed{}
	var addrs []normalform.Address
	seen := map[normalform.Address]bool{}
	add := func(addr normalform.Address, tok normalform.Token, v *uint256.Int, neg bool) {
		k := key{addr, tok}
		s := bal[k]
		if s == nil {
			s = &normalform.Signed{}
			bal[k] = s
		}
		s.Add(v, neg)
		if !seen[addr] {
			seen[addr] = true
			addrs = append(addrs, addr)
		}
	}
	for i := range a.Tx.Transfers {
		t := &a.Tx.Transfers[i]
		if t.Token.HasID() || t.From == t.To {
			continue
		}
		add(t.From, t.Token, &t.Amount, true)
		add(t.To, t.Token, &t.Amount, false)
	}
	toks := map[normalform.Address][]normalform.Token{}
	for k := range bal {
		toks[k.addr] = append(toks[k.addr], k.tok)
	}
	var zero normalform.Address
	var out []*swap
	for _, p := range addrs {
		if p == zero || p == normalform.NativeAddress || a.InCoalition(p) || cfg.IsWrappedNative(p) ||
			(a.Tx.Meta.HasHeader && p == a.Tx.Meta.Miner) || (origin[p] && !junction[p]) {
			continue
		}
		var in, out1 []normalform.Token
		for _, tk := range toks[p] {
			switch bal[key{p, tk}].Sign() {
			case 1:
				in = append(in, tk)
			case -1:
				out1 = append(out1, tk)
			}
		}
		if len(in) != 1 || len(out1) != 1 {
			continue
		}
		s := &swap{pos: pos, pool: p, in: in[0], out: out1[0], sender: a.Sender, bot: a.Recipient,
			hasSender: a.Tx.Meta.HasFrom, router: cfg.IsRouter(a.Recipient)}
		s.amtIn = bal[key{p, in[0]}].Abs
		s.amtOut = bal[key{p, out1[0]}].Abs
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return strings.Compare(hexOf(out[i].pool), hexOf(out[j].pool)) < 0 })
	return out
}

// TestSwapsOfMatchesReference: the rewritten swapsOf reads the same swaps,
// in the same order, as the reference over the mainnet block 11017338,
// every scenario of the corpus and 2,000 synthetic transactions, with the
// origins scanned and in sets.
func TestSwapsOfMatchesReference(t *testing.T) {
	cfg := normalform.DefaultConfig()
	var txs []*normalform.Tx
	decode := func(data []byte, src string) {
		res := trace.Decode(data, trace.Options{Config: cfg, Source: src})
		if len(res.Errors) > 0 {
			t.Fatalf("%s: %v", src, res.Errors[0])
		}
		txs = append(txs, res.Txs...)
	}
	files, err := filepath.Glob("../../examples/scenarios/*/*.json")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../trace/testdata/corpus/mev-inspect-rs/res/11017338.data.json")
	for _, f := range files {
		if filepath.Base(f) == "truth.json" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		decode(data, f)
	}
	sc, err := workload.LoadScenarios("../../examples/scenarios/geth")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := workload.New(sc, workload.Options{Seed: 3, BlockTxs: 100})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		decode(gen.Block().Bundle, fmt.Sprintf("synthetic block %d", i))
	}
	nswaps, wide := 0, 0
	for i, tx := range txs {
		parties := map[normalform.Address]bool{}
		for _, t := range tx.Transfers {
			parties[t.From], parties[t.To] = true, true
		}
		if len(parties) > swapScan+1 {
			wide++ // swapsOf indexes its addresses past swapScan
		}
		a, err := normalform.Analyze(tx, cfg)
		if err != nil {
			continue // the reference and the rewrite read analyses only
		}
		var want []swap
		for _, s := range swapsOfReference(0, a, cfg) {
			want = append(want, *s)
		}
		got := swapsOf(nil, a, cfg)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("tx %d (%s): swaps\n%+v\nwant\n%+v", i, tx.Meta.Hash.Hex(), got, want)
		}
		originScan = 0 // the sets a large normal form takes
		got = swapsOf(nil, a, cfg)
		originScan = 64
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("tx %d (%s), origins in sets: swaps\n%+v\nwant\n%+v", i, tx.Meta.Hash.Hex(), got, want)
		}
		nswaps += len(got)
	}
	if len(txs) < 2000 || nswaps < 100 || wide < 5 {
		t.Fatalf("%d transactions (%d with more than %d addresses), %d swaps: the comparison read too little", len(txs), wide, swapScan+1, nswaps)
	}
	t.Logf("%d transactions (%d with more than %d addresses), %d swaps", len(txs), wide, swapScan+1, nswaps)
}
