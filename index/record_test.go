package index

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/holiman/uint256"
	"github.com/zeebo/xxh3"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// testDict is a dictionary of structural hashes for records that no index
// wrote: assign gives a record's hashes ids, names resolves them.
type testDict struct {
	ids   map[dictName]uint32
	names map[uint32]dictName
}

func newTestDict() *testDict {
	return &testDict{ids: map[dictName]uint32{}, names: map[uint32]dictName{}}
}

func (d *testDict) assign(r *Record) ids {
	var out ids
	for l := normalform.Shape; l <= normalform.Family; l++ {
		n := dictName{l, r.Hashes.Of(l)}
		id, ok := d.ids[n]
		if !ok {
			id = uint32(len(d.ids) + 1)
			d.ids[n], d.names[id] = id, n
		}
		out[l] = id
	}
	return out
}

// addrs gives a record's dictionary addresses (layout.Record.DictAddrs)
// ids, in order.
func (d *testDict) addrs(r *Record) []uint32 {
	var out []uint32
	for _, a := range r.DictAddrs(nil) {
		n := dictName{layout.LevelAddr, layout.AddrName(a)}
		id, ok := d.ids[n]
		if !ok {
			id = uint32(len(d.ids) + 1)
			d.ids[n], d.names[id] = id, n
		}
		out = append(out, id)
	}
	return out
}

// enc is a record's encoding with ids from d.
func (d *testDict) enc(r *Record) []byte { return r.Encode(d.assign(r), d.addrs(r)) }

func (d *testDict) resolve(l normalform.Level, id uint32) (normalform.Hash, bool) {
	n, ok := d.names[id]
	return n.h, ok && n.level == l
}

// TestRecordRoundTrip: every corpus record decodes to itself, and encodes
// deterministically; latency is outside the compared content.
func TestRecordRoundTrip(t *testing.T) {
	td := newTestDict()
	for _, a := range analyseCorpus(t) {
		rec, err := NewRecord(a, 1234*time.Microsecond)
		if err != nil {
			t.Fatal(err)
		}
		enc := td.enc(rec)
		got, err := DecodeRecord(rec.Loc, enc, td.resolve)
		if err != nil {
			t.Fatalf("tx %s: %v", rec.Hash.Hex(), err)
		}
		if got.NF != nil {
			t.Fatalf("tx %s: a record's value gave its NF, which is under its own key", rec.Hash.Hex())
		}
		if err := got.SetNF(rec.NFValue()); err != nil {
			t.Fatalf("tx %s: its NF value: %v", rec.Hash.Hex(), err)
		}
		if !reflect.DeepEqual(got, rec) {
			t.Fatalf("tx %s: decoded\n%+v\nwant\n%+v", rec.Hash.Hex(), got, rec)
		}
		// What a row shows: all but the addresses, tokens and NF.
		row, err := decodeRecord(rec.Loc, enc, td.resolve, depthRow)
		if err != nil {
			t.Fatalf("tx %s: row: %v", rec.Hash.Hex(), err)
		}
		wantRow := *rec
		wantRow.Addresses, wantRow.Tokens, wantRow.NF, wantRow.Partial = nil, nil, nil, true
		if !reflect.DeepEqual(row, &wantRow) {
			t.Fatalf("tx %s: row\n%+v\nwant\n%+v", rec.Hash.Hex(), row, &wantRow)
		}
		// The header alone, and with the principals.
		for _, d := range []depth{depthHeader, depthAddrs} {
			p, err := decodeRecord(rec.Loc, enc, td.resolve, d)
			if err != nil {
				t.Fatalf("tx %s: header: %v", rec.Hash.Hex(), err)
			}
			want := &Record{Hash: rec.Hash, Loc: rec.Loc, Status: rec.Status, Verdict: rec.Verdict, Tier: rec.Tier, Path: rec.Path, Mode: rec.Mode,
				Reasons: rec.Reasons, Counts: rec.Counts, Hashes: rec.Hashes, CostsKnown: rec.CostsKnown, HasFrom: rec.HasFrom,
				HasTo: rec.HasTo, AlgebraVersion: rec.AlgebraVersion, Latency: rec.Latency, Partial: true}
			if d == depthAddrs {
				want.From, want.To, want.Recipient, want.NFSum = rec.From, rec.To, rec.Recipient, rec.NFSum
			}
			if !reflect.DeepEqual(p, want) {
				t.Fatalf("tx %s: header at depth %d\n%+v\nwant\n%+v", rec.Hash.Hex(), d, p, want)
			}
		}
		again, _ := NewRecord(a, time.Second)
		if !sameContent(enc, td.enc(again)) || bytes.Equal(enc, td.enc(again)) {
			t.Errorf("tx %s: records of one analysis with other latencies", rec.Hash.Hex())
		}
	}
}

// TestRecordEdgeCases: unknown positions, creations, literal reasons,
// NFTs, net balances and extreme amounts survive the encoding.
func TestRecordEdgeCases(t *testing.T) {
	nft := normalform.Token{Kind: normalform.Multi1155, Addr: ad(3), ID: *new(uint256.Int).SetAllOne()}
	recs := []*Record{
		{Hash: h(1), Loc: Loc{Block: UnknownBlock, Index: UnknownIndex, Tx: h(1)}, From: ad(1), Recipient: ad(2)},
		{Hash: h(2), Loc: Loc{Block: 7, Index: UnknownIndex, Tx: h(2)}, From: ad(1), HasFrom: true, To: ad(2), HasTo: true, Recipient: ad(2),
			Verdict: normalform.VerdictArbitrage, Tier: normalform.TierConfirmed, Status: normalform.StatusSuccess, Mode: normalform.ModeReceipts,
			Reasons: []normalform.Reason{normalform.ReasonBuilder, normalform.ReasonReceiptsOnly, "some_future_reason"},
			Gross:   []Amount{{Token: nft, Amount: signed(true, maxU256)}, {Token: normalform.NativeToken, Amount: signed(false, "1")}},
			Net:     []Amount{{Token: normalform.NativeToken, Amount: signed(true, "3")}}, CostsKnown: true, GasUsed: 21000,
			Costs:  *uint256.NewInt(1 << 60),
			Counts: normalform.Counts{Cycles: 2, Pools: 5, Hops: 9, Leftovers: 1}, Hashes: normalform.Hashes{Exact: h(3), Shape: h(4), Tokens: h(5), Family: h(6)},
			AlgebraVersion: 1, Addresses: []normalform.Address{ad(1), ad(2)}, Tokens: []normalform.Token{nft}, NF: []byte{1, 2, 3}, Latency: time.Hour},
		{Hash: h(3), Loc: Loc{Block: 0, Index: 0}, HasTo: true, To: ad(5), Recipient: ad(6), Gross: []Amount{}},
	}
	td := newTestDict()
	for _, rec := range recs {
		if rec.Gross == nil {
			rec.Gross = []Amount{}
		}
		got, err := DecodeRecord(rec.Loc, td.enc(rec), td.resolve)
		if err != nil {
			t.Fatalf("%x: %v", rec.Hash[:2], err)
		}
		if rec.NF != nil {
			rec.NFSum = xxh3.Hash(rec.NF)
			if err := got.SetNF(rec.NFValue()); err != nil {
				t.Fatalf("%x: %v", rec.Hash[:2], err)
			}
		}
		if !reflect.DeepEqual(got, rec) {
			t.Errorf("decoded\n%+v\nwant\n%+v", got, rec)
		}
	}
}

// TestRecordCorrupt: truncated or damaged values fail, never panic.
func TestRecordCorrupt(t *testing.T) {
	as := analyseCorpus(t)
	r := rand.New(rand.NewPCG(5, 6))
	td := newTestDict()
	for _, a := range as[:40] {
		rec, _ := NewRecord(a, time.Millisecond)
		enc := td.enc(rec)
		for i := 0; i < len(enc); i += 1 + len(enc)/50 {
			if _, err := DecodeRecord(rec.Loc, enc[:i], td.resolve); err == nil {
				t.Fatalf("tx %s: truncated at %d of %d decoded", rec.Hash.Hex(), i, len(enc))
			}
		}
		if _, err := DecodeRecord(rec.Loc, append(enc, 0), td.resolve); err == nil {
			t.Errorf("tx %s: a trailing byte decoded", rec.Hash.Hex())
		}
		for range 50 {
			b := append([]byte(nil), enc...)
			b[r.IntN(len(b))] ^= byte(1 + r.IntN(255))
			DecodeRecord(rec.Loc, b, td.resolve) // must not panic
			decodeRecord(rec.Loc, b, td.resolve, depthAddrs)
		}
		other := td.assign(rec)
		other[normalform.Family] = 999
		if _, err := DecodeRecord(rec.Loc, rec.Encode(other, td.addrs(rec)), td.resolve); err == nil {
			t.Errorf("tx %s: a record naming an id the dictionary does not have decoded", rec.Hash.Hex())
		}
		aid := td.addrs(rec)
		aid[len(aid)-1] = 99999
		for _, d := range []depth{depthAddrs, depthRow, depthFull} {
			if _, err := decodeRecord(rec.Loc, rec.Encode(td.assign(rec), aid), td.resolve, d); err == nil ||
				!strings.Contains(err.Error(), "address id 99999 is not in the dictionary") || !strings.Contains(err.Error(), rec.Hash.Hex()) {
				t.Errorf("tx %s: a record naming an address id the dictionary does not have, to depth %d: %v", rec.Hash.Hex(), d, err)
			}
		}
	}
	if _, err := DecodeRecord(Loc{}, []byte{9}, td.resolve); err == nil {
		t.Error("record version 9 decoded")
	}
}

// TestRecordSharesNF: a record writes each address and its hash once,
// and holds no NF; its NF value (the NF key's) leaves out the NF's copy
// of the transaction hash and of the record's addresses and tokens, and gives the NF back only to its own record;
// a record whose key's unknown position names another hash does not
// decode.
func TestRecordSharesNF(t *testing.T) {
	n := 0
	var prevNF []byte
	td := newTestDict()
	for _, a := range analyseCorpus(t) {
		rec, err := NewRecord(a, time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		enc := td.enc(rec)
		if c := bytes.Count(enc, rec.Hash[:]); c != 1 {
			t.Fatalf("tx %s: the record holds its hash %d times", rec.Hash.Hex(), c)
		}
		dict := rec.DictAddrs(nil)
		for _, ad := range rec.Addresses {
			want := 1 // a dictionary address by its id alone (schema 13)
			if slices.Contains(dict, ad) {
				want = 0
			}
			if c := bytes.Count(enc, ad[:]); c != want {
				t.Fatalf("tx %s: address %x written %d times, want %d", rec.Hash.Hex(), ad, c, want)
			}
		}
		if len(enc) >= len(rec.NF) {
			t.Fatalf("tx %s: the record's value is %d bytes, its NF %d: is the NF in it?", rec.Hash.Hex(), len(enc), len(rec.NF))
		}
		nfv := rec.NFValue()
		if c := bytes.Count(nfv, rec.Hash[:]); c != 0 {
			t.Fatalf("tx %s: the NF value holds the hash %d times", rec.Hash.Hex(), c)
		}
		// Nothing twice (schema 10): the NF value leaves out its balances
		// when they are the record's gross and net (form bit 4)...
		if nfv[0]&4 == 0 && rec.CostsKnown == (a.Net != nil) {
			t.Fatalf("tx %s: the NF value writes out the balances the record holds (form %d)", rec.Hash.Hex(), nfv[0])
		}
		// ... and refers to the record's
		// addresses and its tokens' contracts, never writes them out.
		for _, ad := range rec.Addresses {
			if c := bytes.Count(nfv, ad[:]); c != 0 {
				t.Fatalf("tx %s: the NF value writes out the record's address %x (%d times)", rec.Hash.Hex(), ad, c)
			}
		}
		for _, tok := range rec.Tokens {
			if c := bytes.Count(nfv, tok.Addr[:]); c != 0 {
				t.Fatalf("tx %s: the NF value writes out the record's token contract %x (%d times)", rec.Hash.Hex(), tok.Addr, c)
			}
		}
		got, err := DecodeRecord(rec.Loc, enc, td.resolve)
		if err == nil {
			err = got.SetNF(nfv)
		}
		if err != nil || !bytes.Equal(got.NF, rec.NF) {
			t.Fatalf("tx %s: NF does not come back: %v", rec.Hash.Hex(), err)
		}
		// A damaged NF value (cut short, a byte changed) is an error
		// naming the transaction, never a panic or another NF.
		if n%7 == 0 {
			for i := 0; i < len(nfv); i++ {
				for _, bad := range [][]byte{nfv[:i], append(append(append([]byte(nil), nfv[:i]...), nfv[i]^0x5a), nfv[i+1:]...)} {
					dam, _ := DecodeRecord(rec.Loc, enc, td.resolve)
					if err := dam.SetNF(bad); err == nil || !strings.Contains(err.Error(), rec.Hash.Hex()) {
						t.Fatalf("tx %s: NF value damaged at byte %d of %d: %v", rec.Hash.Hex(), i, len(nfv), err)
					}
				}
			}
		}
		// Another transaction's NF is refused.
		if n > 0 {
			other, _ := DecodeRecord(rec.Loc, enc, td.resolve)
			if err := other.SetNF(prevNF); !errors.Is(err, layout.ErrNFMismatch) && !errors.Is(err, ErrBadRecord) {
				t.Fatalf("tx %s: another record's NF value was taken: %v", rec.Hash.Hex(), err)
			}
		}
		prevNF = nfv
		n++
	}
	if n < 100 {
		t.Fatalf("only %d corpus records", n)
	}
	rec := &Record{Hash: h(1), Loc: Loc{Block: 5, Index: UnknownIndex, Tx: h(1)}, HasFrom: true, From: ad(1), Recipient: ad(1), Gross: []Amount{}}
	if _, err := DecodeRecord(Loc{Block: 5, Index: UnknownIndex, Tx: h(2)}, td.enc(rec), td.resolve); err == nil {
		t.Errorf("a record under another transaction's unknown position decodes")
	}
}
