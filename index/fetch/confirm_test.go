package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/fetch/screen"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/internal/evmnode"
	"github.com/flowq/flowq/normalform"
)

// The arbitrage of the confirm test, in hand-written EVM code placed in the
// genesis: two "tokens" (one at WETH9's address, so that the gain folds
// with the ETH costs) whose every call emits Transfer(from, to, amount)
// read from the calldata, two "pools" that forward their calldata to the
// token named in its first word (so the pools' payments are their own
// calls), and two bots: each sends 1 WETH to pool A, which pays 2 Y, sends
// them to pool B, which pays 1.5 WETH. The second bot then pays the block's
// builder 1 ETH by an internal call, which receipts do not show.
var (
	cfWETH   = common.HexToAddress("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2")
	cfTokenY = common.HexToAddress("0x000000000000000000000000000000000000e0a1")
	cfPoolA  = common.HexToAddress("0x000000000000000000000000000000000000e0b1")
	cfPoolB  = common.HexToAddress("0x000000000000000000000000000000000000e0b2")
	cfBot1   = common.HexToAddress("0x000000000000000000000000000000000000e0c1")
	cfBot2   = common.HexToAddress("0x000000000000000000000000000000000000e0c2")
)

// loggerCode: MSTORE(0, calldata[64:96]); LOG3(0, 32, Transfer,
// calldata[0:32], calldata[32:64]).
func loggerCode() []byte {
	c := []byte{0x60, 0x40, 0x35, 0x60, 0x00, 0x52, 0x60, 0x20, 0x35, 0x60, 0x00, 0x35, 0x7f}
	c = append(c, crypto.Keccak256([]byte("Transfer(address,address,uint256)"))...)
	return append(c, 0x60, 0x20, 0x60, 0x00, 0xa3, 0x00)
}

// forwarderCode: CALLDATACOPY(0, 32, 96); CALL(gas, calldata[0:32], 0, 0,
// 96, 0, 0).
func forwarderCode() []byte {
	return []byte{0x60, 0x60, 0x60, 0x20, 0x60, 0x00, 0x37,
		0x60, 0x00, 0x60, 0x00, 0x60, 0x60, 0x60, 0x00, 0x60, 0x00, 0x60, 0x00, 0x35, 0x5a, 0xf1, 0x50, 0x00}
}

// callsCode is a contract that makes the given calls in order: each
// stores its words at memory 0.. and calls the target with them and its
// value.
func callsCode(calls ...cfCall) []byte {
	var c []byte
	for _, k := range calls {
		for j, w := range k.words {
			c = append(c, 0x7f)
			c = append(c, w[:]...)
			c = append(c, 0x60, byte(32*j), 0x52)
		}
		c = append(c, 0x60, 0x00, 0x60, 0x00, 0x60, byte(32*len(k.words)), 0x60, 0x00, 0x7f)
		v := common.BigToHash(k.value)
		c = append(c, v[:]...)
		c = append(c, 0x73)
		c = append(c, k.to[:]...)
		c = append(c, 0x5a, 0xf1, 0x50)
	}
	return append(c, 0x00)
}

type cfCall struct {
	to    common.Address
	words []common.Hash
	value *big.Int
}

func cfAmount(milli int64) common.Hash {
	return common.BigToHash(new(big.Int).Mul(big.NewInt(milli), big.NewInt(1e15)))
}

func cfBotCode(bot common.Address, builderPayment *big.Int) []byte {
	w := func(a common.Address) common.Hash { return common.BytesToHash(a[:]) }
	zero := new(big.Int)
	calls := []cfCall{
		{cfWETH, []common.Hash{w(bot), w(cfPoolA), cfAmount(1000)}, zero},
		{cfPoolA, []common.Hash{w(cfTokenY), w(cfPoolA), w(bot), cfAmount(2000)}, zero},
		{cfTokenY, []common.Hash{w(bot), w(cfPoolB), cfAmount(2000)}, zero},
		{cfPoolB, []common.Hash{w(cfWETH), w(cfPoolB), w(bot), cfAmount(1500)}, zero},
	}
	if builderPayment != nil {
		calls = append(calls, cfCall{evmnode.Coinbase, nil, builderPayment})
	}
	return callsCode(calls...)
}

// countingProxy forwards every request to the node and counts the calls
// by method, with the transactions debug_traceTransaction was asked for.
type countingProxy struct {
	target string
	mu     sync.Mutex
	calls  map[string]int
	traced []string
}

func (p *countingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var batch []rpcReq
	if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
		_ = json.Unmarshal(body, &batch)
	} else {
		var q rpcReq
		_ = json.Unmarshal(body, &q)
		batch = []rpcReq{q}
	}
	p.mu.Lock()
	for _, q := range batch {
		p.calls[q.Method]++
		if q.Method == "debug_traceTransaction" && len(q.Params) > 0 {
			var h string
			_ = json.Unmarshal(q.Params[0], &h)
			p.traced = append(p.traced, common.HexToHash(h).Hex())
		}
	}
	p.mu.Unlock()
	resp, err := http.Post(p.target, "application/json", bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// TestConfirmTraces: blocks of ordinary transfers (the emitter's calls, a
// plain ETH payment, a deployment) and two arbitrages, on the in-process
// node, screened from receipts (Screen, keeping what it fetched) and then
// confirmed with geth's callTracer through a counting proxy
// (ConfirmScreened). The suspects are the two arbitrages (detections) and
// five of the emitter's transactions (a token moved, the coalition lost
// none: a cycle closed by native value of internal calls could hide
// there); the ETH payment (no token moved) is not. Only the suspects are traced (debug_traceTransaction, no
// block trace), and with the trace alone: no receipt nor header is
// fetched again. Their records in the index are then those a full traced
// ingest of the range gives, the others stay receipts-only as screened;
// the report counts 9 screened, 7 confirmed and 1 changed: the bot that
// paid the builder 1 ETH by an internal call is an arbitrage from receipts
// and not from its trace. A second run confirms nothing more and traces
// nothing; Confirm without the screened data (receipts and headers
// fetched again) gives the same records.
func TestConfirmTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a node")
	}
	alloc := types.GenesisAlloc{
		cfWETH:   {Code: loggerCode(), Balance: new(big.Int)},
		cfTokenY: {Code: loggerCode(), Balance: new(big.Int)},
		cfPoolA:  {Code: forwarderCode(), Balance: new(big.Int)},
		cfPoolB:  {Code: forwarderCode(), Balance: new(big.Int)},
		cfBot1:   {Code: cfBotCode(cfBot1, nil), Balance: new(big.Int)},
		cfBot2:   {Code: cfBotCode(cfBot2, big.NewInt(1e18)), Balance: new(big.Int).Mul(big.NewInt(10), big.NewInt(1e18))},
	}
	node, err := evmnode.Start(evmnode.Config{Alloc: alloc})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	ctx := context.Background()
	emitter := mineEmitterCalls(t, node, 2, 2) // blocks 1 (deployment) .. 3
	send := func(key int, to common.Address, value int64, data []byte) *types.Transaction {
		addr := crypto.PubkeyToAddress(evmnode.Key(key).PublicKey)
		nonce, err := node.Nonce(addr)
		if err != nil {
			t.Fatal(err)
		}
		return types.MustSignNewTx(evmnode.Key(key), node.Signer(), &types.DynamicFeeTx{ChainID: big.NewInt(evmnode.ChainID), Nonce: nonce,
			GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(1e11), Gas: 300000, To: &to, Value: big.NewInt(value), Data: data})
	}
	arb1 := send(5, cfBot1, 0, nil)
	plain := send(6, crypto.PubkeyToAddress(evmnode.Key(7).PublicKey), 12345, nil)
	if _, err := node.Mine(ctx, arb1, plain); err != nil { // block 4
		t.Fatal(err)
	}
	arb2 := send(5, cfBot2, 0, nil)
	call := send(6, emitter, 1000, nil)
	blk, err := node.Mine(ctx, arb2, call) // block 5
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range append(node.Receipts(blk.Hash()), node.Receipts(node.Ethereum().BlockChain().GetBlockByNumber(4).Hash())...) {
		if r.Status != 1 || (r.TxHash == arb1.Hash() || r.TxHash == arb2.Hash()) && len(r.Logs) != 4 {
			t.Fatalf("tx %s: status %d, %d logs", r.TxHash.Hex(), r.Status, len(r.Logs))
		}
	}
	const from, to, txs = 1, 5, 9
	cfg := normalform.DefaultConfig()
	o := Options{Concurrency: 2, BatchSize: 2, Retries: 2, Backoff: time.Millisecond, Timeout: 30 * time.Second}
	ro := o
	ro.Mode = Receipts
	iopt := ingest.Options{Config: cfg}

	// The reference: every block traced.
	full := openIndex(t)
	if rep, err := dial(t, node.URL(), o).IngestBlocks(ctx, full, from, to, iopt); err != nil || !rep.Complete() || rep.Stored != txs {
		t.Fatalf("traced ingest: %v\n%s", err, rep)
	}
	traced := map[normalform.Hash]*index.Record{}
	for _, r := range records(t, full) {
		traced[r.Hash] = r
	}

	ix := openIndex(t)
	kept := NewScreened()
	if rep, err := dial(t, node.URL(), ro).Screen(ctx, ix, from, to, iopt, kept); err != nil || !rep.Complete() || rep.Stored != txs || kept.Len() != txs {
		t.Fatalf("receipts ingest: %v, %d kept\n%s", err, kept.Len(), rep)
	}
	screened := map[normalform.Hash]*index.Record{}
	for _, r := range records(t, ix) {
		screened[r.Hash] = r
	}
	a1, a2 := normalform.Hash(arb1.Hash()), normalform.Hash(arb2.Hash())
	if s := screened[a2]; s == nil || s.Verdict != normalform.VerdictArbitrage || !hasReason(s, normalform.ReasonReceiptsOnly) {
		t.Fatalf("arbitrage with a hidden builder payment, from receipts: %+v", s)
	}
	if tr := traced[a2]; tr == nil || tr.Verdict == normalform.VerdictArbitrage {
		t.Fatalf("arbitrage with a hidden builder payment, traced: %+v", tr)
	}
	if s, tr := screened[a1], traced[a1]; s == nil || tr == nil || s.Verdict != normalform.VerdictArbitrage || tr.Verdict != normalform.VerdictArbitrage {
		t.Fatalf("arbitrage: from receipts %+v, traced %+v", s, tr)
	}

	p := &countingProxy{target: node.URL(), calls: map[string]int{}}
	srv := httptest.NewServer(p)
	defer srv.Close()
	// The suspects (SuspectWhy of the screened records): the two
	// arbitrages, the emitter's transfers; not the ETH payment.
	var want []string
	for h, r := range screened {
		why, err := SuspectWhy(r, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if why != "" {
			want = append(want, common.Hash(h).Hex())
		}
		if (h == a1 || h == a2) != (why == screen.Detection) || h == normalform.Hash(plain.Hash()) && why != "" {
			t.Errorf("%s: suspect because %q", common.Hash(h).Hex(), why)
		}
	}
	rep, err := dial(t, srv.URL, o).ConfirmScreened(ctx, ix, from, to, iopt, kept)
	if err != nil {
		t.Fatalf("confirm: %v\n%s", err, rep)
	}
	t.Log(rep)
	if rep.Screened != txs || rep.Suspects != 7 || rep.Confirmed != 7 || len(rep.Changed) != 1 || len(rep.Missing) != 0 || rep.Stored != 7 || rep.Reused != 7 ||
		rep.SuspectsBy[screen.Detection] != 2 || rep.SuspectsBy[screen.Coalition] != 5 || len(want) != 7 {
		t.Errorf("report: %+v, want 9 screened, 7 confirmed and stored with the screened receipts (2 detections, 5 coalition), 1 changed", rep)
	}
	if p.calls["eth_getTransactionReceipt"] != 0 || p.calls["eth_getBlockByNumber"] != 0 {
		t.Errorf("confirming fetched receipts or headers again: %v", p.calls)
	}
	if len(rep.Changed) == 1 && (rep.Changed[0].Tx != a2 || rep.Changed[0].Receipts != normalform.VerdictArbitrage || rep.Changed[0].Traced != traced[a2].Verdict) {
		t.Errorf("changed: %+v, want %s from arbitrage to %s", rep.Changed[0], a2.Hex(), traced[a2].Verdict)
	}
	sort.Strings(p.traced)
	sort.Strings(want)
	if !reflect.DeepEqual(p.traced, want) || p.calls["debug_traceBlockByNumber"] != 0 || p.calls["trace_block"] != 0 || p.calls["trace_transaction"] != 0 {
		t.Errorf("traced through the proxy: %v (calls %v), want the suspects only: %v", p.traced, p.calls, want)
	}
	suspect := map[normalform.Hash]bool{}
	for _, h := range want {
		suspect[normalform.Hash(common.HexToHash(h))] = true
	}
	checkRecords := func(ix *index.Index, how string) {
		after := records(t, ix)
		if len(after) != txs {
			t.Fatalf("%s: %d records after confirming, want %d", how, len(after), txs)
		}
		for _, r := range after {
			wantRec := screened[r.Hash]
			if suspect[r.Hash] {
				wantRec = traced[r.Hash]
			}
			if !reflect.DeepEqual(r, wantRec) {
				t.Errorf("%s: record %s after confirming:\n%+v\nwant\n%+v", how, r.Hash.Hex(), r, wantRec)
			}
		}
	}
	checkRecords(ix, "ConfirmScreened")

	// Without the screened data: the same records.
	ix2 := openIndex(t)
	if rep, err := dial(t, node.URL(), ro).IngestBlocks(ctx, ix2, from, to, iopt); err != nil || !rep.Complete() {
		t.Fatalf("receipts ingest: %v\n%s", err, rep)
	}
	if rep, err := dial(t, node.URL(), o).Confirm(ctx, ix2, from, to, iopt); err != nil || rep.Confirmed != 7 || rep.Reused != 0 {
		t.Fatalf("confirm without the screened data: %v\n%s", err, rep)
	}
	checkRecords(ix2, "Confirm")

	// Again: nothing left to confirm, nothing traced.
	n := len(p.traced)
	rep, err = dial(t, srv.URL, o).Confirm(ctx, ix, from, to, iopt)
	if err != nil || rep.Screened != txs-7 || rep.Suspects != 0 || rep.Confirmed != 0 || len(p.traced) != n {
		t.Errorf("second confirm: %v, %+v, %d traced", err, rep, len(p.traced)-n)
	}
	if _, err := dial(t, srv.URL, ro).Confirm(ctx, ix, from, to, iopt); err == nil {
		t.Error("confirming with a receipts client: no error")
	}
}

func hasReason(r *index.Record, x normalform.Reason) bool {
	for _, y := range r.Reasons {
		if y == x {
			return true
		}
	}
	return false
}
