package index_test

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
)

// scanIndex is an index whose records spread over consecutive blocks
// (1000–1019, 124 each), far blocks (the corpus's mainnet blocks) and no
// block at all (corpus traces without one): runs, gaps and the unknown
// tail a chunked scan has to cut.
func scanIndex(t *testing.T) *index.Index {
	t.Helper()
	ix := openTemp(t)
	ingestCorpus(t, ix, ingest.Options{})
	if _, err := ingest.Ingest(context.Background(), ix, syntheticBlocks(t, 20, 1000, true), ingest.Options{Clock: fixedClock}); err != nil {
		t.Fatal(err)
	}
	return ix
}

// withWorkers runs f with the scan on w goroutines and chunks aiming at
// per records.
func withWorkers(w int, per int64, f func()) {
	defer index.SetScan(w, per)()
	f()
}

// TestScanRecordsParallel: the chunked scan on several goroutines gives
// exactly the sequential scan's records, in its order, for whole and
// header records, with and without a header predicate, over all blocks
// and over ranges that start and end inside runs.
func TestScanRecordsParallel(t *testing.T) {
	ix := scanIndex(t)
	ctx := context.Background()
	pools := func(r *index.Record) (bool, error) { return r.Counts.Pools >= 1 || r.Loc.Block%3 == 0, nil }
	ranges := []index.BlockRange{index.AllBlocks, index.Blocks(1003, 1011), index.Blocks(1019, 11017338), index.Blocks(0, 999), index.Blocks(index.UnknownBlock, index.AllBlocks.To)}
	type run struct {
		blocks index.BlockRange
		match  func(*index.Record) (bool, error)
		whole  bool
		addrs  bool
	}
	var runs []run
	for _, b := range ranges {
		runs = append(runs, run{b, nil, true, false}, run{b, pools, true, false}, run{b, pools, false, true}, run{b, nil, false, false})
	}
	collect := func(r run) []*index.Record {
		var out []*index.Record
		if err := ix.Filter(ctx, r.blocks, r.addrs, r.match, r.whole, func(rec *index.Record) error {
			out = append(out, rec)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	total := 0
	for i, r := range runs {
		var want []*index.Record
		withWorkers(1, 4096, func() { want = collect(r) })
		total += len(want)
		for _, w := range []int{2, 3, 5} {
			for _, per := range []int64{1, 37, 4096} {
				var got []*index.Record
				withWorkers(w, per, func() { got = collect(r) })
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("run %d (blocks %v, whole %v, match %v) on %d workers, chunks of %d: %d records, want %d (or a difference in order or content)",
						i, r.blocks, r.whole, r.match != nil, w, per, len(got), len(want))
				}
			}
		}
	}
	if total == 0 {
		t.Fatal("the runs saw no records")
	}
	var all []*index.Record
	withWorkers(3, 50, func() {
		if err := ix.Records(ctx, index.AllBlocks, func(r *index.Record) error { all = append(all, r); return nil }); err != nil {
			t.Fatal(err)
		}
	})
	n, err := ix.Count(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != n || n < 20*124 {
		t.Fatalf("Records gave %d, the index counts %d", len(all), n)
	}
	for i := 1; i < len(all); i++ {
		if !all[i-1].Loc.Less(all[i].Loc) {
			t.Fatalf("record %d at %v after %v", i, all[i].Loc, all[i-1].Loc)
		}
	}
}

// TestScanRecordsStops: fn's error stops the scan and is returned, after
// exactly the records before it; a cancelled context stops it too.
func TestScanRecordsStops(t *testing.T) {
	ix := scanIndex(t)
	stop := errors.New("stop")
	withWorkers(2, 20, func() {
		for _, k := range []int{1, 150, 1000} {
			seen := 0
			err := ix.Records(context.Background(), index.AllBlocks, func(*index.Record) error {
				if seen == k {
					return stop
				}
				seen++
				return nil
			})
			if !errors.Is(err, stop) || seen != k {
				t.Fatalf("stop after %d: err %v, %d records", k, err, seen)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		seen := 0
		err := ix.Records(ctx, index.AllBlocks, func(*index.Record) error {
			if seen++; seen == 200 {
				cancel()
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled scan: %v after %d records", err, seen)
		}
	})
}

// TestScanRecordsBadRecord: a record that does not decode stops the scan
// with its error after exactly the records before it, as the sequential
// scan does, whatever the chunking.
func TestScanRecordsBadRecord(t *testing.T) {
	ix := scanIndex(t)
	ctx := context.Background()
	var all []index.Loc
	if err := ix.Records(ctx, index.AllBlocks, func(r *index.Record) error { all = append(all, r.Loc); return nil }); err != nil {
		t.Fatal(err)
	}
	bad := all[len(all)/3]
	if err := index.SetRawRecord(ix, bad, []byte{0xff, 0x01}); err != nil {
		t.Fatal(err)
	}
	scan := func() ([]index.Loc, error) {
		var got []index.Loc
		err := ix.Records(ctx, index.AllBlocks, func(r *index.Record) error { got = append(got, r.Loc); return nil })
		return got, err
	}
	var want []index.Loc
	var wantErr error
	withWorkers(1, 4096, func() { want, wantErr = scan() })
	if wantErr == nil || len(want) != len(all)/3 {
		t.Fatalf("sequential scan over a bad record: %d records, err %v", len(want), wantErr)
	}
	for _, w := range []int{2, 3} {
		for _, per := range []int64{1, 37, 4096} {
			withWorkers(w, per, func() {
				got, err := scan()
				if err == nil || err.Error() != wantErr.Error() || !reflect.DeepEqual(got, want) {
					t.Fatalf("%d workers, chunks of %d: %d records, err %v; want %d, %v", w, per, len(got), err, len(want), wantErr)
				}
			})
		}
	}
}
