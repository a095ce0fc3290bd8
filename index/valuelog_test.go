package index_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/internal/workload"
)

// valueLogRun ingests blocks synthetic blocks of blockTxs transactions
// with batchTxs a write, closes the index and returns what its value logs
// hold (their bytes after Badger's 20-byte file header), what the values
// of ValueThreshold bytes or more take as Badger's entries (key, version,
// value), how many such values there are, and all the values' bytes.
func valueLogRun(t *testing.T, blocks, blockTxs, batchTxs int) (logged, live int64, big int, all int64) {
	t.Helper()
	gen := generatorWith(t, workload.Options{Seed: 11, BlockTxs: blockTxs, FirstBlock: 21_500_000})
	var in []ingest.Input
	for range blocks {
		blk := gen.BlockAppend(nil)
		in = append(in, ingest.BundleInput(fmt.Sprintf("synthetic:block:%d", blk.Number), blk.Bundle))
	}
	dir := filepath.Join(t.TempDir(), "ix")
	ix, err := index.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := ingest.Ingest(context.Background(), ix, in, ingest.Options{BatchTxs: batchTxs})
	if err != nil || sum.Stored != blocks*blockTxs {
		t.Fatalf("ingest: %d stored of %d: %v", sum.Stored, blocks*blockTxs, err)
	}
	err = index.DB(ix).View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			item := it.Item()
			n := item.ValueSize()
			all += n
			if n >= index.ValueThreshold {
				big++
				live += int64(len(item.Key())) + 8 + n
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	logs, err := filepath.Glob(filepath.Join(dir, "*.vlog"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no value log in %s (%v)", dir, err)
	}
	for _, l := range logs {
		fi, err := os.Stat(l) // Badger cuts the log to its data on close
		if err != nil {
			t.Fatal(err)
		}
		logged += fi.Size() - 20
	}
	return logged, live, big, all
}

// TestPagesInValueLog: the record and NF pages (values of ValueThreshold
// bytes or more, index.go) are kept in Badger's value log, and an ingest
// whose writes end at the ends of blocks writes each of them there once:
// the value log holds the live pages and, beside each, only Badger's
// entry header and checksum (at most 24 bytes), no earlier versions.
// When every block is cut by a write (batches of 32 transactions, so a
// write of at most 64, blocks of 100), the pages a cut splits and the
// block's NF page are written twice, and the earlier versions, which the
// tree's compactions would have dropped, stay in the value log: it holds
// at most twice the live pages (27% more when this test was written).
func TestPagesInValueLog(t *testing.T) {
	logged, live, big, all := valueLogRun(t, 60, 100, 256)
	t.Logf("blocks ending writes: value log %d bytes, live pages %d bytes in %d values (of %d value bytes in all)", logged, live, big, all)
	if big == 0 || live < all/2 {
		t.Fatalf("%d values of %d bytes or more, %d of the index's %d value bytes: the pages are not the bulk", big, index.ValueThreshold, live, all)
	}
	if logged < live {
		t.Errorf("the value log holds %d bytes, less than the %d of the pages: they are in the tree", logged, live)
	}
	if over := logged - live; over > int64(24*big) {
		t.Errorf("the value log holds %d bytes beyond the live pages (%d values): pages written more than once", over, big)
	}
	logged, live, big, _ = valueLogRun(t, 30, 100, 32)
	t.Logf("every block cut: value log %d bytes, live pages %d bytes in %d values", logged, live, big)
	if logged < live || logged > 2*live+int64(24*big) {
		t.Errorf("blocks cut by writes: the value log holds %d bytes for %d of live pages", logged, live)
	}
}
