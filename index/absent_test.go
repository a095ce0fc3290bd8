package index

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/flowq/flowq/normalform"
)

func scenarioRecord(t *testing.T, name string) *Record {
	t.Helper()
	rec, err := NewRecord(scenarioAnalysis(t, name), 0)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// records counts the index's records.
func records(t *testing.T, ix *Index) int {
	t.Helper()
	n := 0
	if err := ix.ByBlocks(context.Background(), AllBlocks, func(Ref) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

func verify(t *testing.T, ix *Index) {
	t.Helper()
	if err := ix.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func writeOne(t *testing.T, b *Batches, rec *Record) *Finish {
	t.Helper()
	fin := &Finish{Name: "test:" + rec.Loc.String(), Txs: 1}
	if err := b.Write([]Op{{Entry: NewEntry(rec), Owner: fin}, {Fin: fin}}); err != nil {
		t.Fatal(err)
	}
	return fin
}

// TestFreshBatchesSkipReads: batches writing into an index that held no
// record make no read that could only miss (absent.go), and keep put's
// semantics: a transaction written again elsewhere moves, a position
// taken by another transaction is refused, and once another writer has
// written a record the batches read again (a record that writer put is
// moved, not duplicated). Batches on an index with records read all.
func TestFreshBatchesSkipReads(t *testing.T) {
	ctx := context.Background()
	ix, err := Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	b, err := ix.Batches(ctx, normalform.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if b.abs == nil {
		t.Fatal("batches on an empty index read everything")
	}
	front, victim := scenarioRecord(t, "sandwich_front"), scenarioRecord(t, "sandwich_victim")
	writeOne(t, b, front)
	writeOne(t, b, victim)
	if front.Loc.Block != victim.Loc.Block {
		t.Fatal("the sandwich's front and victim are in one block")
	}
	if b.abs == nil || b.abs.skips != 6 {
		t.Fatalf("two new transactions of one block in an empty index: %+v, want 6 reads skipped (both txhash and first-seen keys, the first position's record and NF pages)", b.abs)
	}
	verify(t, ix)

	// The front again, in a block not written: its position's read is
	// skipped, its txhash's is not, and it moves.
	moved := *front
	moved.Loc.Block += 1000
	writeOne(t, b, &moved)
	if got, err := ix.Get(front.Hash); err != nil || got.Loc != moved.Loc {
		t.Fatalf("moved front: %v %v, want it at %s", got, err, moved.Loc)
	}
	if _, err := ix.GetAt(front.Loc); !errors.Is(err, ErrNotFound) {
		t.Fatalf("the front's old position: %v, want ErrNotFound", err)
	}
	if n := records(t, ix); n != 2 {
		t.Fatalf("%d records, want 2", n)
	}
	verify(t, ix)

	// Another transaction at the victim's position: refused.
	other := *victim
	other.Hash[0] ^= 0xff
	if fin := writeOne(t, b, &other); len(fin.Failures) != 1 {
		t.Fatalf("a taken position: failures %v, want one PositionError", fin.Failures)
	}

	// Another writer puts the victim elsewhere; the batches, writing it
	// at a third position (a block they never wrote), must find and move
	// it.
	put := *victim
	put.Loc.Block += 2000
	if err := ix.PutRecord(&put); err != nil {
		t.Fatal(err)
	}
	third := *victim
	third.Loc.Block += 3000
	writeOne(t, b, &third)
	if b.abs != nil {
		t.Fatal("the batches still skip reads after another writer wrote a record")
	}
	if got, err := ix.Get(victim.Hash); err != nil || got.Loc != third.Loc {
		t.Fatalf("victim: %v %v, want it at %s", got, err, third.Loc)
	}
	if n := records(t, ix); n != 2 {
		t.Fatalf("%d records after another writer's put, want 2 (the victim moved, not duplicated)", n)
	}
	verify(t, ix)

	// Batches on an index holding records read everything.
	b2, err := ix.Batches(ctx, normalform.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if b2.abs != nil {
		t.Fatal("batches on an index with records skip reads")
	}
}

// TestFreshBatchesFirstSeenRollback: the first-seen values the batches
// keep in memory are those of committed transactions: a write that
// failed after lowering a bot's first-seen key leaves nothing behind, so
// a later transaction of that bot and shape writes the key.
func TestFreshBatchesFirstSeenRollback(t *testing.T) {
	ctx := context.Background()
	ix, err := Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	b, err := ix.Batches(ctx, normalform.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	front := scenarioRecord(t, "sandwich_front")
	a := *front
	a.Loc.Block += 5000
	fail := errors.New("injected")
	ix.hook = func(op string, key []byte) error {
		if op == "set" && Kind(key[0]) == KindDirty {
			return fail // after the record's first-seen key was written
		}
		return nil
	}
	fin := &Finish{Name: "a", Txs: 1}
	if err := b.Write([]Op{{Entry: NewEntry(&a), Owner: fin}, {Fin: fin}}); !errors.Is(err, fail) {
		t.Fatalf("write: %v, want the injected failure", err)
	}
	ix.hook = nil
	c := *front
	c.Hash[0] ^= 0xff
	c.Loc.Block += 6000
	writeOne(t, b, &c)
	if b.abs == nil || b.abs.noFirst {
		t.Fatal("the batches stopped keeping first-seen keys")
	}
	if n := records(t, ix); n != 1 {
		t.Fatalf("%d records, want 1", n)
	}
	verify(t, ix) // c's first-seen key is there, naming c
}
