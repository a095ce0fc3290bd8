package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/internal/evmnode"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// emitterInit deploys a contract whose every call emits an ERC-20
// Transfer(caller, itself, 42): PUSH1 42 PUSH1 0 MSTORE ADDRESS CALLER
// PUSH32 sig PUSH1 32 PUSH1 0 LOG3 STOP, behind a constructor that
// returns it.
func emitterInit() []byte {
	sig := crypto.Keccak256([]byte("Transfer(address,address,uint256)"))
	rt := []byte{0x60, 0x2a, 0x60, 0x00, 0x52, 0x30, 0x33, 0x7f}
	rt = append(rt, sig...)
	rt = append(rt, 0x60, 0x20, 0x60, 0x00, 0xa3, 0x00)
	init := []byte{0x60, byte(len(rt)), 0x60, 0x0c, 0x60, 0x00, 0x39, 0x60, byte(len(rt)), 0x60, 0x00, 0xf3}
	return append(init, rt...)
}

// mineEmitterCalls deploys the emitter in block 1 and mines blocks
// 2..1+n, each with k calls to it sending 1000+i wei. It returns the
// emitter's address.
func mineEmitterCalls(t *testing.T, node *evmnode.Node, n, k int) common.Address {
	t.Helper()
	ctx := context.Background()
	tx := types.MustSignNewTx(evmnode.Key(0), node.Signer(), &types.DynamicFeeTx{ChainID: big.NewInt(evmnode.ChainID), Nonce: 0,
		GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(1e11), Gas: 200000, Data: emitterInit()})
	blk, err := node.Mine(ctx, tx)
	if err != nil {
		t.Fatal(err)
	}
	rs := node.Receipts(blk.Hash())
	if len(rs) != 1 || rs[0].Status != 1 {
		t.Fatalf("deploying the emitter: %+v", rs)
	}
	emitter := rs[0].ContractAddress
	nonces := make([]uint64, evmnode.NumKeys)
	nonces[0] = 1
	for b := 0; b < n; b++ {
		var txs []*types.Transaction
		for i := 0; i < k; i++ {
			from := (b + i) % evmnode.NumKeys
			txs = append(txs, types.MustSignNewTx(evmnode.Key(from), node.Signer(), &types.DynamicFeeTx{
				ChainID: big.NewInt(evmnode.ChainID), Nonce: nonces[from], GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(1e11),
				Gas: 60000, To: &emitter, Value: big.NewInt(int64(1000 + i)),
			}))
			nonces[from]++
		}
		if _, err := node.Mine(ctx, txs...); err != nil {
			t.Fatal(err)
		}
	}
	return emitter
}

// noBlockReceipts is a loopback proxy to a node that answers every
// eth_getBlockReceipts with JSON-RPC -32601 "method not found", as a
// node without it does, and forwards everything else. It counts the
// calls by method.
type noBlockReceipts struct {
	target string
	mu     sync.Mutex
	calls  map[string]int
}

func (p *noBlockReceipts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var batch []json.RawMessage
	single := !bytes.HasPrefix(bytes.TrimSpace(body), []byte("["))
	if single {
		batch = []json.RawMessage{body}
	} else if err := json.Unmarshal(body, &batch); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out := make([]json.RawMessage, len(batch))
	var fwd []json.RawMessage
	var at []int
	for i, raw := range batch {
		var q rpcReq
		_ = json.Unmarshal(raw, &q)
		p.mu.Lock()
		p.calls[q.Method]++
		p.mu.Unlock()
		if q.Method == "eth_getBlockReceipts" {
			out[i], _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": q.ID,
				"error": map[string]any{"code": -32601, "message": "the method eth_getBlockReceipts does not exist/is not available"}})
			continue
		}
		fwd, at = append(fwd, raw), append(at, i)
	}
	if len(fwd) > 0 {
		req, _ := json.Marshal(fwd)
		resp, err := http.Post(p.target, "application/json", bytes.NewReader(req))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		var answers []json.RawMessage
		if err := json.NewDecoder(resp.Body).Decode(&answers); err != nil || len(answers) != len(fwd) {
			http.Error(w, "bad answer from the node", http.StatusBadGateway)
			return
		}
		// A node answers a batch in order.
		for j, a := range answers {
			out[at[j]] = a
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if single {
		_, _ = w.Write(out[0])
		return
	}
	b, _ := json.Marshal(out)
	_, _ = w.Write(b)
}

// TestReceiptsMode: `fetch --mode receipts` against the in-process node
// (go-ethereum, which serves eth_getBlockReceipts): blocks come as their
// header with full transactions and their receipts, no trace is asked
// for, and each transaction decodes in receipts-only mode with its own
// value and its Transfer log; a transaction alone too. Then through a
// loopback proxy that answers eth_getBlockReceipts "method not found":
// the fetch falls back to eth_getLogs by block, asks eth_getBlockReceipts
// in its first batch only, and gives the same transfers (without receipts: costs unknown).
// An ingest of the range stores every transaction with mode receipts.
func TestReceiptsMode(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a node")
	}
	node, err := evmnode.Start(evmnode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	const blocks, perBlock = 4, 3
	emitter := mineEmitterCalls(t, node, blocks, perBlock)
	ctx := context.Background()
	cfg := normalform.DefaultConfig()
	o := Options{Mode: Receipts, Concurrency: 2, BatchSize: 2, Retries: 2, Backoff: time.Millisecond, Timeout: 30 * time.Second}

	type got struct {
		transfers []string
		receipts  bool
	}
	decode := func(name string, bundles map[uint64][]byte) map[normalform.Hash]got {
		out := map[normalform.Hash]got{}
		for n, b := range bundles {
			if bytes.Contains(b, []byte(`"traces"`)) {
				t.Errorf("%s: block %d's bundle has traces", name, n)
			}
			res := trace.Decode(b, trace.Options{Config: cfg})
			if len(res.Errors) != 0 {
				t.Fatalf("%s: block %d: %v", name, n, res.Errors)
			}
			for _, tx := range res.Txs {
				if tx.Mode() != normalform.ModeReceipts {
					t.Errorf("%s: tx %s in mode %s", name, tx.Meta.Hash.Hex(), tx.Mode())
				}
				var ts []string
				for _, tr := range tx.Transfers {
					ts = append(ts, tr.From.Hex()+">"+tr.To.Hex()+":"+tr.Amount.Dec()+":"+tr.Token.Key())
				}
				out[tx.Meta.Hash] = got{ts, tx.Meta.HasReceipt}
			}
		}
		return out
	}
	fetchAll := func(c *Client) map[uint64][]byte {
		bundles := map[uint64][]byte{}
		if err := c.Blocks(ctx, 1, 1+blocks, func(n uint64, b []byte) error { bundles[n] = b; return nil }); err != nil {
			t.Fatal(err)
		}
		return bundles
	}

	var progress bytes.Buffer
	po := o
	po.Progress = &progress
	direct := decode("eth_getBlockReceipts", fetchAll(dial(t, node.URL(), po)))
	if len(direct) != 1+blocks*perBlock {
		t.Fatalf("%d transactions, want %d", len(direct), 1+blocks*perBlock)
	}
	calls := 0
	for h, g := range direct {
		if !g.receipts {
			t.Errorf("tx %s: no receipt", h.Hex())
		}
		if len(g.transfers) == 2 {
			calls++
			if !strings.Contains(g.transfers[0], ":eth") && !strings.Contains(g.transfers[0], "0xeeee") {
				t.Errorf("tx %s: first transfer %s is not its own value", h.Hex(), g.transfers[0])
			}
			if want := ">" + emitter.Hex() + ":42:"; !strings.Contains(g.transfers[1], want) {
				t.Errorf("tx %s: second transfer %s, want the Transfer log (%s)", h.Hex(), g.transfers[1], want)
			}
		}
	}
	if calls != blocks*perBlock {
		t.Errorf("%d transactions with their value and their log, want %d: %v", calls, blocks*perBlock, direct)
	}
	if !strings.Contains(progress.String(), "5/5") {
		t.Errorf("no progress bar: %q", progress.String())
	}

	// One transaction.
	var one normalform.Hash
	for h, g := range direct {
		if len(g.transfers) == 2 {
			one = h
			break
		}
	}
	b, err := dial(t, node.URL(), o).Tx(ctx, common.Hash(one))
	if err != nil {
		t.Fatal(err)
	}
	if g := decode("tx", map[uint64][]byte{0: b}); len(g) != 1 || strings.Join(g[one].transfers, " ") != strings.Join(direct[one].transfers, " ") {
		t.Errorf("one transaction: %v, want %v", g, direct[one])
	}

	// Without eth_getBlockReceipts.
	p := &noBlockReceipts{target: node.URL(), calls: map[string]int{}}
	srv := httptest.NewServer(p)
	defer srv.Close()
	viaLogs := decode("eth_getLogs", fetchAll(dial(t, srv.URL, Options{Mode: Receipts, Concurrency: 1, BatchSize: 2, Retries: 2, Backoff: time.Millisecond, Timeout: 30 * time.Second})))
	if len(viaLogs) != len(direct) {
		t.Fatalf("via eth_getLogs: %d transactions, want %d", len(viaLogs), len(direct))
	}
	for h, g := range direct {
		if strings.Join(viaLogs[h].transfers, " ") != strings.Join(g.transfers, " ") || viaLogs[h].receipts {
			t.Errorf("tx %s via eth_getLogs: %+v, want the transfers %v without a receipt", h.Hex(), viaLogs[h], g.transfers)
		}
	}
	if p.calls["eth_getBlockReceipts"] != 2 || p.calls["eth_getLogs"] != 1+blocks || p.calls["debug_traceBlockByNumber"] != 0 {
		t.Errorf("calls through the proxy: %v; want eth_getBlockReceipts in the first batch only (two blocks), eth_getLogs per block, no trace", p.calls)
	}

	ix := openIndex(t)
	rep, err := dial(t, node.URL(), o).IngestBlocks(ctx, ix, 1, 1+blocks, ingest.Options{Config: cfg})
	if err != nil || !rep.Complete() || rep.Stored != 1+blocks*perBlock {
		t.Fatalf("ingest: %v\n%s", err, rep)
	}
	for _, r := range records(t, ix) {
		if r.Mode != normalform.ModeReceipts {
			t.Errorf("record %s: mode %s", r.Hash.Hex(), r.Mode)
		}
	}
}
