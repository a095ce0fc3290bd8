package index

import (
	"context"
	"errors"
	"strings"
	"testing"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/normalform"
)

// TestFirstSeenValueIsLoc: a first-seen key's value is the loc of the
// bot's first transaction of the shape, 8 bytes (40 when its index is
// unknown), and FirstSeen, BotShapes and Verify give its hash from the
// record there. A value that is not a position is an error naming the
// key, not a panic.
func TestFirstSeenValueIsLoc(t *testing.T) {
	ctx := context.Background()
	as := analyseCorpus(t)
	ix := putAll(t, as)
	// One at an unknown index: its loc holds its hash.
	rec, err := NewRecord(as[0], 0)
	if err != nil {
		t.Fatal(err)
	}
	rec.Loc = Loc{Block: 77_000_000, Index: UnknownIndex, Tx: rec.Hash}
	rec.Recipient, rec.Hashes.Shape = normalform.Address{0xb0}, normalform.Hash{0x5e}
	if err := ix.PutRecord(rec); err != nil {
		t.Fatal(err)
	}
	type first struct {
		bot   normalform.Address
		shape uint32
		v     []byte
	}
	var firsts []first
	err = ix.db.View(func(txn *badger.Txn) error {
		prefix := kindPrefix(KindFirst)
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		defer it.Close()
		for it.Rewind(); it.ValidForPrefix(prefix); it.Next() {
			k, err := ParseKey(it.Item().Key())
			if err != nil {
				return err
			}
			v, err := it.Item().ValueCopy(nil)
			if err != nil {
				return err
			}
			firsts = append(firsts, first{k.Addr, k.ID, v})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(firsts) < 10 {
		t.Fatalf("%d first-seen keys", len(firsts))
	}
	unknown := 0
	for _, f := range firsts {
		var least *Ref
		if err := ix.db.View(func(txn *badger.Txn) (err error) {
			least, err = leastOfBot(txn, newTxnRecs(txn), ix.namesIn(txn), f.bot, f.shape)
			return err
		}); err != nil || least == nil {
			t.Fatalf("bot %x shape %d: least %v %v", f.bot, f.shape, least, err)
		}
		want := 8
		if !least.Loc.Known() {
			want, unknown = 40, unknown+1
		}
		if len(f.v) != want {
			t.Errorf("bot %x shape %d: first-seen value %x, %d bytes, want the loc (%d)", f.bot, f.shape, f.v, len(f.v), want)
		}
		shape, _ := ix.namesIn(nil)(normalform.Shape, f.shape)
		got, ok, err := ix.FirstSeen(f.bot, shape)
		if err != nil || !ok || got != *least {
			t.Errorf("FirstSeen(%x, %x) = %v %v %v, want %v", f.bot, shape, got, ok, err, *least)
		}
		n := 0
		if err := ix.BotShapes(ctx, f.bot, func(s normalform.Hash, r Ref) error {
			if s == shape {
				n++
				if r != *least {
					t.Errorf("BotShapes(%x): %x first %v, want %v", f.bot, s, r, *least)
				}
			}
			return nil
		}); err != nil || n != 1 {
			t.Errorf("BotShapes(%x): %d of shape %x, %v", f.bot, n, shape, err)
		}
	}
	if unknown == 0 || unknown == len(firsts) {
		t.Errorf("%d of %d first-seen keys at an unknown index, want some and not all", unknown, len(firsts))
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatal(err)
	}
	// A value that is not a position.
	f := firsts[0]
	if err := ix.db.Update(func(txn *badger.Txn) error {
		return txn.Set(FirstKey(f.bot, f.shape).Bytes(), []byte{1, 2, 3})
	}); err != nil {
		t.Fatal(err)
	}
	shape, _ := ix.namesIn(nil)(normalform.Shape, f.shape)
	if _, _, err := ix.FirstSeen(f.bot, shape); err == nil || !strings.Contains(err.Error(), "first-seen key") || !strings.Contains(err.Error(), "not a position") {
		t.Errorf("FirstSeen on a bad value: %v, want an error naming the first-seen key", err)
	}
	// A value naming a position without a record.
	if err := ix.db.Update(func(txn *badger.Txn) error {
		return txn.Set(FirstKey(f.bot, f.shape).Bytes(), Loc{Block: 1, Index: 1}.Bytes())
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ix.FirstSeen(f.bot, shape); err == nil || !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), "no record at block 1 index 1") {
		t.Errorf("FirstSeen on a value without record: %v, want ErrBadRecord naming the position", err)
	}
}
