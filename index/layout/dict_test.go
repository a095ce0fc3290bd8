package layout

import (
	"slices"
	"strings"
	"testing"

	"github.com/holiman/uint256"

	"github.com/flowq/flowq/normalform"
)

// testDict is a dictionary for records no index wrote: ids 1, 2 and 3
// name a shape, tokens and family hash of their own, and addresses get
// ids from 100 on as encode meets them.
type testDict struct{ addrs []normalform.Address }

// encode is r's value, its hashes' ids 1, 2, 3 and its dictionary
// addresses' ids from d.
func (d *testDict) encode(r *Record) []byte {
	var aid []uint32
	for _, a := range r.DictAddrs(nil) {
		i := slices.Index(d.addrs, a)
		if i < 0 {
			i = len(d.addrs)
			d.addrs = append(d.addrs, a)
		}
		aid = append(aid, uint32(100+i))
	}
	return r.Encode(IDs{0, 1, 2, 3}, aid)
}

func (d *testDict) names(l normalform.Level, id uint32) (normalform.Hash, bool) {
	if l == LevelAddr {
		if id < 100 || int(id-100) >= len(d.addrs) {
			return normalform.Hash{}, false
		}
		return AddrName(d.addrs[id-100]), true
	}
	if id < 1 || id > 3 || l != normalform.Level(id) {
		return normalform.Hash{}, false
	}
	return normalform.Hash{byte(l), byte(id)}, true
}

// TestDictAddrs: a record's principals and its tokens' contracts are
// named by dictionary ids, not written out (20 bytes fewer each, less
// the id), and decode back; an id the dictionary lacks, an address id
// repeated or ids that are not the record's dictionary addresses are
// errors, never a record with other addresses.
func TestDictAddrs(t *testing.T) {
	weth, dai := normalform.FungibleToken(normalform.Address{0xc0}), normalform.FungibleToken(normalform.Address{0xda})
	pool := normalform.Address{0x77}
	amt := func(tok normalform.Token, v uint64) Amount {
		return Amount{Token: tok, Amount: normalform.Signed{Abs: *uint256.NewInt(v)}}
	}
	r := &Record{Hash: normalform.Hash{1}, Loc: Loc{Block: 7, Index: 3}, From: normalform.Address{2}, HasFrom: true,
		To: normalform.Address{3}, HasTo: true, Recipient: normalform.Address{3}, CostsKnown: true,
		Gross: []Amount{amt(weth, 5), amt(dai, 7)}, Net: []Amount{amt(normalform.NativeToken, 4), amt(dai, 7)},
		Addresses: []normalform.Address{{2}, {3}, pool, {0xc0}}, Tokens: []normalform.Token{weth, dai}}
	want := []normalform.Address{{2}, {3}, {0xc0}, {0xda}, normalform.NativeToken.Addr}
	if got := r.DictAddrs(nil); !slices.Equal(got, want) {
		t.Fatalf("DictAddrs = %x, want %x", got, want)
	}
	d := &testDict{}
	v := d.encode(r)
	got, err := DecodeRecord(r.Loc, v, d.names)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Addresses, r.Addresses) || !slices.Equal(got.Tokens, r.Tokens) || got.From != r.From ||
		got.To != r.To || got.Recipient != r.Recipient || !slices.Equal(got.Gross, r.Gross) || !slices.Equal(got.Net, r.Net) {
		t.Fatalf("decoded %+v\nwant %+v", got, r)
	}
	// Written out, the five would take 21 bytes each where an id here
	// takes one; the pool alone is written out.
	e := r.Parts()
	if len(e.Dict) != 20*len(want) {
		t.Fatalf("Dict holds %d bytes, want %d", len(e.Dict), 20*len(want))
	}
	if n := countWritten(v, pool); n != 1 {
		t.Errorf("the pool is written out %d times, want 1", n)
	}
	for _, a := range want {
		if countWritten(v, a) != 0 {
			t.Errorf("dictionary address %x written out", a)
		}
	}
	d.addrs = append(d.addrs, normalform.Address{0x99}) // id 105: in the dictionary, not of the record
	d.addrs = append(d.addrs, d.addrs[0])               // id 106: a faulty dictionary's second id for id 100's address
	// from is the shallowest depth that must refuse each: the id list is
	// read from DepthAddrs on, and checked against the record's
	// addresses (sameDict) only by a whole decode.
	// rowErr is what RowDecoder.Row's error says, when it must refuse.
	const lacks = "address id 999 is not in the dictionary"
	bad := map[string]struct {
		aid    []uint32
		from   Depth
		rowErr string
	}{
		"an id the dictionary lacks":          {[]uint32{100, 101, 102, 103, 999}, DepthAddrs, lacks},
		"a bot the dictionary lacks":          {[]uint32{100, 999, 102, 103, 104}, DepthAddrs, lacks},
		"a token the dictionary lacks":        {[]uint32{100, 101, 102, 999, 104}, DepthAddrs, lacks},
		"an address twice":                    {[]uint32{100, 101, 102, 103, 103, 104}, DepthAddrs, "bad record encoding"},
		"an address the record does not name": {[]uint32{100, 101, 102, 103, 104, 105}, DepthFull, ""},
		"fewer ids than its addresses":        {[]uint32{100, 101, 102, 103}, DepthFull, ""},
		"two ids naming one address":          {[]uint32{100, 101, 102, 103, 104, 106}, DepthFull, ""},
	}
	for what, c := range bad {
		e := r.Parts()
		e.Dict = make([]byte, 20*len(c.aid)) // Join checks the count only
		v := e.Join(IDs{0, 1, 2, 3}, c.aid)
		for dp := c.from; dp <= DepthFull; dp++ {
			if _, err := DecodeAt(r.Loc, v, d.names, dp); err == nil {
				t.Errorf("%s: decoded at depth %d", what, dp)
			}
		}
		if c.from <= DepthRow {
			var s RowDecoder
			if _, err := s.Row(&Record{}, r.Loc, v, d.names); err == nil {
				t.Errorf("%s: decoded by RowDecoder.Row", what)
			} else if !strings.Contains(err.Error(), c.rowErr) {
				t.Errorf("%s: RowDecoder.Row: %v", what, err)
			}
		}
	}
	// A row does not show its sender, and a row's decode does not look
	// it up: a sender's id the dictionary lacks is refused by every other
	// decode, and leaves a row's From zero, the rest of the row as it is.
	e = r.Parts()
	v = e.Join(IDs{0, 1, 2, 3}, []uint32{999, 101, 102, 103, 104})
	for dp := DepthAddrs; dp <= DepthFull; dp++ {
		if _, err := DecodeAt(r.Loc, v, d.names, dp); err == nil {
			t.Errorf("a sender the dictionary lacks: decoded at depth %d", dp)
		}
	}
	var rd RowDecoder
	row, err := rd.Row(&Record{}, r.Loc, v, d.names)
	if err != nil {
		t.Fatalf("a sender the dictionary lacks: RowDecoder.Row: %v", err)
	}
	if row.From != (normalform.Address{}) || row.To != r.To || row.Recipient != r.Recipient || !slices.Equal(row.Gross, r.Gross) || !slices.Equal(row.Net, r.Net) {
		t.Errorf("a sender the dictionary lacks: row %+v", row)
	}
	// The same record with every id known: the row's addresses and
	// amounts, and neither From nor the hashes (the row shows neither).
	row, err = rd.Row(row, r.Loc, d.encode(r), d.names)
	if err != nil || row.From != (normalform.Address{}) || row.Hashes.Shape != (normalform.Hash{}) || row.To != r.To ||
		row.Recipient != r.Recipient || !slices.Equal(row.Gross, r.Gross) || !slices.Equal(row.Net, r.Net) {
		t.Errorf("RowDecoder.Row: %+v, %v", row, err)
	}
}

// countWritten counts the places v holds a's 20 bytes.
func countWritten(v []byte, a normalform.Address) int {
	n := 0
	for i := 0; i+20 <= len(v); i++ {
		if string(v[i:i+20]) == string(a[:]) {
			n++
		}
	}
	return n
}
