package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/flowq/flowq/normalform/trace"
)

const scenarioBundle = "../../examples/scenarios/geth/two_pool_arb.json"

// replayNode serves one saved scenario bundle over JSON-RPC on loopback,
// answering as go-ethereum does (single calls and batches). With fail503 it
// answers the first n HTTP requests with 503.
func replayNode(t *testing.T, fail503 int32) (url, txHash string, requests *atomic.Int32) {
	t.Helper()
	return replayNodeWith(t, fail503, nil)
}

// replayNodeWith is replayNode with the answers changed: mutate, when set,
// receives each method's answer and returns the one to give.
func replayNodeWith(t *testing.T, fail503 int32, mutate func(method string, res json.RawMessage) json.RawMessage) (url, txHash string, requests *atomic.Int32) {
	t.Helper()
	data, err := os.ReadFile(scenarioBundle)
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
	var r struct {
		TransactionHash string `json:"transactionHash"`
	}
	_ = json.Unmarshal(b.Receipts[0], &r)
	receipts, _ := json.Marshal(b.Receipts)
	traceItems, _ := json.Marshal([]map[string]json.RawMessage{{"txHash": json.RawMessage(`"` + r.TransactionHash + `"`), "result": b.Traces}})
	answers := map[string]json.RawMessage{
		"debug_traceBlockByNumber":  traceItems,
		"eth_getBlockReceipts":      receipts,
		"eth_getBlockByNumber":      b.Block,
		"debug_traceTransaction":    b.Traces,
		"eth_getTransactionReceipt": b.Receipts[0],
	}
	requests = new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if requests.Add(1) <= fail503 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		body, _ := io.ReadAll(req.Body)
		type call struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		answer := func(c call) map[string]any {
			res, ok := answers[c.Method]
			if ok && mutate != nil {
				res = mutate(c.Method, res)
			}
			if !ok {
				return map[string]any{"jsonrpc": "2.0", "id": c.ID, "error": map[string]any{"code": -32601, "message": "no method " + c.Method}}
			}
			return map[string]any{"jsonrpc": "2.0", "id": c.ID, "result": res}
		}
		w.Header().Set("Content-Type", "application/json")
		if bytes.HasPrefix(bytes.TrimSpace(body), []byte("[")) {
			var calls []call
			_ = json.Unmarshal(body, &calls)
			var out []map[string]any
			for _, c := range calls {
				out = append(out, answer(c))
			}
			_ = json.NewEncoder(w).Encode(out)
			return
		}
		var c call
		_ = json.Unmarshal(body, &c)
		_ = json.NewEncoder(w).Encode(answer(c))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, r.TransactionHash, requests
}

func TestFetchBlocksThenInspect(t *testing.T) {
	url, hash, reqs := replayNode(t, 2)
	dir := t.TempDir()
	_, errs, code := flowq(t, nil, "", "fetch", "--rpc", url, "--blocks", "72..72", "--out", dir)
	if code != 0 {
		t.Fatalf("fetch exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "1/1 blocks") || !strings.Contains(errs, "1 files written") {
		t.Errorf("stderr %q", errs)
	}
	if reqs.Load() != 3 {
		t.Errorf("%d HTTP requests, want 3 (two 503s, one batch)", reqs.Load())
	}
	if _, err := os.Stat(filepath.Join(dir, "block-72.json")); err != nil {
		t.Fatal(err)
	}
	out, errs, code := flowq(t, nil, "", "inspect", "--format", "json", dir)
	if code != 0 || !strings.Contains(out, strings.ToLower(hash)) {
		t.Fatalf("inspect exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

func TestFetchTxAndErrors(t *testing.T) {
	url, hash, _ := replayNode(t, 0)
	dir := t.TempDir()
	_, errs, code := flowq(t, map[string]string{"FLOWQ_RPC": url}, "", "fetch", "--quiet", "--tx", hash, "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "tx-"+strings.ToLower(hash)+".json")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"fetch", "--blocks", "1..2", "--out", dir},                                // no --rpc
		{"fetch", "--rpc", url, "--out", dir},                                      // nothing to fetch
		{"fetch", "--rpc", url, "--blocks", "9..1", "--out", dir},                  // bad range
		{"fetch", "--rpc", url, "--tx", "0x12", "--out", dir},                      // bad hash
		{"fetch", "--rpc", url, "--blocks", "1", "--mode", "erigon", "--out", dir}, // bad mode
		{"fetch", "--rpc", url, "--blocks", "1", "--tx", hash, "--out", dir},       // both
		{"fetch", "--rpc", url, "--blocks", "1"},                                   // no --out
	} {
		if _, errs, code := flowq(t, nil, "", args...); code != 2 || !strings.Contains(errs, "flowq fetch:") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errs)
		}
	}
	// A node without trace_block: the error names the method and block.
	_, errs, code = flowq(t, nil, "", "fetch", "--quiet", "--rpc", url, "--mode", "parity", "--blocks", "7", "--out", dir)
	if code != 1 || !strings.Contains(errs, "trace_block for block 7") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

func TestFetchTxBundles(t *testing.T) {
	url, hash, _ := replayNode(t, 1)
	bundles, err := fetchTxBundles(context.Background(), url, []string{hash})
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(scenarioBundle)
	if err != nil {
		t.Fatal(err)
	}
	got := trace.Decode(bundles[0], trace.Options{Source: "rpc"})
	exp := trace.Decode(want, trace.Options{Source: scenarioBundle})
	if len(got.Errors) != 0 || len(got.Txs) != 1 || len(exp.Txs) != 1 {
		t.Fatalf("decoded %d txs, errors %v", len(got.Txs), got.Errors)
	}
	g, e := got.Txs[0], exp.Txs[0]
	if g.Meta.Hash != e.Meta.Hash || len(g.Transfers) != len(e.Transfers) || !g.Meta.HasReceipt || !g.Meta.HasHeader {
		t.Fatalf("fetched %s with %d transfers, saved %s with %d", g.Meta.Hash.Hex(), len(g.Transfers), e.Meta.Hash.Hex(), len(e.Transfers))
	}
	for i := range g.Transfers {
		if g.Transfers[i] != e.Transfers[i] {
			t.Errorf("transfer %d: %+v against %+v", i, g.Transfers[i], e.Transfers[i])
		}
	}
	if _, err := fetchTxBundles(context.Background(), url, []string{"0xnothex"}); err == nil {
		t.Error("no error for a bad hash")
	}
}

// flowq inspect --rpc fetches a transaction from a node and analyses it,
// as the saved bundle does; a transaction hash without --rpc is a usage
// error that says what to do.
func TestInspectRPC(t *testing.T) {
	url, hash, _ := replayNode(t, 1) // one 503 first: retried
	out, errs, code := flowq(t, nil, "", "inspect", "--rpc", url, hash)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	saved, _, code2 := flowq(t, nil, "", "inspect", scenarioBundle)
	if code2 != 0 {
		t.Fatal("saved bundle failed")
	}
	verdict := func(s string) string {
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(l, "verdict") || strings.HasPrefix(l, "  gross") || strings.HasPrefix(l, "hashes") {
				return l
			}
		}
		return ""
	}
	if verdict(out) == "" || verdict(out) != verdict(saved) || !strings.Contains(out, "verdict ARBITRAGE") {
		t.Errorf("rpc and saved bundle differ:\n%s\n----\n%s", out, saved)
	}
	_, errs, code = flowq(t, nil, "", "inspect", hash)
	if code != 2 || !strings.Contains(errs, "is a transaction hash, not a file: give --rpc URL (or FLOWQ_RPC)") {
		t.Errorf("hash without --rpc: exit %d, %s", code, errs)
	}
	out, errs, code = flowq(t, map[string]string{"FLOWQ_RPC": url}, "", "inspect", hash)
	if code != 0 || !strings.Contains(out, "verdict ARBITRAGE") {
		t.Errorf("FLOWQ_RPC: exit %d, %s", code, errs)
	}
}
