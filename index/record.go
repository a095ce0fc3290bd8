package index

import (
	"time"

	"github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// The record and its value encoding are package layout's
// (index/layout/record.go); the names below are layout's.

// RecordVersion is the version of the record encoding.
const RecordVersion = layout.RecordVersion

// Record is what the index keeps of one analysed transaction.
type Record = layout.Record

// Amount is one component of a balance.
type Amount = layout.Amount

// Names resolves a dictionary id of a level to its hash.
type Names = layout.Names

// Ref locates a transaction found through a secondary key.
type Ref = layout.Ref

// BlockRange is an inclusive range of blocks.
type BlockRange = layout.BlockRange

// Lookup names a secondary-key access path for Fetch.
type Lookup = layout.Lookup

// AllBlocks is every block, unknown ones included.
var AllBlocks = layout.AllBlocks

// Blocks is the range from..to, inclusive.
func Blocks(from, to uint64) BlockRange { return layout.Blocks(from, to) }

// Errors of records.
var (
	// ErrNoHash reports a transaction whose input did not give its hash.
	ErrNoHash = layout.ErrNoHash
	// ErrBadRecord reports a record value that does not decode.
	ErrBadRecord = layout.ErrBadRecord
	// ErrNotFound reports a transaction that is not in the index.
	ErrNotFound = layout.ErrNotFound
)

// NewRecord builds the record of an analysis.
func NewRecord(a *normalform.Analysis, latency time.Duration) (*Record, error) {
	return layout.NewRecord(a, latency)
}

// DecodeRecord decodes a record value; loc is its key's position, names
// resolves its dictionary ids.
func DecodeRecord(loc Loc, b []byte, names Names) (*Record, error) {
	return layout.DecodeRecord(loc, b, names)
}

// ids are the dictionary ids of a record's shape, tokens and family
// hashes (ids[level]; ids[0] unused).
type ids = layout.IDs

type depth = layout.Depth

const (
	depthHeader = layout.DepthHeader
	depthAddrs  = layout.DepthAddrs
	depthRow    = layout.DepthRow   // what a row shows: no addresses, tokens or NF
	depthFull   = layout.DepthFull  // all but the NF
	depthWhole  = layout.DepthWhole // all, the NF read from its key (nfIn)
)

// nfIn sets rec's NF from its NF key, in txn (one page read and
// decompressed: nfReader reads many).
func nfIn(txn *badger.Txn, rec *Record) error { return newNFReader(txn).set(rec) }

// keysOf returns every key of the record that is a function of it alone
// (layout.Record.Keys): the record's own first (value enc), then its
// secondary keys. fixed are those that need no id, when the analysers
// built them (layout.Encoded.Fixed), or nil.
func keysOf(r *Record, fixed *layout.FixedKeys, enc []byte, id ids) []layout.KV {
	return r.KeysWith(fixed, enc, id)
}

// encoded is a record's value in two parts around the dictionary ids
// (layout.Encoded).
type encoded = layout.Encoded

func encodeRecord(r *Record) *encoded { return r.Parts() }

func decodeRecord(loc Loc, b []byte, names Names, d depth) (*Record, error) {
	return layout.DecodeAt(loc, b, names, d)
}

func decodeRecordIDs(loc Loc, b []byte, names Names, d depth) (*Record, ids, error) {
	return layout.DecodeRecordIDs(loc, b, names, d)
}

func decodeInto(rec *Record, loc Loc, b []byte, names Names, d depth) (*Record, ids, error) {
	return layout.DecodeInto(rec, loc, b, names, d)
}

func contentOf(b []byte) []byte               { return layout.ContentOf(b) }
func sameContent(a, b []byte) bool            { return layout.SameContent(a, b) }
func hashOf(b []byte) (normalform.Hash, bool) { return layout.HashOf(b) }
