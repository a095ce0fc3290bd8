package main

import (
	"context"
	"math/big"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/flowq/flowq/internal/evmnode"
)

// TestIngestConfirmCLI: `flowq ingest --rpc URL --blocks 1..1 --mode
// receipts --confirm traces` against the in-process node, on a block of
// one plain payment: it is screened from receipts, nothing is traced, and
// the summary says so (index/fetch TestConfirmTraces confirms arbitrages).
func TestIngestConfirmCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a node")
	}
	node, err := evmnode.Start(evmnode.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer node.Close()
	to := crypto.PubkeyToAddress(evmnode.Key(1).PublicKey)
	tx := types.MustSignNewTx(evmnode.Key(0), node.Signer(), &types.DynamicFeeTx{ChainID: big.NewInt(evmnode.ChainID),
		GasTipCap: big.NewInt(1e9), GasFeeCap: big.NewInt(1e11), Gas: 21000, To: &to, Value: big.NewInt(1)})
	if _, err := node.Mine(context.Background(), tx); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"FLOWQ_INDEX": filepath.Join(t.TempDir(), "idx")}
	_, errs, code := flowq(t, env, "", "ingest", "--quiet", "--rpc", node.URL(), "--blocks", "1..1", "--mode", "receipts", "--confirm", "traces")
	if code != 0 || !strings.Contains(errs, "1 fetched") || !strings.Contains(errs, "1 screened from receipts, 0 to confirm, 0 confirmed (traced), 0 changed") {
		t.Errorf("exit %d: %s", code, errs)
	}
	t.Log(errs)
	out, _, code := flowq(t, env, "", "query", "count by mode")
	if code != 0 || !strings.Contains(out, "receipts") {
		t.Errorf("count by mode: exit %d: %s", code, out)
	}
}
