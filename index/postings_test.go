package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// postingBase is one record of every distinct transaction of the corpus
// and the scenarios (their positions to be set).
func postingBase(t testing.TB) []*Record {
	t.Helper()
	var out []*Record
	seen := map[normalform.Hash]bool{}
	for _, a := range append(analyseCorpus(t), analyseDir(t, gethScenarios)...) {
		rec, err := NewRecord(a, time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if !seen[rec.Hash] {
			seen[rec.Hash] = true
			out = append(out, rec)
		}
	}
	return out
}

// spread makes n transactions of the base records, perBlock a block
// from block first on, at indexes j*j*7 (gaps past one varint byte);
// every 97th has no index.
func spread(base []*Record, n, perBlock int, first uint64) []*Record {
	out := make([]*Record, n)
	for i := range n {
		r := *base[i%len(base)]
		r.Hash = normalform.Hash{byte(i), byte(i >> 8), 0xc3}
		j := uint32(i % perBlock)
		r.Loc = Loc{Block: first + uint64(i/perBlock), Index: j * j * 7}
		if i%97 == 96 {
			r.Loc = Loc{Block: r.Loc.Block, Index: UnknownIndex, Tx: r.Hash}
		}
		out[i] = &r
	}
	return out
}

// writeBatches writes recs through Batches, size transactions a Badger
// write.
func writeBatches(t testing.TB, ix *Index, recs []*Record, size int) *Batches {
	t.Helper()
	b, err := ix.Batches(context.Background(), normalform.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for at := 0; at < len(recs); at += size {
		part := recs[at:min(at+size, len(recs))]
		fin := &Finish{Name: fmt.Sprintf("test:posting:%d", at), Txs: len(part)}
		ops := make([]Op, 0, len(part)+1)
		for _, r := range part {
			ops = append(ops, Op{Entry: NewEntry(r), Owner: fin})
		}
		if err := b.Write(append(ops, Op{Fin: fin})); err != nil {
			t.Fatal(err)
		}
		if len(fin.Failures) != 0 {
			t.Fatalf("%d transactions dropped: %s", len(fin.Failures), fin.Failures[0].Msg)
		}
	}
	return b
}

// secondaryKeys returns the per-transaction keys of the posting kinds
// the index's records have (Record.Keys: the reference) and those its
// keys stand for (postings expanded, position by position, and the keys
// of positions without index).
func secondaryKeys(t testing.TB, ix *Index) (want, got map[string]bool) {
	t.Helper()
	want, got = map[string]bool{}, map[string]bool{}
	ctx := context.Background()
	if err := ix.db.View(func(txn *badger.Txn) error {
		names := ix.namesIn(txn)
		if err := recordsTxn(ctx, txn, AllBlocks, func(l Loc, v []byte) error {
			rec, id, err := decodeRecordIDs(l, v, names, depthFull)
			if err != nil {
				return err
			}
			for _, x := range keysOf(rec, nil, v, id) {
				if layout.PostingKind(Kind(x.K[0])) {
					want[string(x.K)] = true
				}
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range Kinds {
			if !layout.PostingKind(k) {
				continue
			}
			c := newPostIter(txn, kindPrefix(k))
			for c.Seek(kindPrefix(k)); c.Valid(); c.Next() {
				got[string(c.Key())] = true
			}
			c.Close()
			if err := c.Err(); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return want, got
}

func sameKeys(t testing.TB, ix *Index, what string) {
	t.Helper()
	want, got := secondaryKeys(t, ix)
	if len(want) == 0 {
		t.Fatalf("%s: no secondary keys", what)
	}
	for k := range want {
		if !got[k] {
			t.Fatalf("%s: the records' key %x is in no posting (%d keys, %d found)", what, k, len(want), len(got))
		}
	}
	for k := range got {
		if !want[k] {
			t.Fatalf("%s: a posting lists %x, no record's key (%d keys, %d found)", what, k, len(want), len(got))
		}
	}
}

// TestPostingLookupsSameAsRecordKeys: on an index of many blocks, written
// in Badger transactions that cut blocks, the postings stand for exactly
// the records' keys (Record.Keys), and every lookup by hash (each
// level), bot, verdict, profit, address and token, over every block and
// over a range, and the count by family, gives what the records say.
func TestPostingLookupsSameAsRecordKeys(t *testing.T) {
	ctx := context.Background()
	recs := spread(postingBase(t), 1500, 37, 7000)
	ix := openPaged(t)
	writeBatches(t, ix, recs, 200)
	verify(t, ix)
	sameKeys(t, ix, "after the ingest")
	st, err := ix.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st[KindVerdict].Keys >= st[KindVerdict].Positions || st[KindVerdict].Positions != len(recs) {
		t.Fatalf("verdict keys: %+v, want fewer Badger keys than positions and %d positions", st[KindVerdict], len(recs))
	}

	var all []*Record
	if err := ix.Scan(ctx, func(r *Record) error { all = append(all, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(all) != len(recs) {
		t.Fatalf("%d records, want %d", len(all), len(recs))
	}
	ranges := []BlockRange{AllBlocks, {From: 7004, To: 7011}}
	// check compares a lookup's positions with the records that match,
	// in position order (ordered) or as sets.
	check := func(what string, blocks BlockRange, ordered bool, match func(*Record) bool, lookup func(fn func(Ref) error) error) {
		t.Helper()
		var want, got []Loc
		for _, r := range all {
			if blocks.Has(r.Loc.Block) && match(r) {
				want = append(want, r.Loc)
			}
		}
		if err := lookup(func(r Ref) error { got = append(got, r.Loc); return nil }); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !ordered {
			slices.SortFunc(got, func(a, b Loc) int { return bytes.Compare(a.Bytes(), b.Bytes()) })
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s over %+v: %d positions, want %d\n got %v\nwant %v", what, blocks, len(got), len(want), got, want)
		}
	}
	n := 0
	for i, r := range all {
		if i%41 != 0 {
			continue
		}
		for _, blocks := range ranges {
			for l := normalform.Exact; l <= normalform.Family; l++ {
				h := r.Hashes.Of(l)
				check(fmt.Sprintf("by %s hash", l), blocks, true, func(o *Record) bool { return o.Hashes.Of(l) == h },
					func(fn func(Ref) error) error { return ix.ByHash(ctx, l, h, blocks, fn) })
			}
			check("by bot", blocks, false, func(o *Record) bool { return o.Recipient == r.Recipient },
				func(fn func(Ref) error) error {
					return ix.ByBot(ctx, r.Recipient, blocks, func(_ normalform.Hash, x Ref) error { return fn(x) })
				})
			check("by verdict", blocks, false, func(o *Record) bool { return o.Verdict == r.Verdict },
				func(fn func(Ref) error) error {
					return ix.ByVerdict(ctx, r.Verdict, blocks, func(_ normalform.Tier, x Ref) error { return fn(x) })
				})
			for _, a := range r.Addresses {
				check("by address", blocks, true, func(o *Record) bool { return slices.Contains(o.Addresses, a) },
					func(fn func(Ref) error) error { return ix.ByAddress(ctx, a, blocks, fn) })
			}
			for _, tok := range r.Tokens {
				check("by token", blocks, true, func(o *Record) bool { return slices.Contains(o.Tokens, tok) },
					func(fn func(Ref) error) error { return ix.ByToken(ctx, tok, blocks, fn) })
			}
		}
		for _, a := range r.Gross {
			tok := a.Token
			check("by gross profit", AllBlocks, false, func(o *Record) bool {
				return slices.ContainsFunc(o.Gross, func(x layout.Amount) bool { return x.Token == tok })
			}, func(fn func(Ref) error) error {
				return ix.ByProfit(ctx, Gross, tok, nil, nil, func(_ normalform.Signed, x Ref) error { return fn(x) })
			})
		}
		n++
	}
	if n < 30 {
		t.Fatalf("%d records looked up", n)
	}
	for _, blocks := range ranges {
		want := map[normalform.Hash]int{}
		for _, r := range all {
			if blocks.Has(r.Loc.Block) {
				want[r.Hashes.Family]++
			}
		}
		got := map[normalform.Hash]int{}
		if err := ix.CountHashes(ctx, normalform.Family, blocks, func(h normalform.Hash, n int, _ Ref) error { got[h] = n; return nil }); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, want) {
			t.Fatalf("count by family over %+v: %v, want %v", blocks, got, want)
		}
	}
}

// TestPostingBlockAcrossTransactions: a block written by three Badger
// transactions of one ingest (a fresh index) keeps every position: the
// first reads no posting (its block was new), the second takes them
// from what the first committed, the third (that memory lost) reads
// them from Badger; each changes them and writes them again.
func TestPostingBlockAcrossTransactions(t *testing.T) {
	recs := spread(postingBase(t), 60, 60, 300)
	ix := openPaged(t)
	b := writeBatches(t, ix, recs[:25], 25)
	if b.abs == nil || b.abs.postSkips == 0 || len(b.abs.posts) == 0 {
		t.Fatalf("the first write of a new block read its postings, or kept none (%+v)", b.abs)
	}
	write := func(part []*Record, name string) {
		t.Helper()
		ops := make([]Op, 0, len(part)+1)
		fin := &Finish{Name: name, Txs: len(part)}
		for _, r := range part {
			ops = append(ops, Op{Entry: NewEntry(r), Owner: fin})
		}
		if err := b.Write(append(ops, Op{Fin: fin})); err != nil {
			t.Fatal(err)
		}
	}
	skips := b.abs.postSkips
	write(recs[25:45], "test:posting:second")
	if b.abs.postSkips == skips {
		t.Fatal("the second write read every posting from Badger")
	}
	sameKeys(t, ix, "a block in two writes")
	b.abs.posts = nil
	skips = b.abs.postSkips
	write(recs[45:], "test:posting:third")
	if b.abs.postSkips != skips {
		t.Fatalf("the third write of the block skipped %d posting reads", b.abs.postSkips-skips)
	}
	verify(t, ix)
	sameKeys(t, ix, "a block in three writes")
}

// TestPostingMove: a transaction put again at another index of its block
// and one put in another block leave their old postings and join new
// ones; a transaction whose index becomes unknown leaves its postings
// for keys of its own.
func TestPostingMove(t *testing.T) {
	recs := spread(postingBase(t), 12, 6, 800)
	ix := openPaged(t)
	for _, r := range recs {
		if err := ix.PutRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	sameKeys(t, ix, "before the moves")
	within, across, lone := *recs[2], *recs[3], *recs[4]
	within.Loc.Index = 1000 // same block, another index
	across.Loc = Loc{Block: 801, Index: 3}
	lone.Loc = Loc{Block: 800, Index: UnknownIndex, Tx: lone.Hash}
	for _, r := range []*Record{&within, &across, &lone} {
		if err := ix.PutRecord(r); err != nil {
			t.Fatal(err)
		}
		verify(t, ix)
		sameKeys(t, ix, "after moving "+r.Loc.String())
	}
}

// TestPostingDeleteLast: deleting a block's last transaction deletes its
// postings' keys; deleting one of two leaves the other's positions.
func TestPostingDeleteLast(t *testing.T) {
	recs := spread(postingBase(t), 3, 2, 900) // block 900: two; 901: one
	ix := openPaged(t)
	for _, r := range recs {
		if err := ix.PutRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	postingKeys := func(block uint64) int {
		n := 0
		for k := range Dump(t, ix) {
			if pk, err := ParseKey([]byte(k)); err == nil && pk.Posting && pk.Loc.Block == block {
				n++
			}
		}
		return n
	}
	if postingKeys(901) == 0 || postingKeys(900) == 0 {
		t.Fatal("no postings written")
	}
	if err := ix.Delete(recs[2].Hash); err != nil {
		t.Fatal(err)
	}
	if n := postingKeys(901); n != 0 {
		t.Fatalf("%d posting keys of block 901 left after its last transaction's delete", n)
	}
	if err := ix.Delete(recs[0].Hash); err != nil {
		t.Fatal(err)
	}
	verify(t, ix)
	sameKeys(t, ix, "after deleting one of two")
	if err := ix.Delete(recs[1].Hash); err != nil {
		t.Fatal(err)
	}
	if n := postingKeys(900); n != 0 {
		t.Fatalf("%d posting keys of block 900 left after its last transaction's delete", n)
	}
}

// TestPostingDamaged: a posting whose value does not parse (empty, cut
// short, not minimal, not increasing, past MaxIndex) is an error naming
// its kind, value and block, from lookups, counts, Stats, Verify and a
// write into its block; never a panic.
func TestPostingDamaged(t *testing.T) {
	ctx := context.Background()
	recs := spread(postingBase(t), 8, 8, 950)
	ix := openPaged(t)
	for _, r := range recs[:7] {
		if err := ix.PutRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	r0 := recs[0]
	var fam uint32
	if err := ix.db.View(func(txn *badger.Txn) (err error) {
		fam, _, err = ix.idIn(txn, normalform.Family, r0.Hashes.Family)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	verdictKey := VerdictKey(r0.Verdict, r0.Tier, r0.Loc)
	verdictKey.Posting, verdictKey.Loc = true, Loc{Block: 950}
	familyKey := HashKey(normalform.Family, Tag{}, fam, r0.Loc)
	familyKey.Posting, familyKey.Loc = true, Loc{Block: 950}
	next := *recs[7]
	next.Verdict, next.Tier, next.Hashes.Family = r0.Verdict, r0.Tier, r0.Hashes.Family
	for _, bad := range [][]byte{{}, {0x80}, {0x05, 0x00}, {0x85, 0x00}, {0x07, 0x00}, {0xff, 0xff, 0xff, 0x0f}, {0x80, 0x80, 0x80, 0x80, 0x01}} {
		for _, key := range []Key{verdictKey, familyKey} {
			k := key.Bytes()
			var old []byte
			if err := ix.db.Update(func(txn *badger.Txn) error {
				item, err := txn.Get(k)
				if err != nil {
					return err
				}
				if old, err = item.ValueCopy(nil); err != nil {
					return err
				}
				return txn.Set(k, bad)
			}); err != nil {
				t.Fatal(err)
			}
			named := func(what string, err error) {
				t.Helper()
				want := fmt.Sprintf("%s posting %x at block 950", key.Kind, k[1:len(k)-layout.BlockWidth])
				if !errors.Is(err, ErrBadPosting) || !strings.Contains(err.Error(), want) {
					t.Fatalf("%s with the %s posting %x: %v, want an error naming %q", what, key.Kind, bad, err, want)
				}
			}
			switch key.Kind {
			case KindVerdict:
				named("by verdict", ix.ByVerdict(ctx, r0.Verdict, AllBlocks, func(normalform.Tier, Ref) error { return nil }))
			case KindHash:
				named("count by family", ix.CountHashes(ctx, normalform.Family, AllBlocks, func(normalform.Hash, int, Ref) error { return nil }))
				named("by family", ix.ByHash(ctx, normalform.Family, r0.Hashes.Family, AllBlocks, func(Ref) error { return nil }))
			}
			_, err := ix.Stats(ctx)
			named("stats", err)
			named("a write into the block", ix.PutRecord(&next))
			if err := ix.Verify(ctx); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%s posting", key.Kind)) {
				t.Fatalf("verify with the %s posting %x: %v", key.Kind, bad, err)
			}
			if err := ix.db.Update(func(txn *badger.Txn) error { return txn.Set(k, old) }); err != nil {
				t.Fatal(err)
			}
		}
	}
	verify(t, ix)
}

// TestPutAtomicPosting: a write whose posting write fails (the index's
// hook at a posting key) changes nothing: a new transaction in a block
// of others, a replaced one, a moved one, a delete.
func TestPutAtomicPosting(t *testing.T) {
	recs := spread(postingBase(t), 10, 10, 1200)
	ix := openPaged(t)
	for _, r := range recs[1:] {
		if err := ix.PutRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	boom := errors.New("injected failure")
	writes := 0
	fail := func(op string, k []byte) error {
		if isPostingKey(k) {
			writes++
			return boom
		}
		return nil
	}
	replaced := *recs[5]
	replaced.Verdict = (replaced.Verdict + 1) % (normalform.VerdictArbitrage + 1)
	moved := *recs[6]
	moved.Loc = Loc{Block: 1201, Index: 4}
	steps := []struct {
		what string
		do   func() error
	}{
		{"a new transaction", func() error { return ix.PutRecord(recs[0]) }},
		{"a replaced one", func() error { return ix.PutRecord(&replaced) }},
		{"a moved one", func() error { return ix.PutRecord(&moved) }},
		{"a delete", func() error { return ix.Delete(recs[7].Hash) }},
	}
	for _, s := range steps {
		before := Dump(t, ix)
		ix.hook, writes = fail, 0
		err := s.do()
		ix.hook = nil
		if !errors.Is(err, boom) || writes == 0 {
			t.Fatalf("%s with its posting write failing: %v (%d posting writes seen)", s.what, err, writes)
		}
		if after := Dump(t, ix); !maps.Equal(before, after) {
			t.Fatalf("%s: a failed posting write changed the index", s.what)
		}
	}
	verify(t, ix)
}

// TestSpaceCountsPostings: the space a write asks for (PutRecord's
// writeSize, a batch's opsSize) counts, beyond the keys, record pages
// and NF it counted before postings, the postings its keys join,
// rewritten whole: at least their bytes.
func TestSpaceCountsPostings(t *testing.T) {
	recs := spread(postingBase(t), 401, 401, 1300)
	recs[400].Loc = Loc{Block: 1300, Index: 400 * 400 * 7} // a known index (spread leaves one out)
	ix := openPaged(t)
	ops := make([]Op, 0, len(recs)+1)
	fin := &Finish{Name: "test:space", Txs: len(recs) - 1}
	var before uint64 // what opsSize counted without postings
	for _, r := range recs[:400] {
		e := NewEntry(r)
		ops = append(ops, Op{Entry: e, Owner: fin})
		before += keysSize(r, e.enc)
	}
	writeBatches(t, ix, recs[:400], 400)
	postingBytes := func(r *Record) uint64 {
		var n uint64
		e := encodeRecord(r)
		if err := ix.db.View(func(txn *badger.Txn) error {
			w := &wtx{ix: ix, txn: txn}
			id, err := w.ids(r)
			if err != nil {
				return err
			}
			aid, err := w.addrIDs(e.Dict, nil)
			if err != nil {
				return err
			}
			seen := map[string]bool{}
			for _, x := range keysOf(r, nil, e.Join(id, aid), id) {
				pk, _, ok := layout.SplitPosting(x.K)
				if !ok || seen[string(pk)] {
					continue
				}
				seen[string(pk)] = true
				if item, err := txn.Get(pk); err == nil {
					n += uint64(len(pk)) + uint64(item.ValueSize())
				} else if !errors.Is(err, badger.ErrKeyNotFound) {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	var all uint64 // every posting's bytes after the batch
	st, err := ix.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for k, s := range st {
		if layout.PostingKind(k) {
			all += uint64(s.KeyBytes + s.ValueBytes)
		}
	}
	pages := map[Loc]bool{}
	var largest uint64
	for _, o := range ops {
		pages[layout.PageLoc(o.Entry.Rec.Loc)] = true
		largest = max(largest, recordSize(o.Entry.enc))
	}
	before += uint64(len(pages)) * layout.PageSpan * largest
	if got := opsSize(ops); got < before+all {
		t.Fatalf("a batch of one block: opsSize %d, under the %d counted before postings and its postings' %d bytes", got, before, all)
	}
	r := recs[400]
	e := encodeRecord(r)
	if err := ix.PutRecord(r); err != nil {
		t.Fatal(err)
	}
	old := keysSize(r, e) + uint64(layout.PageSpan-1)*recordSize(e)
	if got, p := writeSize(r, e), postingBytes(r); got < old+p {
		t.Fatalf("a transaction joining its block's postings: writeSize %d, under the %d counted before postings and their %d bytes", got, old, p)
	}
}

// TestPostArena: the write transaction's postings come from shared
// chunks (postArena), each with room for its first index only: postings
// given in turn and then grown in an interleaved order each keep their
// own indexes (a posting whose room reached into the next one's would
// overwrite it), their keys survive the caller's buffer being reused,
// and a new posting allocates nothing of its own.
func TestPostArena(t *testing.T) {
	var a postArena
	const n = 3000 // past a chunk of postings (256) and of indexes (1024)
	ps := make([]*wpost, n)
	keys := make([]string, n)
	buf := make([]byte, 0, 16)
	for i := range ps {
		buf = fmt.Appendf(buf[:0], "key-%05d", i)
		keys[i] = a.key(buf)
		ps[i] = a.post()
	}
	buf = append(buf[:0], "overwritten"...)
	want := make([][]uint32, n)
	for round := range 3 {
		for i := range ps {
			j := (i*7 + round) % n // interleaved
			x := uint32(round*10 + j%10)
			k, _ := slices.BinarySearch(ps[j].idx, x)
			ps[j].idx = slices.Insert(ps[j].idx, k, x)
			want[j] = append(want[j], x)
		}
	}
	for i, p := range ps {
		if !slices.Equal(p.idx, want[i]) {
			t.Fatalf("posting %d holds %v, want %v", i, p.idx, want[i])
		}
		if k := fmt.Sprintf("key-%05d", i); keys[i] != k {
			t.Fatalf("key %d is %q, want %q", i, keys[i], k)
		}
	}
	key := []byte("a posting key of some length")
	if allocs := testing.AllocsPerRun(1000, func() { arenaKey, arenaPost = a.key(key), a.post() }); allocs > 0.05 {
		t.Errorf("a new posting allocates %.2f times; want chunks only", allocs)
	}
}

// arenaKey and arenaPost keep what TestPostArena's allocation count
// gets, as the write transaction's map does.
var (
	arenaKey  string
	arenaPost *wpost
)
