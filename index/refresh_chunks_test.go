package index_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/internal/workload"
	"github.com/flowq/flowq/normalform"
)

// TestRefreshManyBlocks: an ingest of more blocks than one refresh
// computes and writes at a time (index.refreshChunk, 256) leaves every
// block computed once, none dirty, and findings equal to what
// VerifyBlocks recomputes from the records, each with its header's
// transaction count.
func TestRefreshManyBlocks(t *testing.T) {
	const blocks = 2*256 + 77
	gen := generatorWith(t, workload.Options{Seed: 7, BlockTxs: 6, FirstBlock: 21_000_000})
	var in []ingest.Input
	var first, last uint64
	for k := range blocks {
		blk := gen.BlockAppend(nil)
		if k == 0 {
			first = blk.Number
		}
		last = blk.Number
		in = append(in, ingest.BundleInput(fmt.Sprintf("synthetic:block:%d", blk.Number), blk.Bundle))
	}
	ix := openTemp(t)
	ctx := context.Background()
	sum, err := ingest.Ingest(ctx, ix, in, ingest.Options{BatchTxs: 64})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 0 || sum.Blocks != blocks {
		t.Fatalf("ingest: %d failed, findings of %d blocks computed (want 0, %d)", sum.Failed, sum.Blocks, blocks)
	}
	withFindings, counted := 0, 0
	for n := first; n <= last; n++ {
		if d, err := ix.Dirty(n); err != nil || d {
			t.Fatalf("block %d: dirty %v, %v", n, d, err)
		}
		r, ok, err := ix.Block(n)
		if err != nil {
			t.Fatalf("block %d: %v", n, err)
		}
		if ok {
			withFindings++
			if r.Count == 6 {
				counted++
			}
		}
	}
	if withFindings != blocks {
		t.Errorf("%d of %d blocks have findings", withFindings, blocks)
	}
	if counted != blocks {
		t.Errorf("%d of %d blocks' findings count the header's 6 transactions", counted, blocks)
	}
	checked, err := ix.VerifyBlocks(ctx, normalform.DefaultConfig())
	if err != nil || checked != blocks {
		t.Fatalf("verify: %d blocks checked (want %d): %v", checked, blocks, err)
	}
	// Computed again from the records alone (no ingest's facts): nothing
	// is dirty, so nothing is computed.
	if n, err := ix.RefreshBlocks(ctx, nil); err != nil || n != 0 {
		t.Fatalf("refresh of a clean index: %d blocks, %v", n, err)
	}
}
