package index

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/common"

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
	var in []Input
	for _, n := range []string{"sandwich_back", "sandwich_front", "sandwich_victim"} {
		in = append(in, FileInput(filepath.Join(dir, n+".json")))
	}
	sum, err := ix.Ingest(ctx, in, IngestOptions{})
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
	if _, err := ix.Ingest(ctx, in[2:], IngestOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if r, _, err = ix.Block(137); err != nil || len(r.Sandwiches) != 1 {
		t.Fatalf("victim back: %+v %v", r, err)
	}
	sum, err = ix.Ingest(ctx, []Input{FileInput(filepath.Join(dir, "star_r.json"))}, IngestOptions{})
	if err != nil || sum.Blocks != 1 {
		t.Fatalf("star_r: %d blocks, %v", sum.Blocks, err)
	}
	var seen []uint64
	if err := ix.BlockReports(ctx, Blocks(0, 1000), func(r *block.Report) error { seen = append(seen, r.Block); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[1] != 137 {
		t.Errorf("block reports %v", seen)
	}
	if err := ix.Verify(ctx); err != nil {
		t.Errorf("verify: %v", err)
	}
}
