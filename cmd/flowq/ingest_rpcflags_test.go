package main

import (
	"context"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/flowq/flowq/internal/evmnode"
)

// TestIngestRPCFlags: fetch's request flags hold in `ingest --rpc
// --blocks`. Through a loopback proxy counting HTTP requests: four blocks
// in receipts mode take one HTTP request with --rpc-batch 4 --concurrency
// 1 and more without; a node answering 503 is asked once (the batch of
// four, then each block alone) with --retries 0 and three times with
// --retries 2; --retries without --rpc is a usage
// error.
func TestIngestRPCFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a node")
	}
	node, err := evmnode.Start(evmnode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	to := crypto.PubkeyToAddress(evmnode.Key(1).PublicKey)
	for i := 0; i < 4; i++ {
		tx := types.MustSignNewTx(evmnode.Key(0), node.Signer(), &types.DynamicFeeTx{ChainID: big.NewInt(evmnode.ChainID), Nonce: uint64(i),
			GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(1e11), Gas: 21000, To: &to, Value: big.NewInt(1)})
		if _, err := node.Mine(context.Background(), tx); err != nil {
			t.Fatal(err)
		}
	}
	var requests atomic.Int64
	var refuse atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if refuse.Load() {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		resp, err := http.Post(node.URL(), "application/json", r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	defer srv.Close()
	run := func(args ...string) (string, int) {
		env := map[string]string{"FLOWQ_INDEX": filepath.Join(t.TempDir(), "idx")}
		requests.Store(0)
		_, errs, code := flowq(t, env, "", append([]string{"ingest", "--quiet", "--rpc", srv.URL, "--blocks", "1..4", "--mode", "receipts"}, args...)...)
		return errs, code
	}
	errs, code := run("--rpc-batch", "4", "--concurrency", "1")
	if code != 0 || !strings.Contains(errs, "4 fetched") {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("--rpc-batch 4: %d HTTP requests, want 1", n)
	}
	if _, code = run(); code != 0 || requests.Load() < 4 {
		t.Errorf("default batch: exit %d, %d HTTP requests, want at least 4", code, requests.Load())
	}
	refuse.Store(true)
	for _, c := range []struct {
		retries string
		want    int64
	}{{"0", 5}, {"2", 15}} { // each attempt: the batch, then each block alone
		errs, code = run("--rpc-batch", "4", "--retries", c.retries, "--timeout", "5s")
		if code != 1 || !strings.Contains(errs, "503") {
			t.Errorf("--retries %s against a refusing node: exit %d: %s", c.retries, code, errs)
		}
		if n := requests.Load(); n != c.want {
			t.Errorf("--retries %s: %d HTTP requests, want %d", c.retries, n, c.want)
		}
	}
	env := map[string]string{"FLOWQ_INDEX": filepath.Join(t.TempDir(), "idx")}
	if _, errs, code := flowq(t, env, "", "ingest", "--retries", "1", "x.json"); code != 2 || !strings.Contains(errs, "--retries goes with --rpc") {
		t.Errorf("--retries without --rpc: exit %d: %s", code, errs)
	}
}
