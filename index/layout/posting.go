package layout

import (
	"errors"
	"fmt"
)

// Secondary keys as per-block postings (schema 12, issue 22). The
// per-transaction secondary kinds 0x12 hash, 0x13 bot, 0x15 verdict,
// 0x16 profit, 0x17 addr and 0x18 token (not 0x11 txhash, 0x14 first)
// are stored one key per (kind, value, block) instead of one per (kind,
// value, position): the key is the per-transaction key without its
// position's 3 index bytes, and its value lists the indexes in the block
// of the transactions that have the key:
//
//	key   kind, value part (as the table in keys.go has it), u40 block
//	value the indexes in increasing order: uvarint of the first, then
//	      uvarint of each one's difference from the one before (at least 1)
//
// Every varint is minimal and the list is not empty (an emptied posting
// is deleted), so one set of indexes has one encoding. Keys keep their
// order (value, block, index): a reader that ranges or merges by block
// works on postings as on the per-transaction keys, expanding each
// posting into its positions (a posting's position is the key with 3
// index bytes appended: the per-transaction key, Entry).
//
// A transaction whose index is unknown (loc 0xffffff and its hash) keeps
// its per-transaction key, with no value. A reader tells the two apart
// by what follows the value part: 5 bytes (a block) for a posting, 40 (a
// loc with its hash) for a per-transaction key. The value part's length
// is fixed per kind (and, for hash keys, per level: a 6-byte tag at the
// exact level, a 4-byte id at the others; PostHead).
//
// Record.Keys keeps listing one key per (kind, value, loc): the record's
// keys as a function of the record, which writers turn into postings
// (index/postings.go) and verify compares with them.

// PostingKind reports whether a kind's keys with a known position are
// per-block postings.
func PostingKind(k Kind) bool {
	switch k {
	case KindHash, KindBot, KindVerdict, KindProfit, KindAddr, KindToken:
		return true
	}
	return false
}

// BlockWidth is the width of a block in a key.
const BlockWidth = 5

// PostHead is the length of a posting kind's key up to its position
// (kind and value part), or 0 when k is not a key of a posting kind or
// is too short to hold its value part.
func PostHead(k []byte) int {
	if len(k) == 0 {
		return 0
	}
	n := 0
	switch Kind(k[0]) {
	case KindHash:
		if len(k) < 2 {
			return 0
		}
		n = 2 + 4
		if k[1] == 0 { // exact: a tag
			n = 2 + len(Tag{})
		}
	case KindBot:
		n = 1 + len(Tag{}) + 4
	case KindVerdict:
		n = 3
	case KindProfit:
		n = 2 + len(Tag{}) + len(Bucket{}) // kind, side, tag, bucket
	case KindAddr, KindToken:
		n = 1 + len(Tag{})
	default:
		return 0
	}
	if len(k) < n {
		return 0
	}
	return n
}

// IsPostingKey reports whether k is a posting key (a posting kind's
// key that ends in a block), and the length of its kind and value part.
func IsPostingKey(k []byte) (head int, ok bool) {
	h := PostHead(k)
	return h, h > 0 && len(k) == h+BlockWidth
}

// SplitPosting reads a per-transaction key of a posting kind whose
// position is known (as Record.Keys lists it): the posting key it
// belongs to (k without its 3 index bytes, a slice of k) and the index.
// ok is false for any other key (a position without index keeps its
// per-transaction key).
func SplitPosting(k []byte) (posting []byte, index uint32, ok bool) {
	h := PostHead(k)
	if h == 0 || len(k) != h+LocWidth {
		return nil, 0, false
	}
	i := uint32(k[h+5])<<16 | uint32(k[h+6])<<8 | uint32(k[h+7])
	if i > MaxIndex {
		return nil, 0, false
	}
	return k[: h+BlockWidth : h+BlockWidth], i, true
}

// Entry appends to dst the per-transaction key of a posting's position:
// the posting key and the index in 3 bytes.
func Entry(dst, posting []byte, index uint32) []byte {
	dst = append(dst, posting...)
	return append(dst, byte(index>>16), byte(index>>8), byte(index))
}

// AppendPosting appends the value of a posting: idx, increasing and
// distinct, each at most MaxIndex (the caller's invariant).
func AppendPosting(dst []byte, idx []uint32) []byte {
	prev := uint32(0)
	for i, x := range idx {
		d := x
		if i > 0 {
			d = x - prev
		}
		for d >= 0x80 {
			dst = append(dst, byte(d)|0x80)
			d >>= 7
		}
		dst = append(dst, byte(d))
		prev = x
	}
	return dst
}

// ErrBadPosting reports a posting value that does not parse.
var ErrBadPosting = errors.New("damaged posting")

// PostingError reports a posting whose value does not parse, naming
// its kind, its value part (hex) and its block.
type PostingError struct {
	Kind  Kind
	Value []byte // the key's value part, after the kind
	Block uint64
	Why   string
}

func (e *PostingError) Error() string {
	return fmt.Sprintf("%s posting %x at block %d: %s", e.Kind, e.Value, e.Block, e.Why)
}

func (e *PostingError) Unwrap() error { return ErrBadPosting }

// ParsePosting reads the value v of posting key k into dst (reset): the
// indexes in increasing order. A value that is empty, truncated, not
// minimal, not increasing or past MaxIndex is a *PostingError.
func ParsePosting(k, v []byte, dst []uint32) ([]uint32, error) {
	dst = dst[:0]
	bad := func(why string) ([]uint32, error) {
		e := &PostingError{Kind: Kind(0), Block: UnknownBlock, Why: why}
		if len(k) > 0 {
			e.Kind = Kind(k[0])
		}
		if h, ok := IsPostingKey(k); ok {
			e.Value = append([]byte(nil), k[1:h]...)
			e.Block = BlockAt(k[h:])
		} else if len(k) > 0 {
			e.Value = append([]byte(nil), k[1:]...)
		}
		return dst[:0], e
	}
	if len(v) == 0 {
		return bad("no position")
	}
	var prev uint64
	for i := 0; len(v) > 0; i++ {
		var d uint64
		var s uint
		j := 0
		for ; ; j++ {
			if j == len(v) {
				return bad(fmt.Sprintf("position %d: truncated varint", i))
			}
			if j == 4 { // 4 bytes hold 28 bits: more than MaxIndex
				return bad(fmt.Sprintf("position %d: varint too long", i))
			}
			c := v[j]
			d |= uint64(c&0x7f) << s
			s += 7
			if c < 0x80 {
				if c == 0 && j > 0 {
					return bad(fmt.Sprintf("position %d: varint not minimal", i))
				}
				break
			}
		}
		v = v[j+1:]
		if i > 0 && d == 0 {
			return bad(fmt.Sprintf("position %d: indexes not increasing", i))
		}
		x := prev + d
		if i == 0 {
			x = d
		}
		if x > uint64(MaxIndex) {
			return bad(fmt.Sprintf("position %d: index %d past %d", i, x, MaxIndex))
		}
		dst = append(dst, uint32(x))
		prev = x
	}
	return dst, nil
}
