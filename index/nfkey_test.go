package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
)

// rawGet reads a key's value (nil, false: no such key).
func rawGet(t *testing.T, ix *Index, k []byte) ([]byte, bool) {
	t.Helper()
	var v []byte
	err := ix.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(k)
		if err != nil {
			return err
		}
		v, err = item.ValueCopy(nil)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, false
	} else if err != nil {
		t.Fatal(err)
	}
	return v, true
}

// TestNFKey: a record's normal form is under its own key at the record's
// position, not in the record's value; the readers that return records
// whole (Get, Records, Filter whole) give it back, rows (FilterRows) go
// without it; a transaction that moves takes its NF key along, a
// Delete removes it; verify reports an NF key missing, another record's,
// or without a record; and Get names the missing key.
func TestNFKey(t *testing.T) {
	ctx := context.Background()
	ix, err := Open(filepath.Join(t.TempDir(), "ix"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	as := analyseCorpus(t)[:30]
	var recs []*Record
	for _, a := range as {
		rec, err := NewRecord(a, time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if !rec.Loc.Known() {
			continue
		}
		if err := ix.PutRecord(rec); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if len(recs) < 10 {
		t.Fatalf("only %d corpus records with a position", len(recs))
	}
	for _, rec := range recs {
		v, ok := rawNF(t, ix, rec.Loc)
		if !ok || !bytes.Equal(v, rec.NFValue()) {
			t.Fatalf("tx %s: NF key %v, value %d bytes", rec.Hash.Hex(), ok, len(v))
		}
		rv, ok, err := RawRecord(ix, rec.Loc)
		if err != nil || !ok {
			t.Fatalf("tx %s: its record: %v %v", rec.Hash.Hex(), ok, err)
		}
		if bytes.Contains(rv, v[2:]) {
			t.Fatalf("tx %s: the record's value holds its NF", rec.Hash.Hex())
		}
		got, err := ix.Get(rec.Hash)
		if err != nil || !bytes.Equal(got.NF, rec.NF) {
			t.Fatalf("tx %s: Get: NF back %v (%v)", rec.Hash.Hex(), got != nil && bytes.Equal(got.NF, rec.NF), err)
		}
	}
	n := 0
	if err := ix.Records(ctx, AllBlocks, func(r *Record) error {
		if r.NF == nil || r.Partial {
			t.Errorf("tx %s: Records gave it without its NF", r.Hash.Hex())
		}
		n++
		return nil
	}); err != nil || n != len(recs) {
		t.Fatalf("Records: %d of %d, %v", n, len(recs), err)
	}
	if err := ix.Filter(ctx, AllBlocks, false, func(*Record) (bool, error) { return true, nil }, true, func(r *Record) error {
		if r.NF == nil {
			t.Errorf("tx %s: Filter whole gave it without its NF", r.Hash.Hex())
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	n = 0
	if err := ix.FilterRows(ctx, AllBlocks, false, nil, func(r *Record) error {
		if r.NF != nil || r.Addresses != nil || !r.Partial || r.Gross == nil {
			t.Errorf("tx %s: a row record with NF %d bytes, addresses %v, partial %v, gross %v", r.Hash.Hex(), len(r.NF), r.Addresses, r.Partial, r.Gross)
		}
		n++
		return nil
	}); err != nil || n != len(recs) {
		t.Fatalf("FilterRows: %d of %d, %v", n, len(recs), err)
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatalf("verify a fresh index: %v", err)
	}

	// The transaction moves: its NF key goes with it.
	moved := *recs[0]
	old := moved.Loc
	moved.Loc.Index += 1000
	if err := ix.PutRecord(&moved); err != nil {
		t.Fatal(err)
	}
	if _, ok := rawNF(t, ix, old); ok {
		t.Fatalf("the NF key at the old position %s is left", old)
	}
	if _, ok := rawNF(t, ix, moved.Loc); !ok {
		t.Fatalf("no NF key at the new position %s", moved.Loc)
	}
	// Deleted: its NF key too.
	if err := ix.Delete(recs[1].Hash); err != nil {
		t.Fatal(err)
	}
	if _, ok := rawNF(t, ix, recs[1].Loc); ok {
		t.Fatal("Delete left the NF key")
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatalf("verify after a move and a delete: %v", err)
	}

	// Damage: another record's NF, a missing NF key, an orphan one.
	a, b, c := recs[2], recs[3], recs[4]
	putNFRaw(t, ix, a.Loc, b.NFValue())
	if _, err := ix.Get(a.Hash); !errors.Is(err, layout.ErrNFMismatch) {
		t.Fatalf("Get with another record's NF: %v", err)
	}
	putNFRaw(t, ix, c.Loc, nil)
	if _, err := ix.Get(c.Hash); err == nil || !strings.Contains(err.Error(), "normal form") || !strings.Contains(err.Error(), c.Hash.Hex()) {
		t.Fatalf("Get without the NF key: %v", err)
	}
	if err := ix.Records(ctx, AllBlocks, func(*Record) error { return nil }); err == nil {
		t.Fatal("Records over a damaged NF key: no error")
	}
	orphan := c.Loc
	orphan.Index += 5000
	putNFRaw(t, ix, orphan, c.NFValue())
	err = ix.Verify(ctx)
	for _, want := range []string{a.Hash.Hex(), c.Hash.Hex(), "nf key"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("verify does not report %q: %v", want, err)
		}
	}
}

// TestSchema8Refused: an index written before the NF key (schema 8,
// records v5: the NF inside the record) is refused on open with the
// message that says to ingest anew, never read as records without their
// NF.
func TestSchema8Refused(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ix")
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	// schema 8: the NF in the record; schema 9: the NF key's value with its own tables
	for _, v := range [][2]uint32{{8, 5}, {9, 6}, {10, 6}, {11, 6}, {12, 6}} { // schema 10: a key a record, no pages; 11: a key a secondary key and position, no postings, no NF pages; 12: addresses written out, S2 NF pages, profit keys with the amount
		ix, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		old := binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, v[0]), v[1])
		if err := ix.db.Update(func(txn *badger.Txn) error { return txn.Set(SchemaKey().Bytes(), old) }); err != nil {
			t.Fatal(err)
		}
		ix.Close()
		want := fmt.Sprintf("has schema %d (records v%d); this flowq uses schema %d (records v%d): ingest into a new directory", v[0], v[1], SchemaVersion, RecordVersion)
		if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("open a schema %d index: %v", v[0], err)
		}
		// back to this schema for the next turn
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
}
