package index

import (
	"bytes"
	"reflect"
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

func FuzzDecodeRecord(f *testing.F) {
	for i, a := range analyseCorpus(f) {
		if i%3 != 0 { // a third of the corpus: 50 records of every shape
			continue
		}
		rec, err := NewRecord(a, time.Duration(i)*time.Millisecond)
		if err != nil {
			f.Fatal(err)
		}
		enc := rec.Encode()
		f.Add(rec.Hash[:], enc)
		f.Add(rec.Hash[:], enc[:len(enc)/2])
	}
	f.Add(make([]byte, 32), []byte{RecordVersion})
	f.Fuzz(func(t *testing.T, hash, b []byte) {
		var h normalform.Hash
		copy(h[:], hash)
		rec, err := DecodeRecord(h, b)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("error without a message")
			}
			return
		}
		enc := rec.Encode()
		again, err := DecodeRecord(h, enc)
		if err != nil {
			t.Fatalf("a decoded record re-encodes to bytes that do not decode: %v", err)
		}
		if !reflect.DeepEqual(again, rec) {
			t.Fatalf("re-encoding changes the record:\n%+v\n%+v", rec, again)
		}
		for _, x := range rec.keys(enc) {
			k, err := ParseKey(x.k)
			if err != nil {
				t.Fatalf("a record's key %x does not parse: %v", x.k, err)
			}
			if !bytes.Equal(k.Bytes(), x.k) {
				t.Fatalf("key %x parses and re-encodes to %x", x.k, k.Bytes())
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
		for _, x := range rec.keys(rec.Encode()) {
			f.Add(x.k)
		}
	}
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
