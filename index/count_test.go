package index_test

import (
	"context"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// TestCountHashes: counting by shape, tokens and family from the hash
// keys gives, for every hash, the number of records of the block range
// that have it and the first of them, as a scan of the records does; a
// hash key whose id the dictionary lacks, or whose record is missing, is
// an error naming the key, not a wrong count; the exact level is refused.
func TestCountHashes(t *testing.T) {
	ix := openTemp(t)
	ctx := context.Background()
	in, err := ingest.Files("../examples/mainnet", "../examples/scenarios/geth")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.Ingest(ctx, ix, in, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	type group struct {
		n     int
		first index.Ref
	}
	for _, blocks := range []index.BlockRange{index.AllBlocks, index.Blocks(100, 130), index.Blocks(11017338, 11017338), index.Blocks(5, 4)} {
		for l := normalform.Shape; l <= normalform.Family; l++ {
			want := map[normalform.Hash]group{}
			if err := ix.Records(ctx, blocks, func(r *index.Record) error {
				g, ok := want[r.Hashes.Of(l)]
				if !ok {
					g.first = index.Ref{Hash: r.Hash, Loc: r.Loc}
				}
				g.n++
				want[r.Hashes.Of(l)] = g
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			got := map[normalform.Hash]group{}
			if err := ix.CountHashes(ctx, l, blocks, func(h normalform.Hash, n int, first index.Ref) error {
				if _, dup := got[h]; dup {
					t.Errorf("%s %v: hash %s twice", l, blocks, h.Hex())
				}
				got[h] = group{n, first}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Errorf("%s %v: %d hashes, want %d", l, blocks, len(got), len(want))
			}
			for h, w := range want {
				if got[h] != w {
					t.Errorf("%s %v %s: %+v, want %+v", l, blocks, h.Hex(), got[h], w)
				}
			}
			if blocks == index.AllBlocks && len(want) < 5 {
				t.Errorf("%s: only %d hashes", l, len(want))
			}
		}
	}
	if err := ix.CountHashes(ctx, normalform.Exact, index.AllBlocks, func(normalform.Hash, int, index.Ref) error { return nil }); err == nil || !strings.Contains(err.Error(), "exact") {
		t.Errorf("exact level: %v, want an error naming it", err)
	}

	// Damage: a family key with an id the dictionary lacks; then one with
	// a known id at a position without a record.
	count := func() error {
		return ix.CountHashes(ctx, normalform.Family, index.AllBlocks, func(normalform.Hash, int, index.Ref) error { return nil })
	}
	put := func(k []byte) {
		t.Helper()
		if err := index.DB(ix).Update(func(txn *badger.Txn) error { return txn.Set(k, nil) }); err != nil {
			t.Fatal(err)
		}
	}
	del := func(k []byte) {
		t.Helper()
		if err := index.DB(ix).Update(func(txn *badger.Txn) error { return txn.Delete(k) }); err != nil {
			t.Fatal(err)
		}
	}
	loc := layout.Loc{Block: 7, Index: 3}
	unknown := layout.HashKey(normalform.Family, layout.Tag{}, 0xfffff0, loc).Bytes()
	put(unknown)
	if err := count(); err == nil || !strings.Contains(err.Error(), "not in the dictionary") || !strings.Contains(err.Error(), "fffff0") {
		t.Errorf("unknown id: %v, want an error naming the key and the id", err)
	}
	t.Logf("unknown id: %v", count())
	del(unknown)
	var id uint32
	var level normalform.Level
	// A family id: the first family key's.
	if err := index.DB(ix).View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte{byte(index.KindHash), byte(normalform.Family)}})
		defer it.Close()
		it.Rewind()
		if !it.Valid() {
			t.Fatal("no family key")
		}
		k, err := index.ParseKey(it.Item().Key())
		id, level = k.ID, k.Level
		return err
	}); err != nil {
		t.Fatal(err)
	}
	orphan := layout.HashKey(level, layout.Tag{}, id, loc).Bytes()
	put(orphan)
	if err := count(); err == nil || !strings.Contains(err.Error(), "its record") || !strings.Contains(err.Error(), loc.String()) {
		t.Errorf("key without a record: %v, want an error naming the position", err)
	}
	t.Logf("key without a record: %v", count())
	del(orphan)
	if err := count(); err != nil {
		t.Errorf("repaired: %v", err)
	}
}
