package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flowq/flowq/normalform"
)

// The index's own bytes are outside bytes too: a disk can hand back
// anything. These fuzz targets feed the record, key, failure and marker
// decoders arbitrary bytes, seeded with the encodings of every corpus
// transaction. None may panic; whatever decodes must re-encode to bytes
// that decode to the same value, and its secondary keys must parse.
//
//	go test ./index -run '^$' -fuzz FuzzDecodeRecord -fuzztime 60s

// FuzzDecodeRecord also decodes each input's header alone (the scans'
// decoder), which must agree with the whole record's.
func FuzzDecodeRecord(f *testing.F) {
	td := newTestDict()
	for i, a := range analyseCorpus(f) {
		if i%3 != 0 { // a third of the corpus: 50 records of every shape
			continue
		}
		rec, err := NewRecord(a, time.Duration(i)*time.Millisecond)
		if err != nil {
			f.Fatal(err)
		}
		enc := td.enc(rec)
		f.Add(rec.Loc.Bytes(), enc)
		f.Add(rec.Loc.Bytes(), enc[:len(enc)/2])
	}
	f.Add(make([]byte, 8), []byte{RecordVersion})
	f.Fuzz(func(t *testing.T, loc, b []byte) {
		l, err := ParseKey(append([]byte{byte(KindTx)}, loc...))
		if err != nil {
			return
		}
		head, herr := decodeRecord(l.Loc, b, td.resolve, depthAddrs)
		rec, err := DecodeRecord(l.Loc, b, td.resolve)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("error without a message")
			}
			return
		}
		if herr != nil || head.Hash != rec.Hash || head.Counts != rec.Counts || head.Hashes != rec.Hashes ||
			head.Recipient != rec.Recipient || head.Verdict != rec.Verdict || !reflect.DeepEqual(head.Reasons, rec.Reasons) {
			t.Fatalf("the header (%v) disagrees with the record:\n%+v\n%+v", herr, head, rec)
		}
		_, id, _ := decodeRecordIDs(l.Loc, b, td.resolve, depthFull)
		enc := rec.Encode(id, td.addrs(rec))
		again, err := DecodeRecord(l.Loc, enc, td.resolve)
		if err != nil {
			t.Fatalf("a decoded record re-encodes to bytes that do not decode: %v", err)
		}
		if !reflect.DeepEqual(again, rec) {
			t.Fatalf("re-encoding changes the record:\n%+v\n%+v", rec, again)
		}
		for _, x := range keysOf(rec, nil, enc, id) {
			k, err := ParseKey(x.K)
			if err != nil {
				t.Fatalf("a record's key %x does not parse: %v", x.K, err)
			}
			if !bytes.Equal(k.Bytes(), x.K) {
				t.Fatalf("key %x parses and re-encodes to %x", x.K, k.Bytes())
			}
		}
	})
}

func FuzzParseKey(f *testing.F) {
	for i, a := range analyseCorpus(f) {
		if i%10 != 0 {
			continue
		}
		rec, err := NewRecord(a, 0)
		if err != nil {
			f.Fatal(err)
		}
		id := ids{0, 1, 2, 3}
		for _, x := range keysOf(rec, nil, rec.Encode(id, make([]uint32, len(rec.DictAddrs(nil)))), id) {
			f.Add(x.K)
		}
		f.Add(AddrDictKey(rec.Recipient).Bytes())
		f.Add(TxHashKey(rec.Hash).Bytes())
		f.Add(DictKey(normalform.Shape, rec.Hashes.Shape).Bytes())
	}
	f.Add(NameKey(7).Bytes())
	f.Add(NextKey().Bytes())
	f.Add(SchemaKey().Bytes())
	f.Add(InputKey(SourceOf("x")).Bytes())
	f.Add(FailureKey(SourceOf("x"), 3).Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := ParseKey(b)
		if err != nil {
			return
		}
		if got := k.Bytes(); !bytes.Equal(got, b) {
			t.Fatalf("key %x parses to %+v, which encodes to %x", b, k, got)
		}
	})
}

func FuzzDecodeMarkers(f *testing.F) {
	f.Add(Failure{Source: "/data/block-1.json", Stage: StageDecode, Tx: normalform.Hash{1}, HasTx: true, Msg: "at $.traces (byte 7): bad"}.encode(), true)
	f.Add(Failure{Source: "rpc:block:9", Stage: StageRead, Msg: "timeout"}.encode(), true)
	f.Add(InputMark{Name: "/data/block-1.json", Content: [32]byte{9}, Schema: SchemaVersion, Algebra: normalform.AlgebraVersion, Txs: 300, Failures: 2}.encode(), false)
	f.Fuzz(func(t *testing.T, b []byte, failure bool) {
		if failure {
			fl, err := decodeFailure(Key{Kind: KindFailure, Seq: 1}, b)
			if err == nil && !bytes.Equal(fl.encode(), b) {
				t.Fatalf("failure %x decodes to %+v, which encodes to %x", b, fl, fl.encode())
			}
			return
		}
		m, err := decodeInputMark(b)
		if err == nil && !bytes.Equal(m.encode(), b) {
			t.Fatalf("marker %x decodes to %+v, which encodes to %x", b, m, m.encode())
		}
	})
}

// FuzzDecodeValues feeds the decoders of the small values of schema 3
// arbitrary bytes: a txhash key's positions, a dictionary id and name,
// a first-seen value. None may panic; whatever decodes re-encodes to the
// same bytes.
func FuzzDecodeValues(f *testing.F) {
	known, unknown := Loc{Block: 11017338, Index: 7}, Loc{Block: 9, Index: UnknownIndex, Tx: normalform.Hash{3}}
	f.Add(append(known.Bytes(), unknown.Bytes()...), uint8(0))
	f.Add(known.Bytes()[:5], uint8(0))
	f.Add([]byte{0, 0, 0, 7}, uint8(1))
	f.Add(nameValue(dictName{normalform.Family, normalform.Hash{1}}), uint8(2))
	f.Add(firstValue(unknown), uint8(3))
	f.Add(firstValue(known), uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, which uint8) {
		var again []byte
		switch which % 4 {
		case 0:
			locs, err := parseLocs(b)
			if err != nil {
				return
			}
			for _, l := range locs {
				again = l.Append(again)
			}
		case 1:
			id, err := parseID(b)
			if err != nil {
				return
			}
			again = binary.BigEndian.AppendUint32(nil, id)
		case 2:
			n, err := parseNameValue(b)
			if err != nil {
				return
			}
			again = nameValue(n)
		case 3:
			l, err := parseFirstLoc(b)
			if err != nil {
				return
			}
			again = firstValue(l)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("value %x (kind %d) decodes and re-encodes to %x", b, which%4, again)
		}
	})
}

// FuzzParsePosting: a posting value (schema 12, layout/posting.go) of
// any bytes under a key of each posting kind parses to increasing
// indexes at most MaxIndex that re-encode to the same bytes (one set,
// one encoding), or fails with an error naming the key's kind and
// block; never a panic.
func FuzzParsePosting(f *testing.F) {
	l := Loc{Block: 11017338, Index: 5}
	keys := [][]byte{
		HashKey(normalform.Exact, Short(h(2)), 0, l).Bytes(), HashKey(normalform.Family, Tag{}, 7, l).Bytes(),
		BotKey(ad(1), 3, l).Bytes(), VerdictKey(normalform.VerdictArbitrage, normalform.TierConfirmed, l).Bytes(),
		ProfitKey(Gross, normalform.FungibleToken(ad(5)), signed(true, "5"), l).Bytes(), AddrKey(ad(2), l).Bytes(), TokenKey(normalform.NativeToken, l).Bytes(),
	}
	for i := range keys {
		pk, _, ok := layoutSplitPosting(keys[i])
		if !ok {
			f.Fatalf("key %x is not a posting's", keys[i])
		}
		keys[i] = pk
	}
	for _, v := range [][]byte{{0}, {0, 1, 1}, {5, 0x80, 0x01}, {0xfe, 0xff, 0xff, 0x07}, {}, {0x80}, {0x85, 0x00}, {1, 0}} {
		f.Add(uint8(0), v)
	}
	f.Fuzz(func(t *testing.T, which uint8, v []byte) {
		k := keys[int(which)%len(keys)]
		idx, err := ParsePostingValue(k, v)
		if err != nil {
			want := fmt.Sprintf("%s posting", Kind(k[0]))
			if !errors.Is(err, ErrBadPosting) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "at block 11017338") {
				t.Fatalf("%x: %v: not naming %q and its block", v, err, want)
			}
			return
		}
		for i, x := range idx {
			if x > MaxIndex || i > 0 && x <= idx[i-1] {
				t.Fatalf("%x parsed to %v: not increasing, or past MaxIndex", v, idx)
			}
		}
		if again := AppendPostingValue(nil, idx); !bytes.Equal(again, v) {
			t.Fatalf("%x parsed to %v, which encodes to %x", v, idx, again)
		}
	})
}
