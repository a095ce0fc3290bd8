package index

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/block"
)

// TestRefreshReadsIngestFacts: the findings an ingest's batches compute
// read the facts the ingest kept for the records it wrote (a builder
// payment, altered in the facts kept for the victim, shows in the
// findings; VerifyBlocks, which decodes the records, names the
// difference), but not for a record written since by another writer (the
// front, its facts altered too: its content is not the one they were kept
// for, so it is decoded); a block computed twice by one ingest counts once.
func TestRefreshReadsIngestFacts(t *testing.T) {
	ctx := context.Background()
	ix, err := Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	cfg := normalform.DefaultConfig()
	b, err := ix.Batches(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	fin := &Finish{Name: "test"}
	var ops []Op
	var front *Record
	for _, n := range []string{"sandwich_front", "sandwich_victim", "sandwich_back"} {
		a := scenarioAnalysis(t, n)
		rec, err := NewRecord(a, 0)
		if err != nil {
			t.Fatal(err)
		}
		e := NewEntry(rec)
		e.Facts = block.FactsOf(a, cfg)
		switch n { // not what the records give
		case "sandwich_front":
			front = rec
			e.Facts.Costs.Builder.SetUint64(12345)
		case "sandwich_victim":
			e.Facts.Costs.Builder.SetUint64(1000000)
		}
		ops = append(ops, Op{Entry: e, Owner: fin})
		fin.Txs++
	}
	ops = append(ops, Op{Fin: fin})
	if err := b.Write(ops); err != nil {
		t.Fatal(err)
	}
	// Another writer rewrites the front with other content.
	front.GasUsed++
	if err := ix.PutRecord(front); err != nil {
		t.Fatal(err)
	}
	if n, err := b.RefreshBlocks(ctx); err != nil || n != 1 {
		t.Fatalf("refresh: %d %v", n, err)
	}
	r, ok, err := ix.Block(front.Loc.Block)
	if err != nil || !ok {
		t.Fatalf("block: %v %v", ok, err)
	}
	if r.Builder.Payments != "1000000" || len(r.Sandwiches) != 1 {
		t.Fatalf("builder payments %s (want the victim's kept facts, 1000000, and the front's record, 0), %d sandwiches", r.Builder.Payments, len(r.Sandwiches))
	}
	if _, err := ix.VerifyBlocks(ctx, cfg); err == nil || !strings.Contains(err.Error(), "builder") {
		t.Fatalf("verify: %v", err)
	}
	// The block dirtied again and computed again counts once.
	front.GasUsed++
	if err := ix.PutRecord(front); err != nil {
		t.Fatal(err)
	}
	if n, err := b.RefreshBlocks(ctx); err != nil || n != 1 {
		t.Fatalf("refresh again: %d blocks (want the same one, once), %v", n, err)
	}
}
