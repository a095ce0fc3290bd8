package index_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/normalform/block"
)

// TestBlockValueCompact: the stored findings of the sandwich block hold
// its findings in a fraction of the report's JSON (issue 22: they were the
// JSON of the whole report, rows and swaps included), and Block gives the
// rows and swaps back from the records, with the roles.
func TestBlockValueCompact(t *testing.T) {
	ix := openTemp(t)
	ctx := context.Background()
	dir := filepath.Join("..", "examples", "scenarios", "geth")
	var in []ingest.Input
	for _, n := range []string{"sandwich_back", "sandwich_front", "sandwich_victim", "star_r"} {
		in = append(in, ingest.FileInput(filepath.Join(dir, n+".json")))
	}
	if _, err := ingest.Ingest(ctx, ix, in, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	stored := func(n uint64) []byte {
		var v []byte
		if err := index.DB(ix).View(func(txn *badger.Txn) error {
			item, err := txn.Get(index.BlockKey(n).Bytes())
			if err != nil {
				return err
			}
			v, err = item.ValueCopy(nil)
			return err
		}); err != nil {
			t.Fatalf("block %d: %v", n, err)
		}
		return v
	}
	r, ok, err := ix.Block(137)
	if err != nil || !ok {
		t.Fatalf("block 137: %v %v", ok, err)
	}
	full, _ := json.Marshal(r)
	v := stored(137)
	t.Logf("block 137: %d bytes stored, the report's JSON %d", len(v), len(full))
	if len(v)*3 > len(full) {
		t.Errorf("block 137: %d bytes stored, more than a third of the report's JSON (%d)", len(v), len(full))
	}
	if len(r.Txs) != 3 || len(r.Swaps) == 0 || len(r.Txs[0].Roles) != 1 || r.Txs[0].Roles[0] != "sandwich_front" || r.Txs[1].Roles[0] != "sandwich_victim" {
		t.Fatalf("block 137 rebuilt: %d txs %+v, %d swaps", len(r.Txs), r.Txs, len(r.Swaps))
	}
	// A block without findings: a few bytes.
	var other uint64
	if err := ix.BlockReports(ctx, index.Blocks(0, 1<<40-2), func(rep *block.Report) error {
		if rep.Block != 137 {
			other = rep.Block
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if v := stored(other); len(v) > 40 {
		t.Errorf("block %d without findings: %d bytes stored", other, len(v))
	}
}
