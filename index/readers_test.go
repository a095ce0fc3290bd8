package index_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/normalform"
)

// TestReadersWhileWriting runs queries while an ingest writes (one
// process, one Badger: reads see snapshots). Every reader must see a
// consistent snapshot: in one read transaction as many verdict keys as
// records (so a count by verdict sums to the records visible), every
// record with all its secondary keys and every key with its record
// (Verify, which reads in one transaction); the count only grows; a
// verdict key found by the planner's iterator always leads to its record.
func TestReadersWhileWriting(t *testing.T) {
	ix := openTemp(t)
	ctx := context.Background()
	inputs := crashInputs(t)
	var wg sync.WaitGroup
	done := make(chan struct{})
	var ingestErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(done)
		_, ingestErr = ingest.Ingest(ctx, ix, inputs, ingest.Options{BatchTxs: 1, Workers: 2, Clock: fixedClock})
	}()

	type snap struct{ records, verdictKeys int }
	snapshot := func() (snap, error) {
		var s snap
		err := index.DB(ix).View(func(txn *badger.Txn) error {
			it := txn.NewIterator(badger.IteratorOptions{})
			defer it.Close()
			for it.Rewind(); it.Valid(); it.Next() {
				switch index.Kind(it.Item().Key()[0]) {
				case index.KindTx: // a page of records (layout/page.go)
					item := it.Item()
					if err := item.Value(func(v []byte) error {
						n, err := index.RecordsUnder(item.Key(), v)
						s.records += n
						return err
					}); err != nil {
						return err
					}
				case index.KindVerdict: // a posting of a block's positions
					item := it.Item()
					if err := item.Value(func(v []byte) error {
						n, err := index.PositionsUnder(item.Key(), v)
						s.verdictKeys += n
						return err
					}); err != nil {
						return err
					}
				}
			}
			return nil
		})
		return s, err
	}
	var mu sync.Mutex
	var problems []string
	report := func(format string, a ...any) {
		mu.Lock()
		problems = append(problems, fmt.Sprintf(format, a...))
		mu.Unlock()
	}
	rounds := make([]int, 3)
	for r := range rounds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := 0
			for stop := false; !stop; {
				select {
				case <-done:
					stop = true // one more round after the ingest ends
				default:
				}
				rounds[r]++
				switch r {
				case 0: // raw snapshot: records and verdict keys agree
					s, err := snapshot()
					if err != nil {
						report("snapshot: %v", err)
						return
					}
					if s.records != s.verdictKeys {
						report("a snapshot with %d records and %d verdict keys", s.records, s.verdictKeys)
					}
					if s.records < last {
						report("records went from %d to %d", last, s.records)
					}
					last = s.records
				case 1: // every record with all its keys, every key with its record
					if err := ix.Verify(ctx); err != nil {
						report("verify during the ingest: %v", err)
					}
				case 2: // the planner's path: a scan of records by verdict
					for _, v := range []normalform.Verdict{normalform.VerdictNone, normalform.VerdictWarning, normalform.VerdictArbitrage} {
						err := ix.ByVerdict(ctx, v, index.AllBlocks, func(_ normalform.Tier, r index.Ref) error {
							if _, err := ix.Get(r.Hash); err != nil {
								return fmt.Errorf("verdict key of %s without its record: %w", r.Hash.Hex(), err)
							}
							return nil
						})
						if err != nil {
							report("by verdict: %v", err)
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	if ingestErr != nil {
		t.Fatal(ingestErr)
	}
	for _, p := range problems {
		t.Error(p)
	}
	n, _ := ix.Count(ctx)
	t.Logf("%d transactions ingested; %v rounds of (snapshot, verify, by verdict) during the ingest", n, rounds)
	scen, err := filepath.Glob("../examples/scenarios/geth/*.json")
	if err != nil || len(scen) == 0 {
		t.Fatalf("scenario bundles: %d, %v", len(scen), err)
	}
	if n != corpusDistinct+len(scen) {
		t.Errorf("%d transactions after the ingest, want %d (the corpus) + %d (the scenarios)", n, corpusDistinct, len(scen))
	}
}
