package index

import (
	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// The key layout of the index is package layout's (index/layout/keys.go:
// the table of kinds, positions, tags, amounts). The names below are
// layout's, so that the index's readers and writers, and its users, are
// written as before; nothing here builds or parses key bytes.

// SchemaVersion is the version of the key layout and of the values'
// encodings (layout.SchemaVersion). Open refuses an index written with
// another.
const SchemaVersion = layout.SchemaVersion

// Kind is a key's first byte.
type Kind = layout.Kind

// The key kinds.
const (
	KindSchema  = layout.KindSchema
	KindInput   = layout.KindInput
	KindFailure = layout.KindFailure
	KindDict    = layout.KindDict
	KindName    = layout.KindName
	KindNext    = layout.KindNext
	KindTx      = layout.KindTx
	KindTxHash  = layout.KindTxHash
	KindHash    = layout.KindHash
	KindBot     = layout.KindBot
	KindFirst   = layout.KindFirst
	KindVerdict = layout.KindVerdict
	KindProfit  = layout.KindProfit
	KindAddr    = layout.KindAddr
	KindToken   = layout.KindToken
	KindBlock   = layout.KindBlock
	KindDirty   = layout.KindDirty
	KindNF      = layout.KindNF
)

// Kinds lists the key kinds in byte order.
var Kinds = layout.Kinds

// Side says which balance a profit key ranks.
type Side = layout.Side

// The sides.
const (
	Gross = layout.Gross
	Net   = layout.Net
)

// UnknownBlock and UnknownIndex stand for a position the input did not
// give; MaxBlock and MaxIndex are the largest known ones a key holds.
const (
	UnknownBlock = layout.UnknownBlock
	UnknownIndex = layout.UnknownIndex
	MaxBlock     = layout.MaxBlock
	MaxIndex     = layout.MaxIndex
)

// Loc is a transaction's position.
type Loc = layout.Loc

// SourceID names an input in keys.
type SourceID = layout.SourceID

// Tag is what a key holds in place of a hash, an address or a token.
type Tag = layout.Tag

// Key is a parsed key.
type Key = layout.Key

// ErrBadKey reports bytes that are not a key of this layout.
var ErrBadKey = layout.ErrBadKey

// Short is the tag of a transaction or exact hash.
func Short(h normalform.Hash) Tag { return layout.Short(h) }

// AddrTag is the tag of an address.
func AddrTag(a normalform.Address) Tag { return layout.AddrTag(a) }

// TokenTag is the tag of a token.
func TokenTag(tok normalform.Token) Tag { return layout.TokenTag(tok) }

// SchemaKey is the key of the schema version.
func SchemaKey() Key { return layout.SchemaKey() }

// BlockKey is the key of a block's findings.
func BlockKey(block uint64) Key { return layout.BlockKey(block) }

// DirtyKey marks a block whose findings are to be computed again.
func DirtyKey(block uint64) Key { return layout.DirtyKey(block) }

// InputKey is the key of an input's ingest marker.
func InputKey(src SourceID) Key { return layout.InputKey(src) }

// FailureKey is the key of an input's seq-th failure.
func FailureKey(src SourceID, seq uint32) Key { return layout.FailureKey(src, seq) }

// DictKey is the key of a hash's dictionary id.
func DictKey(level normalform.Level, h normalform.Hash) Key { return layout.DictKey(level, h) }

// AddrDictKey is the key of an address's dictionary id.
func AddrDictKey(a normalform.Address) Key { return layout.AddrDictKey(a) }

// NameKey is the key of what a dictionary id names.
func NameKey(id uint32) Key { return layout.NameKey(id) }

// NextKey is the key of the next dictionary id.
func NextKey() Key { return layout.NextKey() }

// TxKey is the key of the record of the transaction at l.
func TxKey(l Loc) Key { return layout.TxKey(l) }

// NFKey is the key of the normal form of the transaction at l, as a
// record's keys name it; since schema 12 it is stored in its NF page
// (layout.NFPageKey, nfpages.go) unless its index is unknown.
func NFKey(l Loc) Key { return layout.NFKey(l) }

// TxHashKey is the key of the positions of the transactions whose hash
// begins as tx does.
func TxHashKey(tx normalform.Hash) Key { return layout.TxHashKey(tx) }

// HashKey is the key of a structural hash at a level.
func HashKey(level normalform.Level, tag Tag, id uint32, l Loc) Key {
	return layout.HashKey(level, tag, id, l)
}

// BotKey is the key of a recipient (bot) and the shape of its transaction.
func BotKey(bot normalform.Address, shape uint32, l Loc) Key { return layout.BotKey(bot, shape, l) }

// FirstKey is the key of the first transaction of a shape at a bot.
func FirstKey(bot normalform.Address, shape uint32) Key { return layout.FirstKey(bot, shape) }

// VerdictKey is the key of a verdict and tier.
func VerdictKey(v normalform.Verdict, t normalform.Tier, l Loc) Key {
	return layout.VerdictKey(v, t, l)
}

// ProfitKey is the key of a balance component.
func ProfitKey(side Side, tok normalform.Token, amt normalform.Signed, l Loc) Key {
	return layout.ProfitKey(side, tok, amt, l)
}

// AddrKey is the key of an address a transaction touches.
func AddrKey(a normalform.Address, l Loc) Key { return layout.AddrKey(a, l) }

// TokenKey is the key of a token a transaction touches.
func TokenKey(tok normalform.Token, l Loc) Key { return layout.TokenKey(tok, l) }

// ProfitBucket is the part of an amount a profit key holds: three bytes
// in the amounts' order, which several amounts share.
func ProfitBucket(s normalform.Signed) layout.Bucket { return layout.ProfitBucket(s) }

// ParseKey is the inverse of Key.Bytes.
func ParseKey(b []byte) (Key, error) { return layout.ParseKey(b) }

// The package's own short names for layout's prefixes and ranges.

const locWidth = layout.LocWidth

func appendBlock(dst []byte, b uint64) []byte { return layout.AppendBlock(dst, b) }
func locBlock(b []byte) uint64                { return layout.BlockAt(b) }
func parseLocs(b []byte) ([]Loc, error)       { return layout.ParseLocs(b) }
func kindPrefix(k Kind) []byte                { return layout.KindPrefix(k) }
func botShapePrefix(bot normalform.Address, shape uint32) []byte {
	return layout.BotShapePrefix(bot, shape)
}
func blockBounds(prefix []byte, from, to uint64) (lo, hi []byte) {
	return layout.BlockBounds(prefix, from, to)
}
func prefixEnd(prefix []byte) []byte { return layout.PrefixEnd(prefix) }

// ErrBadPosting reports a posting value that does not parse
// (layout.PostingError names its kind, value and block).
var ErrBadPosting = layout.ErrBadPosting
