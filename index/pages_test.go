package index

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// Record pages (schema 11, pages.go, layout/page.go).

// pagedRecords are the corpus's records at positions chosen to fill,
// share and skip pages (S is layout.PageSpan): block 500 at indexes 3i
// (a third of each page, the last partial), block 501 at S+i for the
// first 5 (one page not at index 0), block 502 at index S-1 (a page's
// last position) and S (the next page's first); the corpus's records
// without an index keep their position (lone keys).
func pagedRecords(t testing.TB) []*Record {
	t.Helper()
	var out []*Record
	seen := map[normalform.Hash]bool{}
	n := 0
	for _, a := range analyseCorpus(t) {
		rec, err := NewRecord(a, time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if seen[rec.Hash] {
			continue
		}
		seen[rec.Hash] = true
		if rec.Loc.Known() {
			switch {
			case n < 5:
				rec.Loc = Loc{Block: 501, Index: uint32(layout.PageSpan + n)}
			case n == 5:
				rec.Loc = Loc{Block: 502, Index: layout.PageSpan - 1}
			case n == 6:
				rec.Loc = Loc{Block: 502, Index: layout.PageSpan}
			default:
				rec.Loc = Loc{Block: 500, Index: uint32(3 * (n - 7))}
			}
			n++
		}
		out = append(out, rec)
	}
	if n < 100 {
		t.Fatalf("only %d corpus records with a position", n)
	}
	return out
}

func openPaged(t testing.TB) *Index {
	t.Helper()
	ix, err := Open(filepath.Join(t.TempDir(), "ix"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

// pageKeys lists the tx keys of the index (pages and lone records) with
// the number of records under each.
func pageKeys(t testing.TB, ix *Index) map[string]int {
	t.Helper()
	out := map[string]int{}
	if err := ix.db.View(func(txn *badger.Txn) error {
		return scanTxn(context.Background(), txn, kindPrefix(KindTx), nil, true, func(k, v []byte) ([]byte, bool, error) {
			n, err := RecordsUnder(k, v)
			out[string(k)] = n
			return nil, false, err
		})
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPagesReadBack: records put one by one and in batches into pages
// are read back by GetAt, Get, the lookups and the scans exactly as a
// reference kept beside them (the records put, by position) says: the
// same records at the same positions, in position order; Count counts
// records and Stats says how many keys hold them; Verify finds nothing.
func TestPagesReadBack(t *testing.T) {
	ctx := context.Background()
	recs := pagedRecords(t)
	for _, batched := range []bool{false, true} {
		ix := openPaged(t)
		if batched {
			b, err := ix.Batches(ctx, normalform.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			fin := &Finish{Name: "paged"}
			var ops []Op
			for i, r := range recs {
				ops = append(ops, Op{Entry: NewEntry(r), Owner: fin})
				if len(ops) == 17 || i == len(recs)-1 { // batches that end inside pages
					if err := b.Write(ops); err != nil {
						t.Fatal(err)
					}
					ops = nil
				}
			}
		} else {
			for _, r := range recs {
				if err := ix.PutRecord(r); err != nil {
					t.Fatal(err)
				}
			}
		}
		ref := map[Loc]*Record{}
		var locs []Loc
		pages := map[Loc]bool{}
		for _, r := range recs {
			ref[r.Loc] = r
			locs = append(locs, r.Loc)
			pages[layout.PageLoc(r.Loc)] = true
		}
		sort.Slice(locs, func(i, j int) bool { return locs[i].Less(locs[j]) })
		for _, l := range locs {
			want := ref[l]
			got, err := ix.GetAt(l)
			if err != nil || got.Hash != want.Hash || got.Loc != l || !bytes.Equal(got.NF, want.NF) || got.Verdict != want.Verdict {
				t.Fatalf("batched %v: GetAt(%s): %v", batched, l, err)
			}
			byHash, err := ix.Get(want.Hash)
			if err != nil || byHash.Loc != l || !bytes.Equal(byHash.NF, want.NF) {
				t.Fatalf("batched %v: Get(%s): %v", batched, want.Hash.Hex(), err)
			}
			found := false
			if err := ix.ByHash(ctx, normalform.Exact, want.Hashes.Exact, AllBlocks, func(r Ref) error {
				found = found || r.Loc == l
				return nil
			}); err != nil || !found {
				t.Fatalf("batched %v: ByHash exact of the record at %s: found %v, %v", batched, l, found, err)
			}
		}
		for _, l := range []Loc{{Block: 500, Index: 1}, {Block: 501, Index: 0}, {Block: 501, Index: layout.PageSpan - 1}, {Block: 502, Index: layout.PageSpan + 1}, {Block: 503, Index: 0}} {
			if _, err := ix.GetAt(l); !errors.Is(err, ErrNotFound) {
				t.Fatalf("GetAt(%s), no record there: %v", l, err)
			}
		}
		var scanned []Loc
		if err := ix.Records(ctx, AllBlocks, func(r *Record) error {
			if want := ref[r.Loc]; want == nil || want.Hash != r.Hash || !bytes.Equal(r.NF, want.NF) {
				t.Fatalf("Records: %s is not the record put there", r.Loc)
			}
			scanned = append(scanned, r.Loc)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if len(scanned) != len(locs) {
			t.Fatalf("Records: %d records, want %d", len(scanned), len(locs))
		}
		for i := range locs {
			if scanned[i] != locs[i] {
				t.Fatalf("Records: record %d at %s, want %s", i, scanned[i], locs[i])
			}
		}
		var inBlock []Loc
		if err := ix.ByBlocks(ctx, Blocks(500, 500), func(r Ref) error { inBlock = append(inBlock, r.Loc); return nil }); err != nil {
			t.Fatal(err)
		}
		want500 := 0
		for _, l := range locs {
			if l.Block == 500 && l.Known() {
				want500++
			}
		}
		if len(inBlock) != want500 || want500 <= layout.PageSpan {
			t.Fatalf("ByBlocks(500): %d records, want %d (more than a page)", len(inBlock), want500)
		}
		for i, l := range inBlock {
			if l.Block != 500 || l.Index != uint32(3*i) {
				t.Fatalf("ByBlocks(500): record %d at %s", i, l)
			}
		}
		if n, err := ix.Count(ctx); err != nil || n != len(recs) {
			t.Fatalf("Count: %d, %v; want %d", n, err, len(recs))
		}
		st, err := ix.Stats(ctx)
		if err != nil || st[KindTx].Keys != len(recs) || st[KindTx].Pages != len(pages) {
			t.Fatalf("Stats: tx %+v, %v; want %d records in %d keys", st[KindTx], err, len(recs), len(pages))
		}
		if len(pages) >= len(recs)/2 {
			t.Fatalf("%d pages for %d records: the positions share too few pages to test them", len(pages), len(recs))
		}
		if err := ix.Verify(ctx); err != nil {
			t.Fatalf("batched %v: Verify: %v", batched, err)
		}
	}
}

// TestPageMoves: a transaction that moves to another page of its
// block, then to another block, leaves its old page (emptied: its key
// deleted) and joins the new one, beside the records already there.
func TestPageMoves(t *testing.T) {
	ctx := context.Background()
	recs := pagedRecords(t)
	ix := openPaged(t)
	for _, r := range recs {
		if err := ix.PutRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	mover := recs[len(recs)-1]
	if !mover.Loc.Known() {
		for _, r := range recs {
			if r.Loc.Block == 501 {
				mover = r
			}
		}
	}
	// mover is in block 501's page (with four others), or in block
	// 500's: either way, move it twice.
	from := mover.Loc
	for _, to := range []Loc{{Block: from.Block, Index: from.Index + 200}, {Block: 777, Index: 5}} {
		before := pageKeys(t, ix)
		moved := *mover
		moved.Loc = to
		if err := ix.PutRecord(&moved); err != nil {
			t.Fatal(err)
		}
		if _, err := ix.GetAt(from); !errors.Is(err, ErrNotFound) {
			t.Fatalf("after the move from %s to %s: the old position: %v", from, to, err)
		}
		got, err := ix.GetAt(to)
		if err != nil || got.Hash != mover.Hash {
			t.Fatalf("after the move to %s: %v", to, err)
		}
		if g, err := ix.Get(mover.Hash); err != nil || g.Loc != to {
			t.Fatalf("Get after the move to %s: %v %v", to, g, err)
		}
		after := pageKeys(t, ix)
		oldKey := string(layout.PageKey(from).Bytes())
		if before[oldKey] > 1 && after[oldKey] != before[oldKey]-1 {
			t.Fatalf("the old page holds %d records, had %d", after[oldKey], before[oldKey])
		}
		if before[oldKey] == 1 {
			if _, ok := after[oldKey]; ok {
				t.Fatalf("the old page, emptied, is still there")
			}
		}
		if after[string(layout.PageKey(to).Bytes())] != before[string(layout.PageKey(to).Bytes())]+1 {
			t.Fatalf("the new page holds %d records, had %d", after[string(layout.PageKey(to).Bytes())], before[string(layout.PageKey(to).Bytes())])
		}
		if n, err := ix.Count(ctx); err != nil || n != len(recs) {
			t.Fatalf("Count after a move: %d %v", n, err)
		}
		if err := ix.Verify(ctx); err != nil {
			t.Fatalf("Verify after the move to %s: %v", to, err)
		}
		mover, from = &moved, to
	}
}

// TestPageDeleteLast: deleting a page's records one by one rewrites the
// page without each, and deleting its last deletes its key.
func TestPageDeleteLast(t *testing.T) {
	ctx := context.Background()
	recs := pagedRecords(t)
	ix := openPaged(t)
	var page []*Record // block 501's page S..2S-1
	for _, r := range recs {
		if err := ix.PutRecord(r); err != nil {
			t.Fatal(err)
		}
		if r.Loc.Block == 501 {
			page = append(page, r)
		}
	}
	key := string(layout.PageKey(page[0].Loc).Bytes())
	for i, r := range page {
		if err := ix.Delete(r.Hash); err != nil {
			t.Fatal(err)
		}
		n, ok := pageKeys(t, ix)[key]
		if left := len(page) - 1 - i; left > 0 && n != left || left == 0 && ok {
			t.Fatalf("after %d deletes: the page key %v with %d records", i+1, ok, n)
		}
		if _, err := ix.GetAt(r.Loc); !errors.Is(err, ErrNotFound) {
			t.Fatalf("deleted %s: GetAt: %v", r.Loc, err)
		}
	}
	if n, err := ix.Count(ctx); err != nil || n != len(recs)-len(page) {
		t.Fatalf("Count: %d %v", n, err)
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestBatchReadsEarlierPage: on a fresh index (the batches skip the
// reads that can only miss, absent.go) a batch writing into a page an
// earlier batch wrote reads it and keeps its records.
func TestBatchReadsEarlierPage(t *testing.T) {
	ctx := context.Background()
	recs := pagedRecords(t)
	ix := openPaged(t)
	b, err := ix.Batches(ctx, normalform.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if b.abs == nil {
		t.Fatal("a fresh index's batches read everything")
	}
	fin := &Finish{Name: "two"}
	var in500 []*Record
	for _, r := range recs {
		if r.Loc.Block == 500 && r.Loc.Index < layout.PageSpan {
			in500 = append(in500, r)
		}
	}
	half := len(in500) / 2
	for _, part := range [][]*Record{in500[:half], in500[half:]} {
		var ops []Op
		for _, r := range part {
			ops = append(ops, Op{Entry: NewEntry(r), Owner: fin})
		}
		if err := b.Write(ops); err != nil {
			t.Fatal(err)
		}
	}
	if n := pageKeys(t, ix)[string(layout.PageKey(in500[0].Loc).Bytes())]; n != len(in500) {
		t.Fatalf("the page holds %d records after two batches, want %d", n, len(in500))
	}
	for _, r := range in500 {
		if got, err := ix.GetAt(r.Loc); err != nil || got.Hash != r.Hash {
			t.Fatalf("GetAt(%s): %v", r.Loc, err)
		}
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestPutAtomicPage: a failure injected at the page's write (the hook
// sees it, as every write) fails the Put and leaves the page, and every
// other key, as it was: a new record in a page of others, a replacement
// and a move.
func TestPutAtomicPage(t *testing.T) {
	recs := pagedRecords(t)
	ix := openPaged(t)
	var first *Record // block 500 index 6: a new record in a page of others
	for _, r := range recs {
		if r.Loc == (Loc{Block: 500, Index: 6}) {
			first = r
			continue
		}
		if err := ix.PutRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	boom := errors.New("injected failure")
	pageWrites := 0
	fail := func(op string, k []byte) error {
		if len(k) > 0 && k[0] == byte(KindTx) {
			pageWrites++
			return boom
		}
		return nil
	}
	if first == nil {
		t.Fatal("no record at block 500 index 6")
	}
	replaced := *recs[len(recs)/2]
	replaced.Hashes.Shape = h(77)
	moved := *recs[len(recs)/3]
	moved.Loc = Loc{Block: moved.Loc.Block, Index: moved.Loc.Index + 1000}
	for _, r := range []*Record{first, &replaced, &moved} {
		before := Dump(t, ix)
		ix.hook = fail
		pageWrites = 0
		err := ix.PutRecord(r)
		ix.hook = nil
		if !errors.Is(err, boom) || pageWrites == 0 {
			t.Fatalf("put %s with its page write failing: %v (%d page writes seen)", r.Loc, err, pageWrites)
		}
		if after := Dump(t, ix); !maps.Equal(before, after) {
			t.Fatalf("a failed page write at %s changed the index", r.Loc)
		}
	}
}

// TestPageDamaged: a page whose value does not parse (cut short, another
// version, an entry out of order, a length past its end) is an error
// naming its block and positions, from point reads, scans, counts and
// Verify, never a panic; the records of other pages still read.
func TestPageDamaged(t *testing.T) {
	ctx := context.Background()
	recs := pagedRecords(t)
	var at *Record // a record of block 500's first page
	for _, r := range recs {
		if r.Loc.Block == 500 && r.Loc.Index == 3 {
			at = r
		}
	}
	if at == nil {
		t.Fatal("no record at block 500 index 3")
	}
	other := Loc{Block: 502, Index: layout.PageSpan}
	damages := map[string]func(v []byte) []byte{
		"cut short":    func(v []byte) []byte { return v[:len(v)/2] },
		"version":      func(v []byte) []byte { v = append([]byte(nil), v...); v[0] = 9; return v },
		"empty":        func([]byte) []byte { return []byte{} },
		"no record":    func([]byte) []byte { return []byte{layout.PageVersion} },
		"out of order": func(v []byte) []byte { v = append([]byte(nil), v...); return append(v, 0, 1, 7) },
		"past its end": func(v []byte) []byte { v = append([]byte(nil), v...); v[2], v[3], v[4] = 0xff, 0xff, 0x7f; return v }, // the first entry's length
		"offset past":  func(v []byte) []byte { v = append([]byte(nil), v...); return append(v, layout.PageSpan, 1, 1) },
	}
	for name, damage := range damages {
		t.Run(name, func(t *testing.T) {
			ix := openPaged(t)
			for _, r := range recs {
				if err := ix.PutRecord(r); err != nil {
					t.Fatal(err)
				}
			}
			k := layout.PageKey(at.Loc).Bytes()
			if err := ix.db.Update(func(txn *badger.Txn) error {
				item, err := txn.Get(k)
				if err != nil {
					return err
				}
				v, err := item.ValueCopy(nil)
				if err != nil {
					return err
				}
				return txn.Set(k, damage(v))
			}); err != nil {
				t.Fatal(err)
			}
			named := func(what string, err error) {
				t.Helper()
				if err == nil || !strings.Contains(err.Error(), "block 500") || !strings.Contains(err.Error(), "record page") {
					t.Fatalf("%s over a page damaged (%s): %v", what, name, err)
				}
			}
			// A point read of a record after the damage, or every record
			// when the page's front is damaged.
			_, err := ix.GetAt(Loc{Block: 500, Index: 3 * ((layout.PageSpan - 1) / 3)}) // the page's last
			if name != "cut short" && name != "out of order" && name != "past its end" && name != "offset past" {
				named("GetAt", err)
			} else if err != nil && !errors.Is(err, ErrNotFound) {
				named("GetAt", err)
			}
			named("Records", ix.Records(ctx, AllBlocks, func(*Record) error { return nil }))
			_, err = ix.Count(ctx)
			named("Count", err)
			_, err = ix.Stats(ctx)
			named("Stats", err)
			named("Verify", ix.Verify(ctx))
			if got, err := ix.GetAt(other); err != nil || got.Loc != other {
				t.Fatalf("a record of another page: %v", err)
			}
			if !errors.Is(ix.Records(ctx, AllBlocks, func(*Record) error { return nil }), ErrBadRecord) {
				t.Fatalf("a damaged page is not a bad record")
			}
		})
	}
}

// FuzzWalkPage: a page's value from a disk can be anything; its walk
// never panics, gives records in increasing positions within the page,
// and what it gives re-encodes to the bytes walked.
//
//	go test ./index -run '^$' -fuzz FuzzWalkPage -fuzztime 30s
func FuzzWalkPage(f *testing.F) {
	var recs [layout.PageSpan][]byte
	recs[0], recs[layout.PageSpan/2], recs[layout.PageSpan-1] = []byte{1, 2, 3}, bytes.Repeat([]byte{7}, 200), []byte{9}
	v, _ := layout.AppendPage(nil, &recs)
	f.Add(v)
	f.Add(v[:len(v)-1])
	f.Add([]byte{layout.PageVersion})
	f.Fuzz(func(t *testing.T, v []byte) {
		page := Loc{Block: 7, Index: 128}
		var got [layout.PageSpan][]byte
		last := -1
		err := layout.WalkPage(page, v, func(l Loc, rec []byte) error {
			i := int(l.Index) - int(page.Index)
			if l.Block != 7 || i <= last || i >= layout.PageSpan || len(rec) == 0 {
				t.Fatalf("walk gave %s (%d bytes) after offset %d", l, len(rec), last)
			}
			last = i
			got[i] = rec
			return nil
		})
		if err != nil {
			if !strings.Contains(err.Error(), "record page of block 7") || !errors.Is(err, ErrBadRecord) {
				t.Fatalf("error not naming the page: %v", err)
			}
			return
		}
		again, ok := layout.AppendPage(nil, &got)
		if !ok || !bytes.Equal(again, v) {
			t.Fatalf("a page that parses re-encodes to other bytes")
		}
	})
}

// TestBatchTooBigSplits: a batch too big for one Badger transaction
// (its keys and the pages written at its end) is split and written
// whole: every record at its position, each page holding its records.
func TestBatchTooBigSplits(t *testing.T) {
	ctx := context.Background()
	base := pagedRecords(t)
	ix := openPaged(t)
	b, err := ix.Batches(ctx, normalform.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	fin := &Finish{Name: "big"}
	var ops []Op
	var locs []Loc
	const n = 12000 // past Badger's 4.8 MB and its count of keys a transaction
	for i := range n {
		r := *base[i%len(base)]
		r.Hash = normalform.Hash{byte(i), byte(i >> 8), 0xb1}
		r.Loc = Loc{Block: 9000 + uint64(i/100), Index: uint32(i % 100)}
		locs = append(locs, r.Loc)
		ops = append(ops, Op{Entry: NewEntry(&r), Owner: fin})
	}
	// A split writes the first transaction's keys again in its first
	// half after the whole batch failed: its txhash key is set twice or
	// more (its NF key, in an NF page written at the commit, is not
	// written by a batch that failed before).
	first, sets := string(TxHashKey(ops[0].Entry.Rec.Hash).Bytes()), 0
	SetHook(ix, func(op string, k []byte) error {
		if op == "set" && string(k) == first {
			sets++
		}
		return nil
	})
	if err := b.Write(ops); err != nil {
		t.Fatal(err)
	}
	SetHook(ix, nil)
	if sets < 2 {
		t.Fatalf("the first transaction's txhash key set %d times: the batch was not split", sets)
	}
	if len(fin.Failures) != 0 {
		t.Fatalf("%d transactions dropped: %v", len(fin.Failures), fin.Failures[0].Msg)
	}
	if got, err := ix.Count(ctx); err != nil || got != n {
		t.Fatalf("Count: %d, %v; want %d", got, err, n)
	}
	for i, l := range locs {
		if i%97 != 0 {
			continue
		}
		if rec, err := ix.GetAt(l); err != nil || rec.Hash != (normalform.Hash{byte(i), byte(i >> 8), 0xb1}) {
			t.Fatalf("GetAt(%s): %v", l, err)
		}
	}
	st, err := ix.Stats(ctx)
	if err != nil || st[KindTx].Pages != n/100*((100+layout.PageSpan-1)/layout.PageSpan) {
		t.Fatalf("Stats: %+v %v", st[KindTx], err)
	}
}

// TestBatchFlushTooBig: a batch whose pages, written at its end, find
// the Badger transaction too big (the hook stands for Badger here) is
// split in halves and written whole, as when a record's keys do.
func TestBatchFlushTooBig(t *testing.T) {
	ctx := context.Background()
	recs := pagedRecords(t)
	ix := openPaged(t)
	b, err := ix.Batches(ctx, normalform.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	fired := 0
	ix.hook = func(op string, k []byte) error {
		if op == "set" && layout.IsPageKey(k) && fired == 0 {
			fired++
			return badger.ErrTxnTooBig
		}
		return nil
	}
	fin := &Finish{Name: "flush"}
	var ops []Op
	for _, r := range recs {
		ops = append(ops, Op{Entry: NewEntry(r), Owner: fin})
	}
	err = b.Write(ops)
	ix.hook = nil
	if err != nil || fired != 1 || len(fin.Failures) != 0 {
		t.Fatalf("Write: %v (the page write refused %d times, %d failures)", err, fired, len(fin.Failures))
	}
	if n, err := ix.Count(ctx); err != nil || n != len(recs) {
		t.Fatalf("Count: %d %v; want %d", n, err, len(recs))
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}
