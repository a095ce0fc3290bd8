package layout

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/holiman/uint256"

	"github.com/flowq/flowq/normalform"
)

// This file is the whole key layout of the index. Every key starts with a
// one-byte Kind; numbers are big-endian and fixed-width, so that byte order
// is numeric order and a range of blocks, amounts or positions is a range
// of keys. Nothing else (in this package or in index) builds or parses key
// bytes.
//
// Notation: u8, u32, u64 are big-endian unsigned integers of 1, 4 and 8
// bytes; hash is 32 bytes; addr is 20 bytes; id is a u32 dictionary id
// (below); tag is 6 bytes standing for a hash, an address or a token
// (below); loc and bucket are defined below the table.
//
//	kind         key                                                  value
//	0x01 schema  0x01                                                 u32 schema version, u32 record version
//	0x02 input   0x02 src[16]                                         input marker (inputValue: content hash, versions, counts, name)
//	0x03 failure 0x03 src[16] u32 seq                                 failure (failureValue: source, stage, tx, message)
//	0x04 dict    0x04 u8 level (1 shape, 2 tokens, 3 family), hash    id
//	             0x04 u8 4 (LevelAddr), addr                          id
//	0x05 name    0x05 id                                              u8 level, hash (level 4: addr)
//	0x06 next    0x06                                                 u32: the next id to assign
//	0x10 tx      0x10 u40 block u24 (index &^ 15)                     record page: u8 version, per record u8 (index & 15), uvarint length, Record (page.go, record.go)
//	             0x10 loc (index unknown: 0xffffff, hash)             Record (record.go): a lone record
//	0x11 txhash  0x11 tag of the transaction hash                     loc, loc, ...: the positions of the transactions with that tag, in key order
//	0x12 hash    0x12 u8 0 (exact), tag of the exact hash, pos        posting (pos a block) or (none) (pos a loc without index): below
//	             0x12 u8 level (1 shape, 2 tokens, 3 family), id, pos posting or (none)
//	0x13 bot     0x13 tag of the recipient, id of the shape, pos      posting or (none)
//	0x14 first   0x14 addr recipient, id of the shape                 loc of the bot's first transaction of that shape (its hash: the record's there)
//	0x15 verdict 0x15 u8 verdict, u8 tier, pos                        posting or (none)
//	0x16 profit  0x16 u8 side (0 gross, 1 net), tag of the token, bucket, pos  posting or (none); no net key where the gross has the component
//	0x17 addr    0x17 tag of the address, pos                         posting or (none); not for the recipient, whose bot key (0x13, same tag) stands for it
//	0x18 token   0x18 tag of the token, pos                           posting or (none)
//	0x19 block   0x19 u40 block                                       block findings (blocks.go: u8 version 2, block.Report.AppendFindings: binary, no Txs/Swaps)
//	0x1a dirty   0x1a u40 block                                       (none): the block's findings are to be computed again
//	0x1b nf      0x1b u40 block u24 (index &^ 127)                    NF page: u8 version, u8 codec, uvarint n, the S2 block of the body: per NF u8 (index & 127), uvarint length, NFValue (nfpage.go)
//	             0x1b loc (index unknown: 0xffffff, hash)             the normal form of the record at loc (record.go: NFValue; its tables by reference to the record's addresses and tokens)
//
// pos (the secondary kinds 0x12, 0x13, 0x15 to 0x18; schema 12,
// posting.go): for the transactions whose index is known, u40 block, and
// the key's value (a posting) lists the indexes in that block of the
// transactions that have the key (uvarint of the first, then of each
// difference; minimal, increasing, not empty). For a transaction whose
// index is unknown, its loc (0xffffff and its hash), and no value: one
// key a transaction, as before schema 12. A reader tells them by the
// length after the value part (5 bytes or 40). Record.Keys still lists one key a (kind, value,
// loc), with the loc: the posting's position is that key with the index
// appended (layout.Entry), so key order is (value, block, index) either
// way.
//
// Block findings (issue 18) are a function of every record of a block:
// a write that changes a record of a known block writes the block's dirty
// key in the same Badger transaction, and the end of an ingest (or
// Index.RefreshBlocks) computes the findings of every dirty block from its
// records and writes them with the dirty key's deletion, in one
// transaction. A crash between the two leaves the dirty key, and the next
// ingest computes them.
//
// Records are keyed by position, so a block range or a full scan reads
// them in order with one iterator; since schema 11 a key holds a page of
// up to 16 positions' records (page.go), which scans walk as one key. A record's normal form (its encoded
// analysis with the step log, the larger part of its bytes) is not in
// the record but under an NF key (0x1b; since schema 12 an entry of the
// S2-compressed NF page of its position's 128, nfpage.go, which a reader
// decompresses; a position without index keeps its own key): scans,
// which filter and show the record's fields, copy and decode about 300
// bytes a record instead of 750; readers that show the analysis (show,
// draw, export, verify, the block findings' fallback) read its NF page
// with one more point read in the same read transaction (a reader keeps
// the last page it decompressed). The record and
// its NF key are written and deleted together in one Badger transaction,
// and the record holds a 64-bit XXH3 of the NF, so a reader checks
// that the two belong together and a re-ingest whose NF changed is not
// taken for the same content. Nothing is stored twice (schema 10): the
// NF key's value refers to the record's addresses and tokens instead of
// holding the NF's own address and token tables, and leaves out the
// transaction hash and, when they are the record's gross and net, the
// NF's balances (record.go, appendNF); it is read back with its whole
// record (SetNF). The secondary keys 0x12 to 0x18 (but
// 0x14) lead to the records at their positions: a posting's, or the loc
// of a key without value (index unknown).
// The first-seen key's value is a loc, and its transaction the record
// there (one more point read where a first transaction is shown).
// The txhash key finds a transaction by hash with one point read (then
// the record's).
//
// Tags: a key holds 6 bytes in place of a transaction or exact hash (its
// first 6 bytes), an address (the first 6 bytes of SHA-256 of
// "flowq/addr" and the address: vanity addresses share leading bytes)
// or a token (of SHA-256 of "flowq/token" and the token as below). Two
// values may share a tag: every reader checks what it finds against the
// record at the key's position (its hash, exact hash, recipient,
// addresses, tokens or balance), which it reads anyway, and the txhash
// key lists every position of its tag. A collision costs a lookup one
// more record read, never a wrong answer; with 6 bytes it takes about 17
// million distinct values for one pair to be likely.
//
// The dictionary (0x04, 0x05, 0x06) gives each distinct shape, tokens and
// family hash a small id (from 1, in the order they were first written),
// which hash and bot keys and records hold instead of the 32 bytes: those
// hashes repeat across transactions (the same strategy through other
// pools). An id is assigned in the same Badger transaction as the first
// record that uses it, and never changes or goes away (a transaction's
// Delete leaves it), so no record or key names an id the dictionary does
// not hold, and readers may cache it. Exact hashes, mostly distinct, get
// no id.
//
// loc is a transaction's position: u40 block, u24 index in the block (5
// and 3 bytes: blocks up to MaxBlock, indexes up to MaxIndex; a record
// whose position does not fit has it unknown). When the input did not
// give the index, it is 0xffffff and the transaction's hash follows (32
// bytes), so that the key stays unique; when it did not give the block
// either, the block is 0xffffffffff. Such transactions sort after every
// known position (of their block).
//
// A token (tagged) is u8 kind (normalform.TokenKind), addr, and for
// ERC-721 and ERC-1155 tokens the id as 32 bytes.
//
// bucket is 3 bytes standing for a signed amount (ProfitBucket: its
// sign, bit length and next 14 bits, in an order that is the amounts'),
// so a range of amounts is a range of keys; readers check the amount
// itself against the record, as they check tags (schema 13; before, the
// amount itself, in 1 to 34 bytes).
//
// src is the first 16 bytes of SHA-256 of the input's name (its absolute
// path, or a name such as "rpc:block:123" for fetched bundles).
//
// The kinds' bytes, the field order and widths are part of the on-disk
// format: changing any of them changes SchemaVersion.

// SchemaVersion is the version of the key layout and of the values'
// encodings. Open refuses an index written with another. Version 13
// (issue 22): a record names its principals (from, to, recipient) and
// its tokens' contracts by dictionary ids (LevelAddr; record version 7)
// instead of writing them out; the NF pages are compressed with zstd,
// not S2 (codec 2, nfpage.go); a net balance component equal to a gross
// one of the same record has no profit key of its own (the net side's
// lookups read the gross keys too). Version 12:
// the secondary keys of transactions whose index is known are per-block
// postings (posting.go; issue 22): one key per (kind, value, block)
// whose value lists the block's indexes, instead of one per position
// (about 15 keys a transaction to 9 on the synthetic workload); and NF pages (nfpage.go; issue 22): the NF values of up to 128
// consecutive positions of a block under one nf key, compressed
// together with S2 (neighbouring transactions' NFs repeat their
// structure); an NF whose index is unknown keeps its own key, and the
// NF value is unchanged.
// Version 11:
// record pages (page.go; issue 22): the records of up to 16 consecutive
// positions of a block under one tx key, so that a scan walks one Badger
// key a page instead of one a record (the cost of a scan is per key);
// records whose index is unknown keep their own key, and the record
// version is unchanged. Version 10:
// the NF key's value refers to its record's addresses and tokens instead
// of writing out the NF's address and token tables (record.go, appendNF;
// issue 22); the first-seen key's value is the first transaction's loc
// alone, not its block, index and hash; and a record has no addr key
// for its recipient, whose bot key has the same tag (issue 22, the same
// session: no index with the earlier keys was released, so the version
// stays 10). Version 9: the
// normal form out of the record under its own key (0x1b), record
// version 6 (issue 22). Version 8: block
// findings in a binary form without the Txs and Swaps lists the records
// give (block value version 2; issue 22). Version 7: the
// normal form's encoding version 5 (ERC-6909 transfers decoded: token kind
// Multi6909, so a claims transaction's record changes; issue 17). Version 6:
// block findings and dirty blocks (0x19, 0x1a; issue 18). Version 4: the
// normal form's encoding version 3 (detections with their paths and
// witnesses, payouts, the coalition's gross; issue 14). Version 3:
// records keyed by position with a header the scans filter on, a txhash
// key in place of the position key, dictionary ids for the shape, tokens
// and family hashes, 6-byte tags for transaction and exact hashes,
// addresses and tokens in keys, record version 3 (issue 8). Version 2:
// secondary keys without values, locs in 8 bytes.
const SchemaVersion = 13

// Kind is a key's first byte.
type Kind uint8

// The key kinds.
const (
	KindSchema  Kind = 0x01
	KindInput   Kind = 0x02
	KindFailure Kind = 0x03
	KindDict    Kind = 0x04
	KindName    Kind = 0x05
	KindNext    Kind = 0x06
	KindTx      Kind = 0x10
	KindTxHash  Kind = 0x11
	KindHash    Kind = 0x12
	KindBot     Kind = 0x13
	KindFirst   Kind = 0x14
	KindVerdict Kind = 0x15
	KindProfit  Kind = 0x16
	KindAddr    Kind = 0x17
	KindToken   Kind = 0x18
	KindBlock   Kind = 0x19
	KindDirty   Kind = 0x1a
	KindNF      Kind = 0x1b
)

var kindNames = map[Kind]string{KindSchema: "schema", KindInput: "input", KindFailure: "failure", KindDict: "dict", KindName: "name",
	KindNext: "next", KindTx: "tx", KindTxHash: "txhash",
	KindHash: "hash", KindBot: "bot", KindFirst: "first", KindVerdict: "verdict", KindProfit: "profit", KindAddr: "addr", KindToken: "token",
	KindBlock: "block", KindDirty: "dirty", KindNF: "nf"}

// Kinds lists the key kinds in byte order.
var Kinds = []Kind{KindSchema, KindInput, KindFailure, KindDict, KindName, KindNext, KindTx, KindTxHash, KindHash, KindBot, KindFirst, KindVerdict, KindProfit, KindAddr, KindToken, KindBlock, KindDirty, KindNF}

func (k Kind) String() string {
	if s, ok := kindNames[k]; ok {
		return s
	}
	return fmt.Sprintf("kind(0x%02x)", uint8(k))
}

// Side says which balance a profit key ranks.
type Side uint8

const (
	// Gross is the balance at the principals before costs, per token.
	Gross Side = 0
	// Net is the balance after gas and builder payments (native and
	// wrapped native folded); absent when costs are unknown.
	Net Side = 1
)

func (s Side) String() string {
	if s == Net {
		return "net"
	}
	return "gross"
}

// UnknownBlock and UnknownIndex stand for a position the input did not
// give.
const (
	UnknownBlock uint64 = math.MaxUint64
	UnknownIndex uint32 = math.MaxUint32
)

// Loc is a transaction's position. Tx is set (and part of the key) only
// when Index is UnknownIndex.
type Loc struct {
	Block uint64
	Index uint32
	Tx    normalform.Hash
}

func (l Loc) String() string {
	switch {
	case l.Known():
		return fmt.Sprintf("block %d index %d", l.Block, l.Index)
	case l.Block != UnknownBlock:
		return fmt.Sprintf("block %d, tx %s", l.Block, l.Tx.Hex())
	}
	return "tx " + l.Tx.Hex()
}

// Known reports whether the position is known (the input gave the index).
func (l Loc) Known() bool { return l.Index != UnknownIndex }

// Less orders locations as their keys do.
func (l Loc) Less(o Loc) bool { return bytes.Compare(l.Append(nil), o.Append(nil)) < 0 }

// MaxBlock and MaxIndex are the largest known block and index a key holds.
const (
	MaxBlock uint64 = 1<<40 - 2
	MaxIndex uint32 = 1<<24 - 2
)

// LocWidth is the width of a known loc in a key.
const LocWidth = 8

// AppendBlock writes a block in 5 bytes; every block past MaxBlock
// (UnknownBlock) is 0xffffffffff.
func AppendBlock(dst []byte, b uint64) []byte {
	if b > MaxBlock {
		b = MaxBlock + 1
	}
	return append(dst, byte(b>>32), byte(b>>24), byte(b>>16), byte(b>>8), byte(b))
}

// BlockAt reads a block AppendBlock wrote.
func BlockAt(b []byte) uint64 {
	v := uint64(b[0])<<32 | uint64(b[1])<<24 | uint64(b[2])<<16 | uint64(b[3])<<8 | uint64(b[4])
	if v > MaxBlock {
		return UnknownBlock
	}
	return v
}

// Bytes is the loc as keys hold it.
func (l Loc) Bytes() []byte { return l.Append(make([]byte, 0, 40)) }

// ParseLocs reads a txhash key's value: locs one after another.
func ParseLocs(b []byte) ([]Loc, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: empty txhash value", ErrBadKey)
	}
	var out []Loc
	for len(b) > 0 {
		r := &keyReader{b: b}
		l := r.loc()
		if r.err != nil {
			return nil, fmt.Errorf("%w: txhash value %x", ErrBadKey, b)
		}
		out = append(out, l)
		b = r.b
	}
	return out, nil
}

func (l Loc) Append(dst []byte) []byte {
	dst = AppendBlock(dst, l.Block)
	i := l.Index
	if !l.Known() || i > MaxIndex {
		i = MaxIndex + 1
	}
	dst = append(dst, byte(i>>16), byte(i>>8), byte(i))
	if !l.Known() {
		dst = append(dst, l.Tx[:]...)
	}
	return dst
}

// normal zeroes Tx when the position is known, as a parsed key has it.
func (l Loc) normal() Loc {
	if l.Known() {
		l.Tx = normalform.Hash{}
	}
	return l
}

// SourceID names an input in keys: the first 16 bytes of SHA-256 of its
// name.
type SourceID [16]byte

// Tag is what a key holds in place of a hash, an address or a token: 6
// bytes (keys.go, "tags").
type Tag [6]byte

// Short is the tag of a transaction or exact hash: its first 6 bytes.
func Short(h normalform.Hash) (s Tag) {
	copy(s[:], h[:6])
	return s
}

// AddrTag is the tag of an address: the first 6 bytes of SHA-256 of
// "flowq/addr" and the address (not the address's own bytes, which
// vanity addresses share: leading zeros).
func AddrTag(a normalform.Address) (t Tag) {
	var b [30]byte
	copy(b[:], "flowq/addr")
	copy(b[10:], a[:])
	h := sha256.Sum256(b[:])
	copy(t[:], h[:])
	return t
}

// TokenTag is the tag of a token: the first 6 bytes of SHA-256 of
// "flowq/token", its kind, address, and the id of an ERC-721 or
// ERC-1155 token.
func TokenTag(tok normalform.Token) (t Tag) {
	var buf [11 + 1 + 20 + 32]byte
	b := appendToken(append(buf[:0], "flowq/token"...), NormalToken(tok))
	h := sha256.Sum256(b)
	copy(t[:], h[:])
	return t
}

// Key is a parsed key. Which fields are meaningful depends on Kind (see
// the table above); the others are zero.
type Key struct {
	Kind    Kind
	Tag     Tag                // KindTxHash: of the transaction hash; KindHash at level exact: of the exact hash; KindBot: of the recipient; KindAddr: of the address; KindProfit, KindToken: of the token
	ID      uint32             // KindHash (levels but exact), KindBot, KindFirst: the id of the hash (the shape's for bot and first); KindName
	Loc     Loc                // KindTx, KindNF and every per-transaction secondary kind except KindFirst
	Level   normalform.Level   // KindHash, KindDict
	Struct  normalform.Hash    // KindDict: the hash named
	Addr    normalform.Address // KindFirst: the recipient
	Verdict normalform.Verdict // KindVerdict
	Tier    normalform.Tier    // KindVerdict
	Side    Side               // KindProfit
	Bucket  Bucket             // KindProfit: the amount's (ProfitBucket)
	Source  SourceID           // KindInput, KindFailure
	Seq     uint32             // KindFailure
	Block   uint64             // KindBlock, KindDirty
	// Posting: a posting key (posting.go; the posting kinds with a known
	// position): Loc holds its block (Index 0), and the key ends there.
	Posting bool
}

// Constructors, one per kind.

// SchemaKey is the key of the schema version.
func SchemaKey() Key { return Key{Kind: KindSchema} }

// BlockKey is the key of a block's findings.
func BlockKey(block uint64) Key { return Key{Kind: KindBlock, Block: block} }

// DirtyKey marks a block whose findings are to be computed again.
func DirtyKey(block uint64) Key { return Key{Kind: KindDirty, Block: block} }

// InputKey is the key of an input's ingest marker.
func InputKey(src SourceID) Key { return Key{Kind: KindInput, Source: src} }

// FailureKey is the key of an input's seq-th failure.
func FailureKey(src SourceID, seq uint32) Key { return Key{Kind: KindFailure, Source: src, Seq: seq} }

// DictKey is the key of a hash's dictionary id (levels shape, tokens,
// family).
func DictKey(level normalform.Level, h normalform.Hash) Key {
	return Key{Kind: KindDict, Level: level, Struct: h}
}

// LevelAddr is the dictionary's level of addresses (schema 13, issue
// 22): the addresses a record names by their role, its principals (from,
// to, recipient) and its tokens' contracts, which repeat across
// transactions (a bot's, its senders', the traded tokens'). Its entries
// hold the address in the first 20 bytes of the name's hash (the rest
// zero), and its keys and names hold the 20 bytes alone. It is not an
// equivalence level: normalform.Level's names stop at Family.
const LevelAddr normalform.Level = 4

// AddrName is the dictionary name of an address (LevelAddr): the address
// in a hash's first 20 bytes.
func AddrName(a normalform.Address) (h normalform.Hash) {
	copy(h[:], a[:])
	return h
}

// NameAddr is the address a LevelAddr name holds.
func NameAddr(h normalform.Hash) (a normalform.Address) {
	copy(a[:], h[:20])
	return a
}

// AddrDictKey is the key of an address's dictionary id.
func AddrDictKey(a normalform.Address) Key { return DictKey(LevelAddr, AddrName(a)) }

// nameWidth is the width of a dictionary name of a level in keys and
// name values: 20 bytes for an address, 32 for a structural hash.
func nameWidth(l normalform.Level) int {
	if l == LevelAddr {
		return 20
	}
	return 32
}

// DictLevelValid reports whether l is a level the dictionary holds:
// shape, tokens, family (structural hashes) or LevelAddr.
func DictLevelValid(l normalform.Level) bool {
	return l == normalform.Shape || l == normalform.Tokens || l == normalform.Family || l == LevelAddr
}

// DictLevelName names a dictionary level in messages.
func DictLevelName(l normalform.Level) string {
	if l == LevelAddr {
		return "address"
	}
	if DictLevelValid(l) {
		return l.String()
	}
	return fmt.Sprintf("level(%d)", uint8(l))
}

// NameValue is the value of a dictionary id's name key: its level and
// the name (an address's 20 bytes, or a hash's 32).
func NameValue(l normalform.Level, h normalform.Hash) []byte {
	return append([]byte{byte(l)}, h[:nameWidth(l)]...)
}

// ParseNameValue reads a name key's value (NameValue).
func ParseNameValue(v []byte) (normalform.Level, normalform.Hash, error) {
	var h normalform.Hash
	if len(v) == 0 || !DictLevelValid(normalform.Level(v[0])) || len(v) != 1+nameWidth(normalform.Level(v[0])) {
		return 0, h, fmt.Errorf("bad dictionary name %x", v)
	}
	copy(h[:], v[1:])
	return normalform.Level(v[0]), h, nil
}

// NameKey is the key of what a dictionary id names.
func NameKey(id uint32) Key { return Key{Kind: KindName, ID: id} }

// NextKey is the key of the next dictionary id.
func NextKey() Key { return Key{Kind: KindNext} }

// TxKey is the key of the record of the transaction at l.
func TxKey(l Loc) Key { return Key{Kind: KindTx, Loc: l.normal()} }

// NFKey is the key of the normal form of the transaction at l (the
// record's at TxKey(l)), as the record's keys name it; a known
// position's NF is stored in its NF page (NFPageKey, nfpage.go), whose
// key is NFKey of the page's first position.
func NFKey(l Loc) Key { return Key{Kind: KindNF, Loc: l.normal()} }

// TxHashKey is the key of the positions of the transactions whose hash
// begins as tx does.
func TxHashKey(tx normalform.Hash) Key { return Key{Kind: KindTxHash, Tag: Short(tx)} }

// HashKey is the key of a structural hash at a level: for level exact,
// its tag (Short); for the others, its dictionary id (id).
func HashKey(level normalform.Level, tag Tag, id uint32, l Loc) Key {
	if level == normalform.Exact {
		return Key{Kind: KindHash, Level: level, Tag: tag, Loc: l.normal()}
	}
	return Key{Kind: KindHash, Level: level, ID: id, Loc: l.normal()}
}

// BotKey is the key of a recipient (bot) and the shape (its id) of its
// transaction.
func BotKey(bot normalform.Address, shape uint32, l Loc) Key {
	return Key{Kind: KindBot, Tag: AddrTag(bot), ID: shape, Loc: l.normal()}
}

// FirstKey is the key of the first transaction of a shape (its id) at a
// bot.
func FirstKey(bot normalform.Address, shape uint32) Key {
	return Key{Kind: KindFirst, Addr: bot, ID: shape}
}

// VerdictKey is the key of a verdict and tier.
func VerdictKey(v normalform.Verdict, t normalform.Tier, l Loc) Key {
	return Key{Kind: KindVerdict, Verdict: v, Tier: t, Loc: l.normal()}
}

// ProfitKey is the key of a balance component: its side, its token's
// tag and its amount's bucket.
func ProfitKey(side Side, tok normalform.Token, amt normalform.Signed, l Loc) Key {
	return Key{Kind: KindProfit, Side: side, Tag: TokenTag(tok), Bucket: ProfitBucket(amt), Loc: l.normal()}
}

// Bucket is the part of an amount a profit key holds (schema 13, issue
// 22): three bytes whose order is the amounts' (ProfitBucket), so that a
// range of amounts is a range of keys, but which several amounts share.
// A reader checks each key's record for the amount itself
// (Lookup.Holds), as it checks tags: a shared bucket costs a read, never
// a row. The exact amount took 1 to 34 bytes (10 for 1 ETH in wei).
type Bucket [3]byte

// bucketZero is zero's bucket, between the losses' and the gains'.
const bucketZero = 0x800000

// ProfitBucket is an amount's bucket: its sign, its bit length and the
// 14 bits after its leading one (an amount is known to one part in
// 16,384 of a power of two), as one 24-bit number that grows with the
// amount: zero 0x800000; a gain 0x800001 + (bitlen-1)<<14 | bits; a loss
// 0x7fffff - ((bitlen-1)<<14 | bits), so a larger loss sorts first.
// Every amount has one bucket, and a <= b implies
// ProfitBucket(a) <= ProfitBucket(b) as bytes.
func ProfitBucket(s normalform.Signed) Bucket {
	x := uint32(bucketZero)
	if n := s.Abs.BitLen(); n > 0 {
		var top uint256.Int
		if n > 15 {
			top.Rsh(&s.Abs, uint(n-15))
		} else {
			top.Lsh(&s.Abs, uint(15-n))
		}
		m := uint32(n-1)<<14 | uint32(top.Uint64())&0x3fff
		if s.Neg {
			x = bucketZero - 1 - m
		} else {
			x = bucketZero + 1 + m
		}
	}
	return Bucket{byte(x >> 16), byte(x >> 8), byte(x)}
}

// validBucket reports whether b is a bucket ProfitBucket gives.
func validBucket(b Bucket) bool {
	x := uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2])
	return x >= bucketZero-1-(255<<14|0x3fff) && x <= bucketZero+1+(255<<14|0x3fff)
}

// AddrKey is the key of an address a transaction touches.
func AddrKey(a normalform.Address, l Loc) Key {
	return Key{Kind: KindAddr, Tag: AddrTag(a), Loc: l.normal()}
}

// TokenKey is the key of a token a transaction touches.
func TokenKey(tok normalform.Token, l Loc) Key {
	return Key{Kind: KindToken, Tag: TokenTag(tok), Loc: l.normal()}
}

// NormalToken drops an id the token's kind does not carry.
func NormalToken(t normalform.Token) normalform.Token {
	if !t.HasID() {
		t.ID = uint256.Int{}
	}
	return t
}

// Bytes encodes the key.
func (k Key) Bytes() []byte { return k.Append(make([]byte, 0, 128)) }

// Append appends the key's bytes to dst.
func (k Key) Append(dst []byte) []byte {
	dst = append(dst, byte(k.Kind))
	switch k.Kind {
	case KindSchema:
	case KindInput:
		dst = append(dst, k.Source[:]...)
	case KindFailure:
		dst = append(dst, k.Source[:]...)
		dst = binary.BigEndian.AppendUint32(dst, k.Seq)
	case KindDict:
		dst = append(dst, byte(k.Level))
		dst = append(dst, k.Struct[:nameWidth(k.Level)]...)
	case KindName:
		dst = binary.BigEndian.AppendUint32(dst, k.ID)
	case KindNext:
	case KindTx, KindNF:
		dst = k.Loc.Append(dst)
	case KindTxHash:
		dst = append(dst, k.Tag[:]...)
	case KindHash:
		dst = append(dst, byte(k.Level))
		if k.Level == normalform.Exact {
			dst = append(dst, k.Tag[:]...)
		} else {
			dst = binary.BigEndian.AppendUint32(dst, k.ID)
		}
		dst = k.appendPos(dst)
	case KindBot:
		dst = append(dst, k.Tag[:]...)
		dst = binary.BigEndian.AppendUint32(dst, k.ID)
		dst = k.appendPos(dst)
	case KindFirst:
		dst = append(dst, k.Addr[:]...)
		dst = binary.BigEndian.AppendUint32(dst, k.ID)
	case KindVerdict:
		dst = append(dst, byte(k.Verdict), byte(k.Tier))
		dst = k.appendPos(dst)
	case KindProfit:
		dst = append(dst, byte(k.Side))
		dst = append(dst, k.Tag[:]...)
		dst = append(dst, k.Bucket[:]...)
		dst = k.appendPos(dst)
	case KindAddr, KindToken:
		dst = append(dst, k.Tag[:]...)
		dst = k.appendPos(dst)
	case KindBlock, KindDirty:
		dst = AppendBlock(dst, k.Block)
	default:
		panic(fmt.Sprintf("index: key of unknown kind %v", k.Kind))
	}
	return dst
}

// appendPos writes a secondary key's position: its loc, or a posting
// key's block alone.
func (k Key) appendPos(dst []byte) []byte {
	if k.Posting {
		return AppendBlock(dst, k.Loc.Block)
	}
	return k.Loc.Append(dst)
}

func appendToken(dst []byte, t normalform.Token) []byte {
	dst = append(dst, byte(t.Kind))
	dst = append(dst, t.Addr[:]...)
	if t.HasID() {
		id := t.ID.Bytes32()
		dst = append(dst, id[:]...)
	}
	return dst
}

// ErrBadKey reports bytes that are not a key of this layout.
var ErrBadKey = errors.New("not an index key")

// keyReader consumes a key's fields, remembering the first error.
type keyReader struct {
	b   []byte
	err error
}

func (r *keyReader) take(n int) []byte {
	if r.err != nil {
		return make([]byte, n)
	}
	if len(r.b) < n {
		r.err = ErrBadKey
		return make([]byte, n)
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *keyReader) u8() uint8   { return r.take(1)[0] }
func (r *keyReader) u32() uint32 { return binary.BigEndian.Uint32(r.take(4)) }

func (r *keyReader) hash() (h normalform.Hash) {
	copy(h[:], r.take(32))
	return h
}

func (r *keyReader) addr() (a normalform.Address) {
	copy(a[:], r.take(20))
	return a
}

// ReadLoc reads a position at the head of b, as keys hold it, and
// returns the bytes after it.
func ReadLoc(b []byte) (Loc, []byte, error) {
	r := &keyReader{b: b}
	l := r.loc()
	return l, r.b, r.err
}

// TxLoc reads a tx key's position (KindTx), without the rest of ParseKey.
func TxLoc(k []byte) (Loc, error) {
	if len(k) == 0 || Kind(k[0]) != KindTx {
		return Loc{}, fmt.Errorf("%w: tx key %x", ErrBadKey, k)
	}
	l, rest, err := ReadLoc(k[1:])
	if err != nil || len(rest) != 0 {
		return Loc{}, fmt.Errorf("%w: tx key %x", ErrBadKey, k)
	}
	return l, nil
}

func (r *keyReader) loc() Loc {
	l := Loc{Block: BlockAt(r.take(5))}
	i := r.take(3)
	l.Index = uint32(i[0])<<16 | uint32(i[1])<<8 | uint32(i[2])
	if l.Index > MaxIndex {
		l.Index = UnknownIndex
	}
	if !l.Known() {
		l.Tx = r.hash()
	}
	return l
}

// pos reads a secondary key's position: a loc, or a posting key's
// block when only a block is left (posting.go).
func (r *keyReader) pos() (Loc, bool) {
	if r.err == nil && len(r.b) == BlockWidth {
		return Loc{Block: BlockAt(r.take(BlockWidth))}, true
	}
	return r.loc(), false
}

// ParseKey is the inverse of Key.Bytes: ParseKey(k.Bytes()) == k for every
// key the constructors build.
func ParseKey(b []byte) (Key, error) {
	if len(b) == 0 {
		return Key{}, ErrBadKey
	}
	k := Key{Kind: Kind(b[0])}
	r := &keyReader{b: b[1:]}
	switch k.Kind {
	case KindSchema:
	case KindInput:
		copy(k.Source[:], r.take(16))
	case KindFailure:
		copy(k.Source[:], r.take(16))
		k.Seq = r.u32()
	case KindDict:
		k.Level = normalform.Level(r.u8())
		if !DictLevelValid(k.Level) {
			r.err = ErrBadKey
			break
		}
		copy(k.Struct[:], r.take(nameWidth(k.Level)))
	case KindName:
		k.ID = r.u32()
	case KindNext:
	case KindTx, KindNF:
		k.Loc = r.loc()
	case KindTxHash:
		copy(k.Tag[:], r.take(6))
	case KindHash:
		k.Level = normalform.Level(r.u8())
		switch {
		case k.Level == normalform.Exact:
			copy(k.Tag[:], r.take(6))
		case k.Level <= normalform.Family:
			k.ID = r.u32()
		default:
			r.err = ErrBadKey
		}
		k.Loc, k.Posting = r.pos()
	case KindBot:
		copy(k.Tag[:], r.take(6))
		k.ID = r.u32()
		k.Loc, k.Posting = r.pos()
	case KindFirst:
		k.Addr = r.addr()
		k.ID = r.u32()
	case KindVerdict:
		k.Verdict = normalform.Verdict(r.u8())
		k.Tier = normalform.Tier(r.u8())
		if k.Verdict > normalform.VerdictArbitrage || k.Tier > normalform.TierUncertain {
			r.err = ErrBadKey
		}
		k.Loc, k.Posting = r.pos()
	case KindProfit:
		k.Side = Side(r.u8())
		if k.Side > Net {
			r.err = ErrBadKey
		}
		copy(k.Tag[:], r.take(6))
		copy(k.Bucket[:], r.take(3))
		if !validBucket(k.Bucket) {
			r.err = ErrBadKey
		}
		k.Loc, k.Posting = r.pos()
	case KindAddr, KindToken:
		copy(k.Tag[:], r.take(6))
		k.Loc, k.Posting = r.pos()
	case KindBlock, KindDirty:
		k.Block = BlockAt(r.take(5))
	default:
		return Key{}, fmt.Errorf("%w: unknown kind 0x%02x", ErrBadKey, b[0])
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = ErrBadKey
	}
	if r.err != nil {
		return Key{}, fmt.Errorf("%w: %s key %x", r.err, k.Kind, b)
	}
	return k, nil
}

// --- prefixes and ranges for the iterators ----------------------------------

// KindPrefix is the prefix of every key of a kind.
func KindPrefix(k Kind) []byte { return []byte{byte(k)} }

// HashPrefix is the prefix of the hash keys of an exact hash (its h8) or
// of another level's id.
func HashPrefix(level normalform.Level, h normalform.Hash, id uint32) []byte {
	if level == normalform.Exact {
		return append([]byte{byte(KindHash), byte(level)}, h[:6]...)
	}
	return binary.BigEndian.AppendUint32([]byte{byte(KindHash), byte(level)}, id)
}

// BotPrefix is the prefix of the bot keys of a recipient's tag.
func BotPrefix(bot normalform.Address) []byte {
	t := AddrTag(bot)
	return append([]byte{byte(KindBot)}, t[:]...)
}

// BotShapePrefix is the prefix of the bot keys of a recipient's tag and a shape id.
func BotShapePrefix(bot normalform.Address, shape uint32) []byte {
	return binary.BigEndian.AppendUint32(BotPrefix(bot), shape)
}

// FirstPrefix is the prefix of a recipient's first-seen keys.
func FirstPrefix(bot normalform.Address) []byte { return append([]byte{byte(KindFirst)}, bot[:]...) }

// VerdictPrefix is the prefix of the verdict keys of a verdict, every
// tier.
func VerdictPrefix(v normalform.Verdict) []byte { return []byte{byte(KindVerdict), byte(v)} }

// VerdictTierPrefix is the prefix of the verdict keys of a verdict and
// tier.
func VerdictTierPrefix(v normalform.Verdict, t normalform.Tier) []byte {
	return append(VerdictPrefix(v), byte(t))
}

// ProfitPrefix is the prefix of the profit keys of a side and a token's tag.
func ProfitPrefix(side Side, tok normalform.Token) []byte {
	t := TokenTag(tok)
	return append([]byte{byte(KindProfit), byte(side)}, t[:]...)
}

// AddrPrefix is the prefix of the addr keys of an address's tag.
func AddrPrefix(a normalform.Address) []byte {
	t := AddrTag(a)
	return append([]byte{byte(KindAddr)}, t[:]...)
}

// TokenPrefix is the prefix of the token keys of a token's tag.
func TokenPrefix(tok normalform.Token) []byte {
	t := TokenTag(tok)
	return append([]byte{byte(KindToken)}, t[:]...)
}

// BlockBounds returns the key range [lo, hi) of the locations of blocks
// from..to (inclusive) under prefix. hi is nil when the range runs to the
// end of the prefix.
func BlockBounds(prefix []byte, from, to uint64) (lo, hi []byte) {
	lo = AppendBlock(append([]byte(nil), prefix...), from)
	if to == math.MaxUint64 {
		return lo, PrefixEnd(prefix)
	}
	hi = AppendBlock(append([]byte(nil), prefix...), to+1)
	return lo, hi
}

// PrefixEnd is the smallest key greater than every key with the prefix,
// or nil when there is none (a prefix of 0xff bytes).
func PrefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] != 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}
