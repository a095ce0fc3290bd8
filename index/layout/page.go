package layout

import (
	"encoding/binary"
	"fmt"

	"github.com/flowq/flowq/normalform"
)

// Record pages (schema 11, issue 22). The records of a block's known
// positions are grouped 16 consecutive positions to a key: a scan walks
// one Badger key a page instead of one a record, and Badger's cost of a
// scan is per key (its merge iterator, the version checks), not per
// byte.
//
//	key   0x10 u40 block u24 (index &^ 15)          the tx key of the page's first position (9 bytes)
//	value u8 PageVersion, then per record present, in index order:
//	      u8 (index & 15), uvarint length, the record (record.go, unchanged)
//
// Why 16 and not 64: a point read (a lookup's row) copies its whole page
// out of Badger (its Get, like its iterator, copies every value), so the
// page's size is paid a row; a scan's saving is per key, nearly all of
// it at 16 (7 keys a 100 records against 100; at 64, 2). Measured at
// 200,000 synthetic transactions (BENCHMARKS.md, "Record pages (schema
// 11)"): the filtered find the same at 8, 16 and 64 (about 30% less CPU
// than a key a record), the lookup of every row of a busy bot 1.3x the
// CPU of a key a record at 16 and 2x at 64.
//
// A record whose index is unknown (its loc holds 0xffffff and the hash:
// a 41-byte key) keeps its own key, its value the record alone; such
// keys sort after their block's pages. A reader tells a page from a lone
// record by the key's length (IsPageKey). A page holds at least one
// record: an empty one is deleted.

// PageSpan is the number of consecutive positions a page holds (at
// most 256: an entry's offset is a byte).
const PageSpan = 16

// PageVersion is a page value's first byte.
const PageVersion = 1

// PageLoc is the position of the first record a page holding l would
// hold: l with its index rounded down to a multiple of PageSpan. A loc
// whose index is unknown is its own.
func PageLoc(l Loc) Loc {
	if l.Known() {
		l.Index &^= PageSpan - 1
		l.Tx = normalform.Hash{} // as in its key (a known position's hash is not part of it)
	}
	return l
}

// PageKey is the key under which the record at l is stored: its page's
// (its own when its index is unknown).
func PageKey(l Loc) Key { return TxKey(PageLoc(l)) }

// IsPageKey reports whether a tx key is a page's (not a lone record's).
func IsPageKey(k []byte) bool { return len(k) == 1+LocWidth && len(k) > 0 && Kind(k[0]) == KindTx }

// PageError reports a page whose value does not parse.
type PageError struct {
	Page Loc // the page's first position
	Pos  int // the index of the entry that failed, or -1 when not known
	Msg  string
}

func (e *PageError) Error() string {
	s := fmt.Sprintf("record page of block %d (positions %d..%d)", e.Page.Block, e.Page.Index, e.Page.Index+PageSpan-1)
	if e.Pos >= 0 {
		s += fmt.Sprintf(", index %d", e.Pos)
	}
	return s + ": " + e.Msg
}

// Unwrap makes a damaged page a bad record (errors.Is ErrBadRecord).
func (e *PageError) Unwrap() error { return ErrBadRecord }

// WalkPage calls fn with every record of the page at page (its key's
// loc) in index order, each with its position; rec is a slice of v.
func WalkPage(page Loc, v []byte, fn func(l Loc, rec []byte) error) error {
	if len(v) == 0 || v[0] != PageVersion {
		if len(v) == 0 {
			return &PageError{Page: page, Pos: -1, Msg: "empty value"}
		}
		return &PageError{Page: page, Pos: -1, Msg: fmt.Sprintf("page version %d, want %d", v[0], PageVersion)}
	}
	b := v[1:]
	last := -1
	for len(b) > 0 {
		low := int(b[0])
		pos := int(page.Index) + low
		if low >= PageSpan || low <= last {
			return &PageError{Page: page, Pos: -1, Msg: fmt.Sprintf("entry offset %d after %d (want increasing, below %d)", low, last, PageSpan)}
		}
		n, w := binary.Uvarint(b[1:])
		if w <= 0 || w != uvarintLen(n) || n == 0 || n > uint64(len(b)-1-w) { // minimal, as AppendPage writes it
			return &PageError{Page: page, Pos: pos, Msg: fmt.Sprintf("bad record length (zero, not minimal, or past the %d bytes left)", len(b)-1)}
		}
		rec := b[1+w : 1+w+int(n)]
		b = b[1+w+int(n):]
		last = low
		if err := fn(Loc{Block: page.Block, Index: uint32(pos)}, rec); err != nil {
			return err
		}
	}
	if last < 0 {
		return &PageError{Page: page, Pos: -1, Msg: "no record"}
	}
	return nil
}

// PageRecords parses a page into its records by offset (nil: absent);
// the records are slices of v.
func PageRecords(page Loc, v []byte, into *[PageSpan][]byte) error {
	*into = [PageSpan][]byte{}
	return WalkPage(page, v, func(l Loc, rec []byte) error {
		into[l.Index-page.Index] = rec
		return nil
	})
}

// AppendPage writes a page's value from its records by offset (nil:
// absent); ok is false when it holds none (the page is to be deleted).
func AppendPage(dst []byte, recs *[PageSpan][]byte) (out []byte, ok bool) {
	dst = append(dst, PageVersion)
	for i, r := range recs {
		if r == nil {
			continue
		}
		ok = true
		dst = append(dst, byte(i))
		dst = binary.AppendUvarint(dst, uint64(len(r)))
		dst = append(dst, r...)
	}
	return dst, ok
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}
