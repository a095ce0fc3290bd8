package index_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
)

// TestIngestWritesEndAtBlocks: an ingest's writes end at the end of a
// block (ingest's writer.full), so that a block's postings, record pages
// and NF page are each set once; only a block of more than twice
// BatchTxs transactions is cut. Blocks of 124 transactions (mainnet
// block 11017338 renumbered), four of them.
func TestIngestWritesEndAtBlocks(t *testing.T) {
	for _, tc := range []struct {
		batch int
		cut   bool // a block is longer than twice the batch: some keys are set twice
	}{
		{batch: 100},           // 124 > 100: the old rule wrote 100 and then 24 of each block, setting its keys twice
		{batch: 40, cut: true}, // 124 > 2×40: cut at 80, then at the block's end
		{batch: 1000},
	} {
		t.Run(fmt.Sprint(tc.batch), func(t *testing.T) {
			ix := openTemp(t)
			sets := map[string]int{}
			commits := 0
			index.SetHook(ix, func(op string, k []byte) error {
				switch index.Kind(k[0]) {
				case index.KindTx, index.KindNF, index.KindHash, index.KindBot, index.KindVerdict,
					index.KindProfit, index.KindAddr, index.KindToken:
					if op == "set" {
						sets[string(k)]++
					}
				}
				return nil
			})
			in := syntheticBlocks(t, 4, 30_000_000, true)
			sum, err := ingest.Ingest(context.Background(), ix, in, ingest.Options{BatchTxs: tc.batch, AfterCommit: func(int) { commits++ }})
			if err != nil {
				t.Fatal(err)
			}
			if sum.Stored != 4*124 {
				t.Fatalf("stored %d, want %d", sum.Stored, 4*124)
			}
			twice, total := 0, 0
			for _, n := range sets {
				total += n
				if n > 1 {
					twice++
				}
			}
			t.Logf("BatchTxs %d: %d writes, %d keys, %d sets", tc.batch, commits, len(sets), total)
			if len(sets) == 0 {
				t.Fatal("no key set")
			}
			if tc.cut != (twice > 0) {
				t.Errorf("BatchTxs %d: %d of %d keys set more than once (cut blocks expected: %v)", tc.batch, twice, len(sets), tc.cut)
			}
			if tc.batch == 40 && commits < 8 {
				t.Errorf("BatchTxs 40: %d writes, want at least two a block", commits)
			}
			// What was written is what a single write of everything writes.
			ref := openTemp(t)
			if _, err := ingest.Ingest(context.Background(), ref, syntheticBlocks(t, 4, 30_000_000, true), ingest.Options{BatchTxs: 1 << 20}); err != nil {
				t.Fatal(err)
			}
			if a, b := dumpRecords(t, ix), dumpRecords(t, ref); a != b {
				t.Errorf("BatchTxs %d: the records differ from one write's", tc.batch)
			}
		})
	}
}

// dumpRecords is every record of ix as text, in position order.
func dumpRecords(t *testing.T, ix *index.Index) string {
	t.Helper()
	var s []byte
	err := ix.Scan(context.Background(), func(r *index.Record) error {
		c := *r
		c.Latency = 0 // the analysis's own time
		s = fmt.Appendf(s, "%+v\n", c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(s)
}
