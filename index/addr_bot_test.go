package index

import (
	"context"
	"slices"
	"testing"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/normalform"
)

// TestAddressLookupWithoutRecipientAddrKey: a record has no addr key for
// its recipient (its bot key stands for it), and an address lookup
// still finds, for every address of every record (the corpus and the
// geth scenarios), exactly the records that touch it, in position order,
// each once: over every block, over each record's own block, and as a
// token too.
func TestAddressLookupWithoutRecipientAddrKey(t *testing.T) {
	ctx := context.Background()
	as := analyseCorpus(t)
	as = append(as, analyseDir(t, gethScenarios)...)
	ix := putAll(t, as)
	var recs []*Record
	if err := ix.Scan(ctx, func(r *Record) error { recs = append(recs, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(recs) < 60 {
		t.Fatalf("%d records", len(recs))
	}
	// Keys: one addr key per address but the recipient.
	want := 0
	for _, r := range recs {
		want += len(r.Addresses) - 1
		if !slices.Contains(r.Addresses, r.Recipient) {
			t.Fatalf("tx %s: recipient not among its addresses", r.Hash.Hex())
		}
	}
	got := 0 // positions, in their postings (postings.go)
	if err := ix.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: kindPrefix(KindAddr)})
		defer it.Close()
		for it.Rewind(); it.ValidForPrefix(kindPrefix(KindAddr)); it.Next() {
			if err := it.Item().Value(func(v []byte) error {
				n, err := PositionsUnder(it.Item().Key(), v)
				got += n
				return err
			}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("%d addr keys, want %d (every address of every record but its recipient)", got, want)
	}
	// Lookups.
	touching := map[normalform.Address][]Loc{}
	for _, r := range recs { // in position order
		for _, a := range r.Addresses {
			touching[a] = append(touching[a], r.Loc)
		}
	}
	if len(touching) < 100 {
		t.Fatalf("%d addresses", len(touching))
	}
	for a, locs := range touching {
		var found []Loc
		if err := ix.ByAddress(ctx, a, AllBlocks, func(r Ref) error { found = append(found, r.Loc); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(found, locs) {
			t.Fatalf("address %x: found %v, want %v", a, found, locs)
		}
		b := locs[len(locs)-1].Block
		var inBlock, wantIn []Loc
		for _, l := range locs {
			if l.Block == b {
				wantIn = append(wantIn, l)
			}
		}
		if err := ix.ByAddress(ctx, a, Blocks(b, b), func(r Ref) error { inBlock = append(inBlock, r.Loc); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(inBlock, wantIn) {
			t.Fatalf("address %x in block %d: found %v, want %v", a, b, inBlock, wantIn)
		}
		// As a token too: at least the records touching it, in order.
		var asTok []Loc
		if err := ix.Fetch(ctx, Lookup{By: KindAddr, Addr: a, AsToken: true, Blocks: AllBlocks}, func(r *Record) error {
			asTok = append(asTok, r.Loc)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, l := range locs {
			if !slices.Contains(asTok, l) {
				t.Fatalf("address %x as token too: %v lacks %s", a, asTok, l)
			}
		}
		if !slices.IsSortedFunc(asTok, func(x, y Loc) int {
			if x.Less(y) {
				return -1
			}
			if y.Less(x) {
				return 1
			}
			return 0
		}) || len(slices.Compact(slices.Clone(asTok))) != len(asTok) {
			t.Fatalf("address %x as token too: %v not in position order, once each", a, asTok)
		}
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
}
