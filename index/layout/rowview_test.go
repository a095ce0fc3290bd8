package layout

import (
	"errors"
	"reflect"
	"testing"

	"github.com/holiman/uint256"

	"github.com/flowq/flowq/normalform"
)

// TestDecodeFrontInto: a record's front (DecodeFrontInto) gives the
// fields DecodeInto gives for them, without the dictionary, for records
// with large counts and latencies, a known and an unknown position; a
// reused record keeps nothing of the one before; every truncation of the
// front and a bad verdict, version or flags are errors naming the record
// (never a panic), while a fault after the front is left to the decode
// that reads it.
func TestDecodeFrontInto(t *testing.T) {
	td := &testDict{}
	names := td.names
	weth := normalform.FungibleToken(normalform.Address{0xc0})
	recs := []*Record{
		{Hash: normalform.Hash{1}, Loc: Loc{Block: 7, Index: 3}, From: normalform.Address{2}, HasFrom: true, To: normalform.Address{3}, HasTo: true,
			Recipient: normalform.Address{3}, Verdict: normalform.Verdict(1), Tier: normalform.Tier(1), Path: normalform.Path(1), Mode: normalform.Mode(1),
			Reasons: []normalform.Reason{normalform.ReasonLeftovers, "something new"}, CostsKnown: true, GasUsed: 21000, Costs: *uint256.NewInt(5),
			Gross:  []Amount{{Token: weth, Amount: normalform.Signed{Abs: *uint256.NewInt(1e18)}}},
			Net:    []Amount{{Token: normalform.NativeToken, Amount: normalform.Signed{Abs: *uint256.NewInt(3), Neg: true}}},
			Counts: normalform.Counts{Cycles: 2, Pools: 300, Hops: 1 << 20, Leftovers: 1}, Latency: 1 << 40, AlgebraVersion: 9},
		{Hash: normalform.Hash{9, 9}, Loc: Loc{Block: UnknownBlock, Index: UnknownIndex, Tx: normalform.Hash{9, 9}}, From: normalform.Address{4},
			Recipient: normalform.Address{5}, HasFrom: true},
	}
	head := &Record{Reasons: []normalform.Reason{"left over"}, Gross: []Amount{{Token: weth}}}
	for _, r := range recs {
		v := td.encode(r)
		want, _, err := DecodeInto(&Record{}, r.Loc, v, names, DepthHeader)
		if err != nil {
			t.Fatal(err)
		}
		if err := DecodeFrontInto(head, r.Loc, v); err != nil {
			t.Fatalf("%s: %v", r.Hash.Hex(), err)
		}
		want.Hashes, want.Reasons = normalform.Hashes{}, nil // not in the front
		got := *head
		got.Reasons = nil
		if !got.Partial || got.Hash != want.Hash || got.Loc != want.Loc || got.Counts != want.Counts || got.Verdict != want.Verdict ||
			got.Tier != want.Tier || got.Path != want.Path || got.Mode != want.Mode || got.Status != want.Status ||
			got.HasFrom != want.HasFrom || got.HasTo != want.HasTo || got.CostsKnown != want.CostsKnown ||
			got.Latency != want.Latency || got.AlgebraVersion != want.AlgebraVersion || got.Gross != nil || len(head.Reasons) != 0 {
			t.Errorf("%s: front %+v, want %+v", r.Hash.Hex(), got, *want)
		}
		// The front ends with the counts: every shorter value is an error.
		front := len(r.Parts().Pre)
		for n := 0; n < front; n++ {
			if err := DecodeFrontInto(head, r.Loc, v[:n]); !errors.Is(err, ErrBadRecord) {
				t.Errorf("%s cut to %d of its front's %d bytes: %v", r.Hash.Hex(), n, front, err)
			}
		}
		if err := DecodeFrontInto(head, r.Loc, v[:front]); err != nil {
			t.Errorf("%s cut after its front: %v", r.Hash.Hex(), err)
		}
	}
	v := td.encode(recs[0])
	at := 2 + 6 + 32 // versions, latency 1<<40 (6 bytes), hash: the flags
	for _, c := range []struct {
		name string
		at   int
		b    byte
	}{{"version", 0, RecordVersion + 1}, {"flags", at, 0xff}, {"verdict", at + 2, 0xff}, {"mode", at + 5, 0xff}} {
		bad := append([]byte(nil), v...)
		bad[c.at] = c.b
		if err := DecodeFrontInto(head, recs[0].Loc, bad); !errors.Is(err, ErrBadRecord) {
			t.Errorf("a bad %s: %v", c.name, err)
		}
	}
}

// TestRowDecoder: RowDecoder.Row into a record that held another row
// (more amounts, more reasons, a net balance) gives what DecodeInto gives
// at DepthRow into a fresh record, field for field (a list empty rather
// than absent aside), and allocates nothing once its arrays have grown;
// RowDecoder.Front over a record only fronts have filled gives what
// DecodeFrontInto gives, with the same errors for a cut or bad front.
func TestRowDecoder(t *testing.T) {
	td := &testDict{}
	names := td.names
	weth, dai := normalform.FungibleToken(normalform.Address{0xc0}), normalform.FungibleToken(normalform.Address{0xda})
	amt := func(tok normalform.Token, v uint64, neg bool) Amount {
		return Amount{Token: tok, Amount: normalform.Signed{Abs: *uint256.NewInt(v), Neg: neg}}
	}
	big := &Record{Hash: normalform.Hash{1}, Loc: Loc{Block: 7, Index: 3}, From: normalform.Address{2}, HasFrom: true, To: normalform.Address{3}, HasTo: true,
		Recipient: normalform.Address{3}, Verdict: normalform.Verdict(1), Tier: normalform.Tier(1), Path: normalform.Path(1),
		Reasons: []normalform.Reason{normalform.ReasonLeftovers, normalform.ReasonNoCycles}, CostsKnown: true, GasUsed: 21000, Costs: *uint256.NewInt(5),
		Gross:  []Amount{amt(weth, 1e18, false), amt(dai, 7, true), amt(normalform.NativeToken, 9, false)},
		Net:    []Amount{amt(normalform.NativeToken, 3, true), amt(dai, 7, true)},
		Counts: normalform.Counts{Cycles: 2, Pools: 3, Hops: 4}, Latency: 1 << 20, AlgebraVersion: 9}
	small := &Record{Hash: normalform.Hash{2}, Loc: Loc{Block: 7, Index: 4}, From: normalform.Address{4}, HasFrom: true, To: normalform.Address{5}, HasTo: true,
		Recipient: normalform.Address{6}, Gross: []Amount{amt(dai, 1, false)}, Counts: normalform.Counts{Hops: 1}}
	unknown := &Record{Hash: normalform.Hash{9, 9}, Loc: Loc{Block: UnknownBlock, Index: UnknownIndex, Tx: normalform.Hash{9, 9}}, From: normalform.Address{4},
		Recipient: normalform.Address{5}, HasFrom: true}
	norm := func(r Record) Record { // a list empty or absent is the same row
		if len(r.Reasons) == 0 {
			r.Reasons = nil
		}
		if len(r.Gross) == 0 {
			r.Gross = nil
		}
		if len(r.Net) == 0 {
			r.Net = nil
		}
		return r
	}
	// A row decode (Row) leaves what a row does not show unresolved: the
	// dictionary's hashes and From.
	asRow := func(r Record) Record {
		r = norm(r)
		r.Hashes.Shape, r.Hashes.Tokens, r.Hashes.Family, r.From = normalform.Hash{}, normalform.Hash{}, normalform.Hash{}, normalform.Address{}
		return r
	}
	var dec RowDecoder
	lent := &Record{}
	for _, r := range []*Record{big, small, big, unknown, small, big} {
		v := td.encode(r)
		want, _, err := DecodeInto(&Record{}, r.Loc, v, names, DepthRow)
		if err != nil {
			t.Fatal(err)
		}
		got, err := dec.Row(lent, r.Loc, v, names)
		if err != nil || got != lent {
			t.Fatalf("%s: Row: %p, %v (want the record given)", r.Hash.Hex(), got, err)
		}
		if g, w := norm(*got), asRow(*want); !reflect.DeepEqual(g, w) {
			t.Errorf("%s: Row\n %+v\nwant\n %+v", r.Hash.Hex(), g, w)
		}
		front := &Record{}
		if err := dec.Front(front, r.Loc, v); err != nil {
			t.Fatal(err)
		}
		wantFront := &Record{}
		if err := DecodeFrontInto(wantFront, r.Loc, v); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(norm(*front), norm(*wantFront)) {
			t.Errorf("%s: Front %+v, want %+v", r.Hash.Hex(), *front, *wantFront)
		}
		// a Row of the value Front has just read takes its front from
		// Front's record: the same row, into another record or into it
		for _, into := range []*Record{lent, front} {
			if err := dec.Front(front, r.Loc, v); err != nil {
				t.Fatal(err)
			}
			got, err := dec.Row(into, r.Loc, v, names)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := norm(*got), asRow(*want); !reflect.DeepEqual(g, w) {
				t.Errorf("%s: Row after Front\n %+v\nwant\n %+v", r.Hash.Hex(), g, w)
			}
		}
	}
	// The same bytes at another position (a buffer reused for another
	// record's value) are read again, not taken from the last front.
	{
		v := td.encode(big)
		if err := dec.Front(&Record{}, big.Loc, v); err != nil {
			t.Fatal(err)
		}
		moved := *big
		moved.Loc.Index++
		want, _, err := DecodeInto(&Record{}, moved.Loc, v, names, DepthRow)
		if err != nil {
			t.Fatal(err)
		}
		got, err := dec.Row(lent, moved.Loc, v, names)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := norm(*got), norm(*want); !reflect.DeepEqual(g.Loc, w.Loc) || g.Loc != moved.Loc.normal() {
			t.Errorf("Row at another position after Front: Loc %v, want %v", g.Loc, w.Loc)
		}
	}
	// A front decoded over another record's front keeps nothing of it.
	front := &Record{}
	for _, r := range []*Record{big, unknown, small} {
		v := td.encode(r)
		if err := dec.Front(front, r.Loc, v); err != nil {
			t.Fatal(err)
		}
		want := &Record{}
		if err := DecodeFrontInto(want, r.Loc, v); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(norm(*front), norm(*want)) {
			t.Errorf("%s: Front after another: %+v, want %+v", r.Hash.Hex(), *front, *want)
		}
		for n := range 40 { // cut fronts: the same errors
			_, e1 := dec.Front(&Record{}, r.Loc, v[:n]), DecodeFrontInto(&Record{}, r.Loc, v[:n])
			if e2 := dec.Front(&Record{}, r.Loc, v[:n]); e2 == nil || e1 == nil || e2.Error() != e1.Error() {
				t.Errorf("%s cut to %d: Front %v, DecodeFrontInto %v", r.Hash.Hex(), n, e2, e1)
			}
		}
	}
	// Rows decoded into several records in turn (as a scan's chunk holds
	// them until they are read), the records reused over and over: each
	// keeps its own, none shares an array with another.
	other := *big // costs known, another net
	other.Hash, other.Net = normalform.Hash{3}, []Amount{amt(weth, 11, false)}
	rounds := [][]*Record{{big, small, small}, {big, unknown, &other}, {small, big, big}, {&other, small, big}, {unknown, unknown, unknown}, {big, &other, small}}
	slots := make([]Record, 3)
	for round, recs := range rounds {
		for i, r := range recs {
			if _, err := dec.Row(&slots[i], r.Loc, td.encode(r), names); err != nil {
				t.Fatal(err)
			}
		}
		for i, r := range recs {
			want, _, _ := DecodeInto(&Record{}, r.Loc, td.encode(r), names, DepthRow)
			if g, w := norm(slots[i]), asRow(*want); !reflect.DeepEqual(g, w) {
				t.Errorf("round %d, slot %d (%s):\n %+v\nwant\n %+v", round, i, r.Hash.Hex(), g, w)
			}
		}
	}
	vb, vs := td.encode(big), td.encode(small)
	if n := testing.AllocsPerRun(100, func() {
		if _, err := dec.Row(lent, big.Loc, vb, names); err != nil {
			t.Fatal(err)
		}
		if _, err := dec.Row(lent, small.Loc, vs, names); err != nil {
			t.Fatal(err)
		}
		if err := dec.Front(front, big.Loc, vb); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Row and Front: %.1f allocations, want none once grown", n)
	}
}

// TestRowDecoderMemo: a RowDecoder keeps the addresses it resolved by
// their ids (direct mapped: ids 1,024 apart share an entry); over 3,000
// records of distinct bots and tokens, read in one order and then in
// another (every entry taken over by other ids, then met again), each
// row's addresses are its own.
func TestRowDecoderMemo(t *testing.T) {
	td := &testDict{}
	var recs []*Record
	var vals [][]byte
	for i := range 3000 {
		a := func(k byte) normalform.Address { return normalform.Address{k, byte(i >> 8), byte(i)} }
		tok := normalform.FungibleToken(a(0xc0))
		r := &Record{Hash: normalform.Hash{byte(i >> 8), byte(i)}, Loc: Loc{Block: uint64(i), Index: 0}, From: a(1), HasFrom: true,
			To: a(2), HasTo: true, Recipient: a(3),
			Gross: []Amount{{Token: tok, Amount: normalform.Signed{Abs: *uint256.NewInt(uint64(i))}}}}
		recs, vals = append(recs, r), append(vals, td.encode(r))
	}
	var dec RowDecoder
	rec := &Record{}
	for _, order := range [][]int{{0, 1}, {1, -1}} { // forwards, then from the end
		for k := range recs {
			i := k
			if order[0] == 1 {
				i = len(recs) - 1 - k
			}
			if k%2 == 1 && order[1] == -1 {
				i = (i * 7) % len(recs)
			}
			got, err := dec.Row(rec, recs[i].Loc, vals[i], td.names)
			if err != nil {
				t.Fatal(err)
			}
			r := recs[i]
			if got.To != r.To || got.Recipient != r.Recipient || len(got.Gross) != 1 || got.Gross[0].Token != r.Gross[0].Token {
				t.Fatalf("record %d: to %x recipient %x gross %+v, want %x %x %+v", i, got.To, got.Recipient, got.Gross, r.To, r.Recipient, r.Gross)
			}
		}
	}
}
