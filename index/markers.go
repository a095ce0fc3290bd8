package index

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"time"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// SourceOf is the SourceID of an input name.
func SourceOf(name string) SourceID {
	h := sha256.Sum256([]byte(name))
	var s SourceID
	copy(s[:], h[:])
	return s
}

// Stage says where an input or a transaction failed.
type Stage uint8

const (
	StageRead    Stage = 1 // the input could not be read
	StageDecode  Stage = 2 // trace.Decode reported an error
	StageAnalyze Stage = 3 // normalform.Analyze failed (or panicked)
	StageIndex   Stage = 4 // the analysis cannot be indexed (no hash, too large)
)

func (s Stage) String() string {
	switch s {
	case StageRead:
		return "read"
	case StageDecode:
		return "decode"
	case StageAnalyze:
		return "analyze"
	case StageIndex:
		return "index"
	}
	return fmt.Sprintf("stage(%d)", uint8(s))
}

// Failure is one recorded failure: an input that could not be read, a
// transaction or part of an input that did not decode, a transaction the
// engine could not analyse.
type Failure struct {
	Source string // the input's name
	Seq    uint32 // its rank among the input's failures
	Stage  Stage
	Tx     normalform.Hash
	HasTx  bool
	Msg    string
}

func (f Failure) String() string {
	s := f.Source + ": " + f.Stage.String()
	if f.HasTx && !strings.Contains(f.Msg, f.Tx.Hex()) {
		s += " tx " + f.Tx.Hex()
	}
	return s + ": " + f.Msg
}

// failure value: u8 version (1), u8 stage, u8 has tx, [hash tx], string
// source, string message (string: uvarint length and bytes).
func (f Failure) encode() []byte {
	b := []byte{1, byte(f.Stage), 0}
	if f.HasTx {
		b[2] = 1
		b = append(b, f.Tx[:]...)
	}
	b = layout.AppendBytes(b, []byte(f.Source))
	return layout.AppendBytes(b, []byte(f.Msg))
}

func decodeFailure(k Key, v []byte) (Failure, error) {
	r := layout.NewReader(v)
	f := Failure{Seq: k.Seq}
	if r.U8() != 1 {
		r.Fail()
	}
	f.Stage = Stage(r.U8())
	if f.HasTx = r.U8() == 1; f.HasTx {
		copy(f.Tx[:], r.Take(32))
	}
	f.Source = string(r.Take(r.Count(1)))
	f.Msg = string(r.Take(r.Count(1)))
	// Canonical bytes only (no overlong varint): one failure, one encoding.
	if r.Done() != nil || !bytes.Equal(f.encode(), v) {
		return f, fmt.Errorf("bad failure value %x", v)
	}
	return f, nil
}

// InputMark records that an input was ingested completely: a rerun skips
// an input whose name, content, versions and configuration match.
type InputMark struct {
	Name     string
	Content  [32]byte // the input's content hash (ingest: XXH3-128, zero-padded)
	Schema   uint32   // SchemaVersion
	Algebra  uint8    // normalform.AlgebraVersion
	Config   [8]byte  // ConfigFingerprint of the configuration used
	Txs      int      // transactions stored (or unchanged)
	Failures int      // failures recorded
}

// input marker value: u8 version (1), content hash, u32 schema, u8
// algebra, 8 bytes config fingerprint, uvarint txs, uvarint failures,
// string name.
func (m InputMark) encode() []byte {
	b := append([]byte{1}, m.Content[:]...)
	b = binary.BigEndian.AppendUint32(b, m.Schema)
	b = append(b, m.Algebra)
	b = append(b, m.Config[:]...)
	b = binary.AppendUvarint(b, uint64(m.Txs))
	b = binary.AppendUvarint(b, uint64(m.Failures))
	return layout.AppendBytes(b, []byte(m.Name))
}

func decodeInputMark(v []byte) (InputMark, error) {
	r := layout.NewReader(v)
	var m InputMark
	if r.U8() != 1 {
		r.Fail()
	}
	copy(m.Content[:], r.Take(32))
	m.Schema = binary.BigEndian.Uint32(r.Take(4))
	m.Algebra = r.U8()
	copy(m.Config[:], r.Take(8))
	m.Txs = int(r.Uvarint())
	m.Failures = int(r.Uvarint())
	m.Name = string(r.Take(r.Count(1)))
	// Canonical bytes only (no overlong varint): one marker, one encoding.
	if r.Done() != nil || !bytes.Equal(m.encode(), v) {
		return m, fmt.Errorf("bad input marker %x", v)
	}
	return m, nil
}

// ConfigFingerprint identifies the analysis configuration (chain,
// wrapped-native contracts, routers): an input ingested under another
// configuration is ingested again.
func ConfigFingerprint(cfg *normalform.Config) [8]byte {
	h := sha256.New()
	fmt.Fprintf(h, "chain %d\n", cfg.ChainID)
	for _, a := range cfg.WrappedNative() {
		fmt.Fprintf(h, "wrapped %x\n", a[:])
	}
	for _, a := range cfg.Routers() {
		fmt.Fprintf(h, "router %x\n", a[:])
	}
	var out [8]byte
	copy(out[:], h.Sum(nil))
	return out
}

// Failures streams the recorded failures, by input and rank.
func (ix *Index) Failures(ctx context.Context, fn func(Failure) error) error {
	return ix.failures(ctx, func(_ SourceID, f Failure) error { return fn(f) })
}

// failures streams the recorded failures with the source of their key
// (Failures, and the failures a later ingest may supersede).
func (ix *Index) failures(ctx context.Context, fn func(SourceID, Failure) error) error {
	return ix.scan(ctx, kindPrefix(KindFailure), nil, true, func(k, v []byte) ([]byte, bool, error) {
		key, err := ParseKey(k)
		if err != nil {
			return nil, true, err
		}
		f, err := decodeFailure(key, v)
		if err != nil {
			return nil, true, err
		}
		return nil, false, fn(key.Source, f)
	})
}

// Inputs streams the markers of the inputs ingested completely.
func (ix *Index) Inputs(ctx context.Context, fn func(InputMark) error) error {
	return ix.scan(ctx, kindPrefix(KindInput), nil, true, func(k, v []byte) ([]byte, bool, error) {
		m, err := decodeInputMark(v)
		if err != nil {
			return nil, true, err
		}
		return nil, false, fn(m)
	})
}

// Input returns the marker of an input name, if it was ingested
// completely (the fetcher asks this before fetching a block again).
func (ix *Index) Input(name string) (m InputMark, found bool, err error) {
	err = ix.db.View(func(txn *badger.Txn) (err error) {
		m, found, err = inputIn(txn, name)
		return
	})
	return m, found, err
}

// inputIn is Input, read in txn.
func inputIn(txn *badger.Txn, name string) (m InputMark, found bool, err error) {
	item, err := txn.Get(InputKey(SourceOf(name)).Bytes())
	if errors.Is(err, badger.ErrKeyNotFound) {
		return m, false, nil
	} else if err != nil {
		return m, false, err
	}
	err = item.Value(func(v []byte) (err error) { m, err = decodeInputMark(v); return })
	return m, err == nil, err
}

// MarkReader reads input markers for one goroutine (an ingest's
// decoder) from a snapshot of the index that it keeps while it is
// younger than markSnapshotAge, and then while it takes the next one in
// the background, instead of from a new one each time. A new Badger
// read transaction waits for every write in flight to be applied: a
// decoder that looked its input's marker up in one of its own waited
// for the ingest's own writer at every input, and the analysers it
// feeds went idle (200,000 synthetic transactions: each decoder
// blocked there a fifth of the run; BENCHMARKS.md, "Session 17"). A
// snapshot that is a little old can only miss a marker written since
// (markers are written, and replaced, never deleted), and an input
// whose marker is missed is ingested again, which changes nothing.
// Release gives the snapshots back; a reader is not safe for concurrent
// use.
type MarkReader struct {
	ix    *Index
	txn   *badger.Txn
	taken time.Time
	next  chan *badger.Txn // the snapshot being taken, while one is
}

// markSnapshotAge is how long a MarkReader keeps a snapshot before it
// takes the next.
const markSnapshotAge = time.Second

// MarkReader starts a marker reader; it takes its first snapshot at its
// first read.
func (ix *Index) MarkReader() *MarkReader { return &MarkReader{ix: ix} }

// Input is Index.Input, from the reader's snapshot.
func (r *MarkReader) Input(name string) (InputMark, bool, error) {
	switch {
	case r.txn == nil:
		r.txn, r.taken = r.ix.db.NewTransaction(false), time.Now()
	case r.next != nil:
		select {
		case t := <-r.next:
			r.txn.Discard()
			r.txn, r.taken, r.next = t, time.Now(), nil
		default:
		}
	case time.Since(r.taken) > markSnapshotAge:
		next := make(chan *badger.Txn, 1)
		r.next = next
		go func() { next <- r.ix.db.NewTransaction(false) }()
	}
	return inputIn(r.txn, name)
}

// Release gives back the reader's snapshots (an idle reader should hold
// none: Badger keeps what an open snapshot may read); the next read
// takes a new one.
func (r *MarkReader) Release() {
	if r.next != nil {
		(<-r.next).Discard()
		r.next = nil
	}
	if r.txn != nil {
		r.txn.Discard()
		r.txn = nil
	}
}
