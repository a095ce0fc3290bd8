package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"maps"
	"strings"
	"testing"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// rawNF reads the NF value at l through its page (nil, false: none).
func rawNF(t *testing.T, ix *Index, l Loc) ([]byte, bool) {
	t.Helper()
	var v []byte
	err := ix.db.View(func(txn *badger.Txn) error {
		return newNFReader(txn).nf(l, func(b []byte) error { v = append([]byte(nil), b...); return nil })
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, false
	} else if err != nil {
		t.Fatal(err)
	}
	return v, true
}

// putNFRaw writes (v non-nil) or deletes the NF value at l in its page
// and nothing else: damage, for the tests of the readers.
func putNFRaw(t *testing.T, ix *Index, l Loc, v []byte) {
	t.Helper()
	err := ix.db.Update(func(txn *badger.Txn) error {
		w := ix.newWtx(txn)
		if _, err := w.nfKey(NFKey(l).Bytes(), v, v == nil); err != nil {
			return err
		}
		return w.flush()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// NF pages (schema 12, nfpages.go, layout/nfpage.go).

// nfPageKeys lists the nf keys of the index (pages and lone NFs) with
// the number of NFs under each.
func nfPageKeys(t testing.TB, ix *Index) map[string]int {
	t.Helper()
	out := map[string]int{}
	if err := ix.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: kindPrefix(KindNF)})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			k := it.Item().KeyCopy(nil)
			err := it.Item().Value(func(v []byte) error {
				return walkNFKey(k, v, func(Loc, []byte) error { out[string(k)]++; return nil })
			})
			if err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// fullNFPage is n records at block's positions 0..n-1 (copies of the
// corpus's, each with a hash of its own), and the records they copy.
func fullNFPage(t testing.TB, block uint64, n int) []*Record {
	t.Helper()
	base := pagedRecords(t)
	var out []*Record
	for i := range n {
		r := *base[i%len(base)]
		r.Hash = normalform.Hash{byte(i), byte(block), byte(block >> 8), 0xf0}
		r.Loc = Loc{Block: block, Index: uint32(i)}
		out = append(out, &r)
	}
	return out
}

// checkNFs checks that every record of want reads back whole with its
// NF as written: by position and by hash (show), in a scan (export),
// through its page (the NF value itself).
func checkNFs(t *testing.T, ix *Index, want []*Record) {
	t.Helper()
	ref := map[Loc]*Record{}
	for _, r := range want {
		ref[r.Loc] = r
		got, err := ix.GetAt(r.Loc)
		if err != nil || got.Hash != r.Hash || !bytes.Equal(got.NF, r.NF) {
			t.Fatalf("GetAt(%s): NF as written %v, %v", r.Loc, err == nil && bytes.Equal(got.NF, r.NF), err)
		}
		byHash, err := ix.Get(r.Hash)
		if err != nil || byHash.Loc != r.Loc || !bytes.Equal(byHash.NF, r.NF) {
			t.Fatalf("Get(%s): %v", r.Hash.Hex(), err)
		}
		if v, ok := rawNF(t, ix, r.Loc); !ok || !bytes.Equal(v, r.NFValue()) {
			t.Fatalf("the NF value at %s: found %v, as written %v", r.Loc, ok, bytes.Equal(v, r.NFValue()))
		}
	}
	n := 0
	if err := ix.Records(context.Background(), AllBlocks, func(r *Record) error {
		if w := ref[r.Loc]; w != nil {
			n++
			if w.Hash != r.Hash || !bytes.Equal(w.NF, r.NF) {
				t.Fatalf("Records: %s, its NF not as written", r.Loc)
			}
		}
		return nil
	}); err != nil || n != len(want) {
		t.Fatalf("Records: %d of %d records, %v", n, len(want), err)
	}
	if err := ix.Verify(context.Background()); err != nil {
		t.Fatalf("Verify: %v", err)
	}
}

// TestNFPagesReadBack: the NFs of records spread over pages (a third of
// each, a page not at index 0, a page's last and the next's first, lone
// records), put one by one and in batches that end inside pages, read
// back as written from every reader that shows them; Stats counts the
// NFs and the pages holding them.
func TestNFPagesReadBack(t *testing.T) {
	ctx := context.Background()
	recs := pagedRecords(t)
	for _, batched := range []bool{false, true} {
		ix := openPaged(t)
		if batched {
			b, err := ix.Batches(ctx, normalform.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			fin := &Finish{Name: "nfpaged"}
			var ops []Op
			for i, r := range recs {
				ops = append(ops, Op{Entry: NewEntry(r), Owner: fin})
				if len(ops) == 17 || i == len(recs)-1 {
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
		checkNFs(t, ix, recs)
		pages := map[Loc]bool{}
		for _, r := range recs {
			pages[layout.NFPageLoc(r.Loc)] = true
		}
		if len(pages) >= len(recs)/4 {
			t.Fatalf("%d NF pages for %d records: too few share a page to test them", len(pages), len(recs))
		}
		st, err := ix.Stats(ctx)
		if err != nil || st[KindNF].Keys != len(recs) || st[KindNF].Pages != len(pages) {
			t.Fatalf("batched %v: Stats: nf %+v, %v; want %d NFs in %d keys", batched, st[KindNF], err, len(recs), len(pages))
		}
		if got := nfPageKeys(t, ix); len(got) != len(pages) {
			t.Fatalf("%d nf keys, want %d", len(got), len(pages))
		}
	}
}

// TestNFPageReput: a transaction of a full page put again with another
// NF changes its NF alone; the page's other NFs read as before.
func TestNFPageReput(t *testing.T) {
	ix := openPaged(t)
	recs := fullNFPage(t, 600, layout.NFPageSpan)
	for _, r := range recs {
		if err := ix.PutRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	checkNFs(t, ix, recs)
	var other *Record // a record whose NF is another
	for _, r := range pagedRecords(t) {
		if !bytes.Equal(r.NF, recs[5].NF) && r.Loc.Known() {
			other = r
			break
		}
	}
	again := *other
	again.Hash, again.Loc = recs[5].Hash, recs[5].Loc
	if err := ix.PutRecord(&again); err != nil {
		t.Fatal(err)
	}
	recs[5] = &again
	checkNFs(t, ix, recs)
	key := string(layout.NFPageKey(recs[0].Loc).Bytes())
	if got := nfPageKeys(t, ix); len(got) != 1 || got[key] != layout.NFPageSpan {
		t.Fatalf("nf keys after the re-put: %v, want one page of %d", got, layout.NFPageSpan)
	}
}

// TestNFPageMoves: a transaction that moves to another page of its
// block, then to another block, leaves its old page and joins the new
// one beside the NFs there; a page emptied by a move is deleted.
func TestNFPageMoves(t *testing.T) {
	ix := openPaged(t)
	recs := fullNFPage(t, 610, layout.NFPageSpan+3) // a full page and 3 in the next
	for _, r := range recs {
		if err := ix.PutRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	mover := *recs[7]
	rest := append(append([]*Record{}, recs[:7]...), recs[8:]...)
	for _, to := range []Loc{{Block: 610, Index: 2*layout.NFPageSpan + 1}, {Block: 611, Index: 0}} {
		before := nfPageKeys(t, ix)
		from := mover.Loc
		mover.Loc = to
		if err := ix.PutRecord(&mover); err != nil {
			t.Fatal(err)
		}
		after := nfPageKeys(t, ix)
		oldKey, newKey := string(layout.NFPageKey(from).Bytes()), string(layout.NFPageKey(to).Bytes())
		if before[oldKey] > 1 && after[oldKey] != before[oldKey]-1 || before[oldKey] == 1 && after[oldKey] != 0 {
			t.Fatalf("move %s -> %s: the old page holds %d NFs, had %d", from, to, after[oldKey], before[oldKey])
		}
		if _, ok := after[oldKey]; before[oldKey] == 1 && ok {
			t.Fatalf("move %s -> %s: the old page, emptied, is still there", from, to)
		}
		if after[newKey] != before[newKey]+1 {
			t.Fatalf("move %s -> %s: the new page holds %d NFs, had %d", from, to, after[newKey], before[newKey])
		}
		if _, ok := rawNF(t, ix, from); ok {
			t.Fatalf("an NF is left at %s", from)
		}
		checkNFs(t, ix, append(append([]*Record{}, rest...), &mover))
	}
}

// TestNFPageDeleteLast: deleting a page's transactions one by one
// rewrites the page without each, and deleting its last deletes its key.
func TestNFPageDeleteLast(t *testing.T) {
	ix := openPaged(t)
	recs := fullNFPage(t, 620, layout.NFPageSpan+3)
	for _, r := range recs {
		if err := ix.PutRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	page := recs[layout.NFPageSpan:] // the second page's three
	key := string(layout.NFPageKey(page[0].Loc).Bytes())
	for i, r := range page {
		if err := ix.Delete(r.Hash); err != nil {
			t.Fatal(err)
		}
		n, ok := nfPageKeys(t, ix)[key]
		if left := len(page) - 1 - i; left > 0 && n != left || left == 0 && ok {
			t.Fatalf("after %d deletes: the nf page key %v with %d NFs", i+1, ok, n)
		}
	}
	if _, ok := rawGet(t, ix, []byte(key)); ok {
		t.Fatal("the emptied NF page's key is still there")
	}
	checkNFs(t, ix, recs[:layout.NFPageSpan])
}

// TestNFBatchReadsEarlierPage: on a fresh index (the batches skip the
// reads that can only miss, absent.go) a batch writing into an NF page
// an earlier batch wrote reads it and keeps its NFs.
func TestNFBatchReadsEarlierPage(t *testing.T) {
	ctx := context.Background()
	ix := openPaged(t)
	b, err := ix.Batches(ctx, normalform.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if b.abs == nil {
		t.Fatal("a fresh index's batches read everything")
	}
	recs := fullNFPage(t, 630, 40)
	fin := &Finish{Name: "two"}
	for _, part := range [][]*Record{recs[:15], recs[15:]} { // the second batch starts inside both a record page and the NF page
		var ops []Op
		for _, r := range part {
			ops = append(ops, Op{Entry: NewEntry(r), Owner: fin})
		}
		if err := b.Write(ops); err != nil {
			t.Fatal(err)
		}
	}
	if n := nfPageKeys(t, ix)[string(layout.NFPageKey(recs[0].Loc).Bytes())]; n != len(recs) {
		t.Fatalf("the NF page holds %d NFs after two batches, want %d", n, len(recs))
	}
	checkNFs(t, ix, recs)
}

// TestPutAtomicNFPage: a failure injected at the NF page's write (the
// hook sees it, as every write) fails the write and leaves the index as
// it was: a new transaction in a page of others, a replacement with
// another NF, a move, a delete, a batch.
func TestPutAtomicNFPage(t *testing.T) {
	ix := openPaged(t)
	recs := fullNFPage(t, 640, 20)
	for _, r := range recs[1:] {
		if err := ix.PutRecord(r); err != nil {
			t.Fatal(err)
		}
	}
	boom := errors.New("injected failure")
	nfWrites := 0
	fail := func(op string, k []byte) error {
		if len(k) > 0 && k[0] == byte(KindNF) {
			nfWrites++
			return boom
		}
		return nil
	}
	other := pagedRecords(t)[0]
	replaced := *other
	replaced.Hash, replaced.Loc = recs[3].Hash, recs[3].Loc
	moved := *recs[4]
	moved.Loc.Index += 3 * layout.NFPageSpan
	ops := []func() error{
		func() error { return ix.PutRecord(recs[0]) },
		func() error { return ix.PutRecord(&replaced) },
		func() error { return ix.PutRecord(&moved) },
		func() error { return ix.Delete(recs[5].Hash) },
		func() error {
			b, err := ix.Batches(context.Background(), normalform.DefaultConfig())
			if err != nil {
				return err
			}
			return b.Write([]Op{{Entry: NewEntry(recs[0]), Owner: &Finish{Name: "b"}}})
		},
	}
	for i, op := range ops {
		before := Dump(t, ix)
		ix.hook = fail
		nfWrites = 0
		err := op()
		ix.hook = nil
		if !errors.Is(err, boom) || nfWrites == 0 {
			t.Fatalf("write %d with its NF page write failing: %v (%d NF page writes seen)", i, err, nfWrites)
		}
		if after := Dump(t, ix); !maps.Equal(before, after) {
			t.Fatalf("write %d: a failed NF page write changed the index", i)
		}
	}
	checkNFs(t, ix, recs[1:])
}

// TestNFPageDamaged: an NF page that does not read (another version or
// codec, compressed data corrupt, a body length that disagrees or is
// past the bound, entries out of order or past the body's end) is an
// error naming its block and positions from the readers that show an
// NF (Get, Records, Verify, Stats), never a panic; a bad record
// (errors.Is ErrBadRecord); the NFs of other pages still read.
func TestNFPageDamaged(t *testing.T) {
	ctx := context.Background()
	recs := fullNFPage(t, 650, 10)
	elsewhere := fullNFPage(t, 651, 2)
	at := recs[3]
	body := func(entries ...[]byte) []byte { return compressed(bytes.Join(entries, nil)) } // a page holding these entries
	damages := map[string]func(v []byte) []byte{
		"version":   func(v []byte) []byte { v = append([]byte(nil), v...); v[0] = 9; return v },
		"codec":     func(v []byte) []byte { v = append([]byte(nil), v...); v[1] = 7; return v },
		"empty":     func([]byte) []byte { return []byte{} },
		"cut short": func(v []byte) []byte { return v[:len(v)/2] },
		"data": func(v []byte) []byte {
			v = append([]byte(nil), v...)
			copy(v[len(v)/2:], bytes.Repeat([]byte{0x5a}, 32))
			return v
		},
		"length": func(v []byte) []byte {
			_, w := binary.Uvarint(v[2:])
			return append(binary.AppendUvarint(v[:2:2], 5), v[2+w:]...)
		},
		"huge length": func(v []byte) []byte {
			_, w := binary.Uvarint(v[2:])
			return append(binary.AppendUvarint(v[:2:2], 1<<40), v[2+w:]...)
		},
		"out of order": func([]byte) []byte {
			return body([]byte{3, 1, 0}, []byte{2, 1, 0})
		},
		"past its end": func([]byte) []byte { return body([]byte{3, 0x7f, 1, 2}) },
		"offset past":  func([]byte) []byte { return body([]byte{layout.NFPageSpan, 1, 0}) },
		"no nf":        func([]byte) []byte { return body([]byte{}) },
	}
	for name, damage := range damages {
		t.Run(name, func(t *testing.T) {
			ix := openPaged(t)
			for _, r := range append(append([]*Record{}, recs...), elsewhere...) {
				if err := ix.PutRecord(r); err != nil {
					t.Fatal(err)
				}
			}
			k := layout.NFPageKey(at.Loc).Bytes()
			v, ok := rawGet(t, ix, k)
			if !ok {
				t.Fatal("no NF page")
			}
			if err := ix.db.Update(func(txn *badger.Txn) error { return txn.Set(k, damage(v)) }); err != nil {
				t.Fatal(err)
			}
			named := func(what string, err error) {
				t.Helper()
				if err == nil || !strings.Contains(err.Error(), "nf page of block 650 (positions 0..") {
					t.Fatalf("%s over an NF page damaged (%s): %v", what, name, err)
				}
			}
			_, err := ix.Get(at.Hash)
			named("Get", err)
			if !errors.Is(err, ErrBadRecord) {
				t.Fatalf("a damaged NF page is not a bad record: %v", err)
			}
			named("Records", ix.Records(ctx, AllBlocks, func(*Record) error { return nil }))
			_, err = ix.Stats(ctx)
			named("Stats", err)
			named("Verify", ix.Verify(ctx))
			for _, r := range elsewhere {
				if got, err := ix.GetAt(r.Loc); err != nil || !bytes.Equal(got.NF, r.NF) {
					t.Fatalf("a record of another NF page: %v", err)
				}
			}
			// A write into the damaged page fails, naming it, and leaves it.
			again := *at
			again.Loc.Index = 20
			again.Hash[5] = 1
			named("PutRecord", ix.PutRecord(&again))
		})
	}
}

// FuzzNFPage: an NF page's value from a disk can be anything; reading it
// never panics, gives NFs in increasing positions within the page, and
// what it gives writes to a page that reads back the same. The second
// input is a body compressed as the writer does, to reach the walk of
// the entries past the codec.
//
//	go test ./index -run '^$' -fuzz FuzzNFPage -fuzztime 30s
func FuzzNFPage(f *testing.F) {
	var nfs [layout.NFPageSpan][]byte
	for i, r := range fullNFPage(f, 7, 5) {
		nfs[3*i] = r.NFValue()
	}
	v, _, err := appendNFPage(nil, &nfs)
	if err != nil {
		f.Fatal(err)
	}
	body, err := nfPageBody(Loc{Block: 7}, v, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(v, body)
	f.Add(v[:len(v)/2], body[:len(body)/2])
	f.Add([]byte{layout.NFPageVersion, layout.NFCodecZstd, 0}, []byte{0, 1, 0})
	f.Fuzz(func(t *testing.T, v, body []byte) {
		page := Loc{Block: 7, Index: layout.NFPageSpan}
		check := func(v []byte) {
			var got [layout.NFPageSpan][]byte
			if _, err := nfPageEntries(page, v, nil, &got); err != nil {
				var pe *layout.NFPageError
				if !errors.As(err, &pe) || pe.Page != page || !strings.Contains(err.Error(), "nf page of block 7") {
					t.Fatalf("an error not naming the page: %v", err)
				}
				return
			}
			again, ok, err := appendNFPage(nil, &got)
			if err != nil || !ok {
				t.Fatalf("a page that reads does not write again: %v %v", ok, err)
			}
			var back [layout.NFPageSpan][]byte
			if _, err := nfPageEntries(page, again, nil, &back); err != nil || !sameNFs(&back, &got) {
				t.Fatalf("a page written from what was read reads back otherwise: %v", err)
			}
		}
		check(v)
		if len(body) <= 1<<16 {
			check(compressed(body))
		}
	})
}

func sameNFs(a, b *[layout.NFPageSpan][]byte) bool {
	for i := range a {
		if (a[i] == nil) != (b[i] == nil) || !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// compressed is an NF page value holding body as it is.
func compressed(body []byte) []byte {
	v := binary.AppendUvarint([]byte{layout.NFPageVersion, layout.NFCodecZstd}, uint64(len(body)))
	return nfEncoder().EncodeAll(body, v)
}
