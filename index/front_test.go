package index

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flowq/flowq/index/layout"
)

// TestFilterRowsByFront: a scan deciding on the records' fronts gives
// the rows FilterRows gives with the same predicate (on counts and
// positions), on one and several workers and any chunking; a record
// damaged in its front is an error naming it whether it matches or not; a
// record damaged past its front (a dictionary id no name has) is an error
// naming it when it matches, and is passed over, unread, when the front
// rules it out (verify still finds it).
func TestFilterRowsByFront(t *testing.T) {
	ctx := context.Background()
	ix, err := Open(filepath.Join(t.TempDir(), "ix"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	var recs []*Record
	for _, a := range analyseCorpus(t) {
		rec, err := NewRecord(a, time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.PutRecord(rec); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	match := func(r *Record) (bool, error) { return r.Counts.Pools >= 2 || r.Loc.Block%2 == 1, nil }
	collect := func(front bool) ([]*Record, error) {
		var out []*Record
		fn := func(r *Record) error { out = append(out, r); return nil }
		if front {
			return out, ix.FilterRowsByFront(ctx, AllBlocks, match, fn)
		}
		return out, ix.FilterRows(ctx, AllBlocks, false, match, fn)
	}
	want, err := collect(false)
	if err != nil || len(want) == 0 || len(want) == len(recs) {
		t.Fatalf("FilterRows: %d of %d records, %v", len(want), len(recs), err)
	}
	for _, w := range []int{1, 2, 3} {
		for _, per := range []int64{1, 7, 4096} {
			func() {
				defer SetScan(w, per)()
				got, err := collect(true)
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Fatalf("%d workers, chunks of %d: %d rows (%v), want FilterRows's %d", w, per, len(got), err, len(want))
				}
			}()
		}
	}

	// Damage: one record that matches and one the front rules out.
	var in, out *Record
	for _, r := range recs {
		ok, _ := match(r)
		if ok && in == nil {
			in = r
		} else if !ok && out == nil {
			out = r
		}
	}
	set := func(l Loc, v []byte) {
		t.Helper()
		if err := SetRawRecord(ix, l, v); err != nil { // through its page
			t.Fatal(err)
		}
	}
	raw := func(l Loc) []byte {
		v, ok, err := RawRecord(ix, l)
		if err != nil || !ok {
			t.Fatalf("no record at %s", l)
		}
		return v
	}
	// The family id (the front ends with the counts; the ids follow) of
	// the record: rewritten to one the dictionary lacks, same length.
	badID := func(v []byte) []byte {
		c := layout.ContentOf(v)
		p := len(v) - len(c) + 32 + 6 // content: hash, flags and five bytes
		// the counts
		for range 4 {
			for v[p]&0x80 != 0 {
				p++
			}
			p++
		}
		for range 2 { // shape and tokens ids
			for v[p]&0x80 != 0 {
				p++
			}
			p++
		}
		bad := append([]byte(nil), v...)
		if bad[p]&0x80 != 0 {
			t.Fatal("a family id of several bytes")
		}
		bad[p] = 0x7f // id 127: the corpus's dictionary is smaller
		return bad
	}
	for _, c := range []struct {
		name    string
		rec     *Record
		damage  func([]byte) []byte
		wantErr bool
	}{
		{"a matching record's family id", in, badID, true},
		{"a dropped record's family id", out, badID, false},
		{"a dropped record's verdict", out, func(v []byte) []byte {
			bad := append([]byte(nil), v...)
			bad[len(v)-len(layout.ContentOf(v))+32+2] = 0xff // flags, status, verdict
			return bad
		}, true},
	} {
		good := raw(c.rec.Loc)
		set(c.rec.Loc, c.damage(good))
		_, err := collect(true)
		if c.wantErr != (err != nil) || (err != nil && (!errors.Is(err, layout.ErrBadRecord) || !strings.Contains(err.Error(), c.rec.Hash.Hex()))) {
			t.Errorf("%s: %v (want an error naming tx %s: %v)", c.name, err, c.rec.Hash.Hex(), c.wantErr)
		}
		if err := ix.Verify(ctx); err == nil {
			t.Errorf("%s: verify finds nothing", c.name)
		}
		set(c.rec.Loc, good)
	}
}
