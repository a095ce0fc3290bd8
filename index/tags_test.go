package index_test

import (
	"context"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/normalform"
)

// TestTagCollision: keys hold 6-byte tags of addresses, tokens and
// hashes, which two values may share. A key of another value's tag at a
// transaction's position (what a collision looks like) does not make
// the readers give that transaction, and a txhash key listing another
// transaction's position does not make Get return it.
func TestTagCollision(t *testing.T) {
	ix := openTemp(t)
	ingestCorpus(t, ix, ingest.Options{})
	ctx := context.Background()
	var victim *index.Record
	ix.Scan(ctx, func(r *index.Record) error {
		if victim == nil && r.Loc.Known() && len(r.Gross) > 0 {
			victim = r
		}
		return nil
	})
	if victim == nil {
		t.Fatal("no corpus record with a balance")
	}
	stranger := normalform.Address{0xde, 0xad}
	tok := normalform.FungibleToken(stranger)
	ghost := normalform.Hash{0xee, 1}
	err := index.DB(ix).Update(func(txn *badger.Txn) error {
		id, err := index.ShapeID(ix, txn, victim.Hashes.Shape)
		for _, k := range []index.Key{index.AddrKey(stranger, victim.Loc), index.TokenKey(tok, victim.Loc),
			index.ProfitKey(index.Gross, tok, victim.Gross[0].Amount, victim.Loc), index.BotKey(stranger, id, victim.Loc),
			index.HashKey(normalform.Exact, index.Short(ghost), 0, victim.Loc)} {
			if err == nil {
				err = txn.Set(k.Bytes(), nil)
			}
		}
		if err == nil {
			err = txn.Set(index.TxHashKey(ghost).Bytes(), victim.Loc.Bytes())
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	refs := 0
	count := func(index.Ref) error { refs++; return nil }
	ix.ByAddress(ctx, stranger, index.AllBlocks, count)
	ix.ByToken(ctx, tok, index.AllBlocks, count)
	ix.ByBot(ctx, stranger, index.AllBlocks, func(_ normalform.Hash, r index.Ref) error { return count(r) })
	ix.ByBotShape(ctx, stranger, victim.Hashes.Shape, index.AllBlocks, count)
	ix.ByHash(ctx, normalform.Exact, ghost, index.AllBlocks, count)
	ix.ByProfit(ctx, index.Gross, tok, nil, nil, func(_ normalform.Signed, r index.Ref) error { return count(r) })
	for _, lk := range []index.Lookup{{By: index.KindAddr, Addr: stranger, Blocks: index.AllBlocks}, {By: index.KindAddr, Addr: stranger, AsToken: true, Blocks: index.AllBlocks},
		{By: index.KindToken, Token: tok, Blocks: index.AllBlocks}, {By: index.KindBot, Addr: stranger, Blocks: index.AllBlocks},
		{By: index.KindHash, Level: normalform.Exact, Hash: ghost, Blocks: index.AllBlocks}, {By: index.KindProfit, Side: index.Gross, Token: tok}} {
		if err := ix.Fetch(ctx, lk, func(*index.Record) error { refs++; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	if refs != 0 {
		t.Errorf("%d transactions found through another value's tag", refs)
	}
	if _, err := ix.Get(ghost); err == nil {
		t.Error("Get found a transaction through another hash's tag")
	}
	if r, err := ix.Get(victim.Hash); err != nil || r.Hash != victim.Hash {
		t.Errorf("Get(victim): %v", err)
	}
	if _, ok, _ := ix.FirstSeen(stranger, victim.Hashes.Shape); ok {
		t.Error("a first-seen key for a bot with no transaction")
	}
	if err := ix.Verify(ctx); err == nil {
		t.Error("Verify passes an index with stray keys")
	}
}

// TestConcurrentPuts: Puts from several goroutines at once, and an ingest
// beside them, assign dictionary ids without a clash (record writers take
// turns under Index.recMu; a Badger conflict on the next id, should two
// transactions overlap, makes one retry), the ingest's batches read again
// once another writer has written, and the index verifies.
func TestConcurrentPuts(t *testing.T) {
	ix := openTemp(t)
	as := analyseCorpus(t)
	ctx := context.Background()
	errs := make(chan error, 5)
	for g := range 4 {
		go func() {
			var err error
			for i := g; i < len(as) && err == nil; i += 4 {
				err = ix.Put(as[i], time.Microsecond)
			}
			errs <- err
		}()
	}
	go func() {
		_, err := ingest.Ingest(ctx, ix, syntheticBlocks(t, 3, 30_000_000, true), ingest.Options{BatchTxs: 16})
		errs <- err
	}()
	for range 5 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	seen := map[uint32]bool{}
	err := index.DictIDs(ctx, ix, func(id uint32) {
		if seen[id] {
			t.Errorf("id %d assigned twice", id)
		}
		seen[id] = true
	})
	if err != nil || len(seen) == 0 {
		t.Fatalf("%d ids: %v", len(seen), err)
	}
}
