package index

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
)

// TestHeadKeys: every record has a head key holding its header (issue
// 22's projection); a header scan reads the head keys and gives what
// decoding the records' headers gives; Verify reports a head key that is
// stale or missing.
func TestHeadKeys(t *testing.T) {
	ctx := context.Background()
	ix, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, a := range analyseCorpus(t) {
		if a.Tx.Meta.HasHash {
			if err := ix.Put(a, time.Millisecond); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The records' headers, decoded from the records.
	var want []*Record
	var heads, recs int
	err = ix.db.View(func(txn *badger.Txn) error {
		names := ix.namesIn(txn)
		if err := recordsTxn(ctx, txn, AllBlocks, func(l Loc, v []byte) error {
			recs++
			h, err := decodeRecord(l, v, names, depthHeader)
			want = append(want, h)
			item, gerr := txn.Get(HeadKey(l).Bytes())
			if gerr != nil {
				t.Errorf("record at %s: head key: %v", l, gerr)
				return err
			}
			heads++
			hv, _ := item.ValueCopy(nil)
			if string(hv) != string(layout.HeadOf(v)) {
				t.Errorf("record at %s: head key %x, want %x", l, hv, layout.HeadOf(v))
			}
			return err
		}); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if recs < 50 || heads != recs {
		t.Fatalf("%d records, %d head keys", recs, heads)
	}
	var got []*Record
	if err := ix.Filter(ctx, AllBlocks, false, nil, false, func(r *Record) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("header scan: %d records, want %d (or they differ)", len(got), len(want))
	}
	if err := ix.Verify(ctx); err != nil {
		t.Fatalf("Verify: %v", err)
	}

	// A stale head key (its header changed), one without a record, then
	// a missing one.
	l := want[len(want)/2].Loc
	k := HeadKey(l).Bytes()
	var v []byte
	if err := ix.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(k)
		if err == nil {
			v, err = item.ValueCopy(nil)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	stale := append([]byte(nil), v...)
	stale[len(stale)-1] ^= 0xff
	for _, c := range []struct {
		name string
		set  func(*badger.Txn) error
		msg  string
	}{
		{"stale", func(txn *badger.Txn) error { return txn.Set(k, stale) }, string(hexOf(k))},
		{"orphan", func(txn *badger.Txn) error {
			return txn.Set(HeadKey(Loc{Block: l.Block + 1<<30, Index: 7}).Bytes(), v)
		}, "its record"},
		{"missing", func(txn *badger.Txn) error { return txn.Delete(k) }, "missing key " + strings.ToLower(string(hexOf(k)))},
	} {
		if err := ix.db.Update(c.set); err != nil {
			t.Fatal(err)
		}
		err := ix.Verify(ctx)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s head key: Verify says %v, want %q", c.name, err, c.msg)
		}
	}
}

func hexOf(b []byte) []byte {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, x := range b {
		out = append(out, digits[x>>4], digits[x&15])
	}
	return out
}
