package index_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/ethereum/go-ethereum/common"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/normalform/block"
)

// TestBlockFindings: the sandwich's three legs, ingested as three inputs,
// give block 137 its findings (one sandwich, the bot's gain in WETH);
// writing a record marks its block dirty until the findings are computed
// again, and a later ingest of another block leaves them.
func TestBlockFindings(t *testing.T) {
	ix := openTemp(t)
	ctx := context.Background()
	dir := filepath.Join("..", "examples", "scenarios", "geth")
	var in []ingest.Input
	for _, n := range []string{"sandwich_back", "sandwich_front", "sandwich_victim"} {
		in = append(in, ingest.FileInput(filepath.Join(dir, n+".json")))
	}
	sum, err := ingest.Ingest(ctx, ix, in, ingest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Blocks != 1 {
		t.Errorf("blocks computed %d, want 1", sum.Blocks)
	}
	r, ok, err := ix.Block(137)
	if err != nil || !ok {
		t.Fatalf("block 137: ok %v err %v", ok, err)
	}
	if len(r.Txs) != 3 || len(r.Sandwiches) != 1 || r.Sandwiches[0].Gain != "552693635471797090" || r.Sandwiches[0].Victims[0].Index != 1 {
		t.Fatalf("block 137: %+v", r)
	}
	if d, err := ix.Dirty(137); err != nil || d {
		t.Errorf("dirty after ingest: %v %v", d, err)
	}
	// A record written outside an ingest marks its block.
	rec, err := ix.Get(common.HexToHash(r.Txs[1].Tx))
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Delete(rec.Hash); err != nil {
		t.Fatal(err)
	}
	if d, err := ix.Dirty(137); err != nil || !d {
		t.Fatalf("dirty after a delete: %v %v", d, err)
	}
	if n, err := ix.RefreshBlocks(ctx, nil); err != nil || n != 1 {
		t.Fatalf("refresh: %d %v", n, err)
	}
	r, _, err = ix.Block(137)
	if err != nil || len(r.Sandwiches) != 0 || !r.Partial {
		t.Fatalf("without the victim: %+v %v", r, err)
	}
	// Ingesting the victim again (force: its input is done) restores it;
	// another block's ingest leaves block 137 as it is.
	if _, err := ingest.Ingest(ctx, ix, in[2:], ingest.Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	if r, _, err = ix.Block(137); err != nil || len(r.Sandwiches) != 1 {
		t.Fatalf("victim back: %+v %v", r, err)
	}
	sum, err = ingest.Ingest(ctx, ix, []ingest.Input{ingest.FileInput(filepath.Join(dir, "star_r.json"))}, ingest.Options{})
	if err != nil || sum.Blocks != 1 {
		t.Fatalf("star_r: %d blocks, %v", sum.Blocks, err)
	}
	var seen []uint64
	if err := ix.BlockReports(ctx, index.Blocks(0, 1000), func(r *block.Report) error { seen = append(seen, r.Block); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[1] != 137 {
		t.Errorf("block reports %v", seen)
	}
	if err := ix.Verify(ctx); err != nil {
		t.Errorf("verify: %v", err)
	}
}

// TestVerifyBlocks: VerifyBlocks passes the scenario block's findings as
// ingested, and names block 137 when its stored findings are rewritten
// (through the index's own write path) to differ from its records, when
// a record is deleted (the block is dirty), and when the dirty key is
// gone but the findings were not computed again (stale).
func TestVerifyBlocks(t *testing.T) {
	ix := openTemp(t)
	ctx := context.Background()
	dir := filepath.Join("..", "examples", "scenarios", "geth")
	var in []ingest.Input
	for _, n := range []string{"sandwich_back", "sandwich_front", "sandwich_victim"} {
		in = append(in, ingest.FileInput(filepath.Join(dir, n+".json")))
	}
	if _, err := ingest.Ingest(ctx, ix, in, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if n, err := ix.VerifyBlocks(ctx, nil); err != nil || n != 1 {
		t.Fatalf("verify blocks of a fresh ingest: %d blocks, %v", n, err)
	}
	r, ok, err := ix.Block(137)
	if err != nil || !ok {
		t.Fatalf("block 137: %v %v", ok, err)
	}
	write := func(r *block.Report) {
		t.Helper()
		val, err := index.EncodeBlockValue(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := index.DB(ix).Update(func(txn *badger.Txn) error { return index.Set(ix, txn, index.BlockKey(137).Bytes(), val) }); err != nil {
			t.Fatal(err)
		}
	}
	good := *r
	bad := *r
	bad.Sandwiches = append([]block.Sandwich(nil), r.Sandwiches...)
	bad.Sandwiches[0].Gain = "1"
	write(&bad)
	_, err = ix.VerifyBlocks(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "block 137: stored findings differ") || !strings.Contains(err.Error(), "in sandwiches") {
		t.Fatalf("a corrupted gain: %v", err)
	}
	write(&good)
	if _, err := ix.VerifyBlocks(ctx, nil); err != nil {
		t.Fatalf("restored: %v", err)
	}

	rec, err := ix.Get(common.HexToHash(r.Txs[1].Tx))
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Delete(rec.Hash); err != nil {
		t.Fatal(err)
	}
	_, err = ix.VerifyBlocks(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "block 137: dirty") {
		t.Fatalf("after a delete: %v", err)
	}
	// Without its dirty key, the block's findings still name the victim.
	if err := index.DB(ix).Update(func(txn *badger.Txn) error { return index.Del(ix, txn, index.DirtyKey(137).Bytes()) }); err != nil {
		t.Fatal(err)
	}
	_, err = ix.VerifyBlocks(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "block 137: stored findings differ") || !strings.Contains(err.Error(), "computed 2 txs") {
		t.Fatalf("stale findings: %v", err)
	}
	// Findings with no record behind them.
	if err := index.DB(ix).Update(func(txn *badger.Txn) error {
		return index.Set(ix, txn, index.BlockKey(200).Bytes(), mustEncode(t, &block.Report{Block: 200}))
	}); err != nil {
		t.Fatal(err)
	}
	_, err = ix.VerifyBlocks(ctx, nil)
	if err == nil || !strings.Contains(err.Error(), "block 200: findings stored for a block with no records") {
		t.Fatalf("orphan findings: %v", err)
	}
}

func mustEncode(t *testing.T, r *block.Report) []byte {
	t.Helper()
	v, err := index.EncodeBlockValue(r)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
