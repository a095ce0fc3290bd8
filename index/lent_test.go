package index

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// TestFilterRowsLent: a scan that lends its rows' records gives, record
// for record and in the same order, what FilterRows and FilterRowsByFront
// give (copied as fn sees them: a lent record is valid only during fn),
// on one and several workers and any chunking, filtered on fronts, on
// headers with addresses, and unfiltered; it decodes into storage it
// reuses (one record on one worker, a chunk's slots from then on), and so
// allocates at least one object less a row than FilterRows; a damaged
// record is an error naming it where the scan reads it (its front always,
// the rest when it matches).
func TestFilterRowsLent(t *testing.T) {
	ctx := context.Background()
	as := analyseCorpus(t)
	ix, n := putAll(t, as), len(as)
	onFront := func(r *Record) (bool, error) { return r.Counts.Pools >= 2 || r.Loc.Block%2 == 1, nil }
	onAddrs := func(r *Record) (bool, error) { return r.Recipient[19]%3 != 0, nil }
	copyOf := func(r *Record) *Record { // as a row reads it; a list empty or absent is the same row
		c := *r
		c.Gross, c.Net, c.Reasons = slices.Clone(r.Gross), slices.Clone(r.Net), slices.Clone(r.Reasons)
		for _, l := range []*[]Amount{&c.Gross, &c.Net} {
			if len(*l) == 0 {
				*l = nil
			}
		}
		if len(c.Reasons) == 0 {
			c.Reasons = nil
		}
		return &c
	}
	for _, c := range []struct {
		name         string
		addrs, front bool
		match        func(*Record) (bool, error)
	}{{"front", false, true, onFront}, {"addresses", true, false, onAddrs}, {"every record", false, false, nil}} {
		var want []*Record
		var err error
		owned := func(r *Record) error { want = append(want, copyOf(r)); return nil }
		if c.front {
			err = ix.FilterRowsByFront(ctx, AllBlocks, c.match, owned)
		} else {
			err = ix.FilterRows(ctx, AllBlocks, c.addrs, c.match, owned)
		}
		if err != nil || len(want) == 0 || (c.match != nil && len(want) == n) {
			t.Fatalf("%s: %d of %d records, %v", c.name, len(want), n, err)
		}
		for _, w := range []int{1, 2, 3} {
			for _, per := range []int64{1, 7, 4096} {
				func() {
					defer SetScan(w, per)()
					var got []*Record
					seen := map[*Record]bool{}
					err := ix.FilterRowsLent(ctx, AllBlocks, c.addrs, c.front, c.match, func(r *Record) error {
						got = append(got, copyOf(r))
						seen[r] = true
						return nil
					})
					if err != nil || len(got) != len(want) {
						t.Fatalf("%s, %d workers, chunks of %d: %d rows (%v), want %d", c.name, w, per, len(got), err, len(want))
					}
					for i := range got {
						// a lent row leaves what a row does not show unresolved (layout.RowDecoder.Row)
						row := *want[i]
						row.Hashes.Shape, row.Hashes.Tokens, row.Hashes.Family, row.From = normalform.Hash{}, normalform.Hash{}, normalform.Hash{}, normalform.Address{}
						if !reflect.DeepEqual(got[i], &row) {
							t.Fatalf("%s, %d workers, chunks of %d: row %d\n %+v\nwant\n %+v", c.name, w, per, i, *got[i], row)
						}
					}
					if w == 1 && len(seen) != 1 {
						t.Errorf("%s, one worker: %d records for %d rows, want one, reused", c.name, len(seen), len(got))
					}
					if w > 1 && per == 1 && len(seen) >= len(got) {
						t.Errorf("%s, %d workers, chunks of one block: %d records for %d rows, want slots reused", c.name, w, len(seen), len(got))
					}
				}()
			}
		}
		func() {
			defer SetScan(1, 4096)()
			allocs := func(lent bool) float64 {
				return testing.AllocsPerRun(5, func() {
					fn := func(*Record) error { return nil }
					var err error
					switch {
					case lent:
						err = ix.FilterRowsLent(ctx, AllBlocks, c.addrs, c.front, c.match, fn)
					case c.front:
						err = ix.FilterRowsByFront(ctx, AllBlocks, c.match, fn)
					default:
						err = ix.FilterRows(ctx, AllBlocks, c.addrs, c.match, fn)
					}
					if err != nil {
						t.Fatal(err)
					}
				})
			}
			if l, o := allocs(true), allocs(false); l+float64(len(want)) > o {
				t.Errorf("%s: %.0f allocations lent, %.0f owned, for %d rows: want at least one less a row", c.name, l, o, len(want))
			}
		}()
	}

	// Damage: an error naming the record, never a panic, wherever the
	// scan reads it; past the front, only where a row is decoded.
	var in, out *Record
	if err := ix.Scan(ctx, func(r *Record) error {
		ok, _ := onFront(r)
		if ok && in == nil {
			in = r
		} else if !ok && out == nil {
			out = r
		}
		return nil
	}); err != nil || in == nil || out == nil {
		t.Fatalf("no record on each side of the filter: %v", err)
	}
	raw := func(l Loc) []byte {
		v, ok, err := RawRecord(ix, l)
		if err != nil || !ok {
			t.Fatalf("no record at %s", l)
		}
		return v
	}
	verdict := func(v []byte) []byte { // flags, status, verdict
		bad := append([]byte(nil), v...)
		bad[len(v)-len(layout.ContentOf(v))+32+2] = 0xff
		return bad
	}
	cut := func(v []byte) []byte { return append([]byte(nil), v[:len(v)/2]...) } // in the principals or balances
	for _, c := range []struct {
		name    string
		rec     *Record
		damage  func([]byte) []byte
		wantErr bool
	}{
		{"a matching record's verdict", in, verdict, true},
		{"a dropped record's verdict", out, verdict, true},
		{"a matching record cut in half", in, cut, true},
		{"a dropped record cut in half", out, cut, false},
	} {
		good := raw(c.rec.Loc)
		if err := SetRawRecord(ix, c.rec.Loc, c.damage(good)); err != nil {
			t.Fatal(err)
		}
		for _, w := range []int{1, 2} {
			func() {
				defer SetScan(w, 3)()
				err := ix.FilterRowsLent(ctx, AllBlocks, false, true, onFront, func(*Record) error { return nil })
				if c.wantErr != (err != nil) || (err != nil && (!errors.Is(err, layout.ErrBadRecord) || !strings.Contains(err.Error(), c.rec.Hash.Hex()))) {
					t.Errorf("%s, %d workers: %v (want an error naming tx %s: %v)", c.name, w, err, c.rec.Hash.Hex(), c.wantErr)
				}
			}()
		}
		if err := SetRawRecord(ix, c.rec.Loc, good); err != nil {
			t.Fatal(err)
		}
	}
}
