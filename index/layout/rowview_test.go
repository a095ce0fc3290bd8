package layout

import (
	"errors"
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
	names := func(l normalform.Level, id uint32) (normalform.Hash, bool) {
		return normalform.Hash{byte(l), byte(id)}, true
	}
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
		v := r.Encode(IDs{0, 1, 2, 3})
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
		front := len(v) - len(r.Parts().Post) - 3 // three one-byte ids
		for n := 0; n < front; n++ {
			if err := DecodeFrontInto(head, r.Loc, v[:n]); !errors.Is(err, ErrBadRecord) {
				t.Errorf("%s cut to %d of its front's %d bytes: %v", r.Hash.Hex(), n, front, err)
			}
		}
		if err := DecodeFrontInto(head, r.Loc, v[:front]); err != nil {
			t.Errorf("%s cut after its front: %v", r.Hash.Hex(), err)
		}
	}
	v := recs[0].Encode(IDs{0, 1, 2, 3})
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
