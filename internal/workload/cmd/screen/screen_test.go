package main

import (
	"context"
	"strings"
	"testing"

	"github.com/flowq/flowq/normalform"
)

// TestScreenThenConfirm runs both ingests over a loopback node on 2,000
// SYNTHETIC transactions, in a mix where most transactions are not
// arbitrage-like (the eleven scenarios the screening lets through weigh
// 60, the others 10), and checks that screening then confirming loses no
// arbitrage the traced index finds (those whose cycle closes through ETH
// moved by internal calls included: wrap_cycle_refund, v4_v2_arb,
// v4_ur_v2_arb), that it traces fewer transactions than it screens, that
// it moves fewer bytes than tracing every block, that each confirmation
// fetches the trace alone (the receipt and header are the screening's),
// and that the two indexes hold the same transactions.
func TestScreenThenConfirm(t *testing.T) {
	quiet := []string{"liquidity_add", "liquidity_remove", "nft_erc1155", "nft_erc1155_batch", "nft_erc721", "reverted_attempt",
		"v4_triangle_net", "v4_ur_user_swap", "v4_user_swap_claims", "v4_user_swap_erc20", "v4_user_swap_eth"}
	var ws []string
	for _, q := range quiet {
		ws = append(ws, q+"=60")
	}
	weights, err := parseWeights(strings.Join(ws, ","))
	if err != nil {
		t.Fatal(err)
	}
	res, err := run(context.Background(), config{n: 2000, seed: 7, blockTxs: 100, chunk: 5, scenarios: "../../../../examples/scenarios/geth", weights: weights}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.txs != 2000 || res.screened != 2000 {
		t.Fatalf("%d transactions made, %d screened; want 2000 each", res.txs, res.screened)
	}
	if res.onlyTraced != 0 || res.onlyScreen != 0 {
		t.Fatalf("the indexes differ in transactions: %d only traced, %d only screened", res.onlyTraced, res.onlyScreen)
	}
	if res.missing != 0 || res.confirmed != res.suspects {
		t.Fatalf("%d suspects, %d confirmed, %d missing", res.suspects, res.confirmed, res.missing)
	}
	if !(res.confirmed > 0 && res.confirmed < res.screened) {
		t.Fatalf("confirmed %d of %d screened: want some, fewer than all", res.confirmed, res.screened)
	}
	for scen, n := range res.lostBy {
		t.Errorf("%d traced arbitrages of scenario %s are not arbitrage after screening", n, scen)
	}
	for _, scen := range []string{"wrap_cycle_refund", "v4_v2_arb", "v4_ur_v2_arb"} {
		if res.perScen[scen] == 0 || res.suspectBy[scen] != res.perScen[scen] {
			t.Errorf("scenario %s: %d transactions, %d confirmed: want all (their ETH legs are internal calls)", scen, res.perScen[scen], res.suspectBy[scen])
		}
	}
	// The traced arbitrages are arbitrage in the screened index.
	arb := 0
	for k, c := range res.verdicts {
		if k[0] == normalform.VerdictArbitrage {
			arb += c
		}
	}
	lost := res.lost(normalform.VerdictArbitrage)
	if got := res.verdicts[[2]normalform.Verdict{normalform.VerdictArbitrage, normalform.VerdictArbitrage}]; got != arb || lost != 0 || arb == 0 {
		t.Errorf("traced arbitrage: %d, of them arbitrage when screened %d, lost %d", arb, got, lost)
	}
	// A screened record that says arbitrage was confirmed by its trace:
	// no screened arbitrage where the traced index says otherwise.
	for k, c := range res.verdicts {
		if k[1] == normalform.VerdictArbitrage && k[0] != normalform.VerdictArbitrage && c > 0 {
			t.Errorf("%d transactions arbitrage when screened, %s when traced", c, k[0])
		}
	}
	traced, both := res.traced.node.BodyOut, res.both().node.BodyOut
	if both >= traced {
		t.Errorf("screen + confirm moved %d bytes, tracing every block %d: want fewer", both, traced)
	}
	if res.traced.node.Methods["debug_traceTransaction"].Requests != 0 || res.confirm.node.Methods["debug_traceTransaction"].Requests != int64(res.confirmed) {
		t.Errorf("debug_traceTransaction calls: traced side %d, confirm side %d for %d confirmed",
			res.traced.node.Methods["debug_traceTransaction"].Requests, res.confirm.node.Methods["debug_traceTransaction"].Requests, res.confirmed)
	}
	if m := res.confirm.node.Methods; res.reused != res.confirmed || m["eth_getTransactionReceipt"].Requests != 0 || m["eth_getBlockByNumber"].Requests != 0 {
		t.Errorf("confirm side: %d of %d confirmed with the screened receipt; %d eth_getTransactionReceipt and %d eth_getBlockByNumber calls, want none",
			res.reused, res.confirmed, m["eth_getTransactionReceipt"].Requests, m["eth_getBlockByNumber"].Requests)
	}
	t.Logf("screened %d, confirmed %d, changed %d, lost arbitrage %d (%v); suspects by reason %v; bytes %d vs %d", res.screened, res.confirmed, res.changed, lost, res.lostBy, res.suspectsBy, both, traced)
}

func TestParseWeights(t *testing.T) {
	if _, err := parseWeights("a=1,b"); err == nil || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("want an error naming the bad part, got %v", err)
	}
	w, err := parseWeights("star_s=0,x=3")
	if err != nil || w["star_s"] != 0 || w["x"] != 3 || w["star_r"] != 2 {
		t.Fatalf("got %v, %v", w, err)
	}
}
