package index

import (
	"context"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/normalform"
)

// TestTagCollision: keys hold 6-byte tags of addresses, tokens and
// hashes, which two values may share. A key of another value's tag at a
// transaction's position (what a collision looks like) does not make
// the readers give that transaction, and a txhash key listing another
// transaction's position does not make Get return it.
func TestTagCollision(t *testing.T) {
	ix := openTemp(t)
	ingestCorpus(t, ix, IngestOptions{})
	ctx := context.Background()
	var victim *Record
	ix.Scan(ctx, func(r *Record) error {
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
	err := ix.db.Update(func(txn *badger.Txn) error {
		w := ix.newWtx(txn)
		id, err := w.id(normalform.Shape, victim.Hashes.Shape)
		for _, k := range []Key{AddrKey(stranger, victim.Loc), TokenKey(tok, victim.Loc),
			ProfitKey(Gross, tok, victim.Gross[0].Amount, victim.Loc), BotKey(stranger, id, victim.Loc),
			HashKey(normalform.Exact, Short(ghost), 0, victim.Loc)} {
			if err == nil {
				err = txn.Set(k.Bytes(), nil)
			}
		}
		if err == nil {
			err = txn.Set(TxHashKey(ghost).Bytes(), victim.Loc.Bytes())
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	refs := 0
	count := func(Ref) error { refs++; return nil }
	ix.ByAddress(ctx, stranger, AllBlocks, count)
	ix.ByToken(ctx, tok, AllBlocks, count)
	ix.ByBot(ctx, stranger, AllBlocks, func(_ normalform.Hash, r Ref) error { return count(r) })
	ix.ByBotShape(ctx, stranger, victim.Hashes.Shape, AllBlocks, count)
	ix.ByHash(ctx, normalform.Exact, ghost, AllBlocks, count)
	ix.ByProfit(ctx, Gross, tok, nil, nil, func(_ normalform.Signed, r Ref) error { return count(r) })
	for _, lk := range []Lookup{{By: KindAddr, Addr: stranger, Blocks: AllBlocks}, {By: KindAddr, Addr: stranger, AsToken: true, Blocks: AllBlocks},
		{By: KindToken, Token: tok, Blocks: AllBlocks}, {By: KindBot, Addr: stranger, Blocks: AllBlocks},
		{By: KindHash, Level: normalform.Exact, Hash: ghost, Blocks: AllBlocks}, {By: KindProfit, Side: Gross, Token: tok}} {
		if err := ix.Fetch(ctx, lk, func(*Record) error { refs++; return nil }); err != nil {
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
// beside them, assign dictionary ids without a clash (a Badger conflict
// on the next id makes one of two writers retry), and the index verifies.
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
		_, err := ix.Ingest(ctx, syntheticBlocks(t, 3, 30_000_000, true), IngestOptions{BatchTxs: 16})
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
	err := ix.db.View(func(txn *badger.Txn) error {
		return scanTxn(ctx, txn, kindPrefix(KindDict), nil, true, func(k, v []byte) ([]byte, bool, error) {
			id, err := parseID(v)
			if seen[id] {
				t.Errorf("id %d assigned twice", id)
			}
			seen[id] = true
			return nil, false, err
		})
	})
	if err != nil || len(seen) == 0 {
		t.Fatalf("%d ids: %v", len(seen), err)
	}
}
