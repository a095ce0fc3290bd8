package layout

import (
	"encoding/binary"
	"fmt"

	"github.com/flowq/flowq/normalform"
)

// NF pages (schema 12, issue 22; zstd since schema 13). The normal forms of a block's known
// positions are grouped NFPageSpan consecutive positions to a key and
// compressed together: neighbouring transactions' NF values repeat
// their structure (the same strategies, step logs and trees, the
// block's hash in each), which a compressor finds across a page and
// not within one value.
//
//	key   0x1b u40 block u24 (index &^ (NFPageSpan-1))   the NF key of the page's first position (9 bytes)
//	value u8 NFPageVersion, u8 codec (NFCodecZstd; NFCodecNone), uvarint n (the body's length), the compressed body (the body)
//	body  per NF present, in index order: u8 (index & (NFPageSpan-1)), uvarint length, the NF value (record.go: NFValue, unchanged)
//
// The body's length comes before the compressed bytes, and a reader
// refuses a page whose n is above MaxNFPageBody, or whose compressed
// block states another length, before it decompresses: a damaged or
// hostile page cannot make a reader allocate without bound. This
// package gives the format; the store compresses and decompresses
// (index/nfcodec.go: the codec's package reaches I/O, which layout may
// not).
//
// Why zstd and NFPageSpan 128: scans never read NF keys (they read
// record pages), so a larger page costs only the readers that show an
// analysis (show, draw, export, verify, the block findings' fallback),
// which decompress one page for one NF, and the writer, which compresses
// a page each time a batch changes it. On the synthetic workload (pages
// of a block's 100 NFs, 359 B a transaction uncompressed) S2 (schema 12)
// took 166 B a transaction, zstd's fastest level (klauspost/compress,
// one shared encoder) 127, for about 1.6 µs of the writer's CPU a
// transaction more and about 40 µs more to decompress a page (21 -> 60;
// internal/workload BenchmarkNFPageCodecs); zstd's default level took
// 126 for half as much again of the encoder's CPU.
//
// An NF whose record's index is unknown (its loc holds 0xffffff and the
// hash: a 41-byte key) keeps its own key, its value NFValue alone, as
// before; such keys sort after their block's pages. A reader tells a
// page from a lone NF by the key's length (IsNFPageKey). A page holds at
// least one NF: an empty one is deleted.

// NFPageSpan is the number of consecutive positions an NF page holds (a
// power of two, at most 256: an entry's offset is a byte).
const NFPageSpan = 128

// NFPageVersion is an NF page value's first byte.
const NFPageVersion = 1

// The codec bytes. NFCodecZstd: the body compressed as one zstd frame
// that states its content size (github.com/klauspost/compress/zstd, its
// fastest level; index/nfcodec.go compresses and decompresses), at most
// NFMaxExpansion(len) bytes from len compressed bytes. NFCodecNone: the
// body as it is, for the rare page that compresses further than that.
// Codec 1 was S2 (schema 12), which this schema does not read.
const (
	NFCodecNone = 0
	NFCodecZstd = 2
)

// NFMaxExpansion bounds the body a zstd page of c compressed bytes may
// state: 128 times c, and 64 KiB. A reader refuses a page stating more
// before it allocates, so a small damaged or hostile page cannot make it
// allocate and decode up to MaxNFPageBody (zstd's run-length blocks let
// 20 bytes stand for megabytes); the writer stores a page that would
// compress further uncompressed (NFCodecNone), so no page it writes is
// refused. Real pages compress 3 to 4 times.
func NFMaxExpansion(c int) int { return 128*c + 64<<10 }

// MaxNFPageBody bounds an NF page's uncompressed body: 64 MiB (a
// transaction whose NF is larger than Badger takes in one write is
// dropped by the writer long before).
const MaxNFPageBody = 64 << 20

// NFPageLoc is the position of the first NF an NF page holding l would
// hold: l with its index rounded down to a multiple of NFPageSpan. A loc
// whose index is unknown is its own.
func NFPageLoc(l Loc) Loc {
	if l.Known() {
		l.Index &^= NFPageSpan - 1
		l.Tx = normalform.Hash{} // as in its key
	}
	return l
}

// NFPageKey is the key under which the NF of the record at l is stored:
// its page's (its own when its index is unknown).
func NFPageKey(l Loc) Key { return NFKey(NFPageLoc(l)) }

// IsNFPageKey reports whether an NF key is a page's (not a lone NF's).
func IsNFPageKey(k []byte) bool { return len(k) == 1+LocWidth && Kind(k[0]) == KindNF }

// NFPageError reports an NF page whose value does not read.
type NFPageError struct {
	Page Loc // the page's first position
	Pos  int // the index of the entry that failed, or -1 when not known
	Msg  string
}

func (e *NFPageError) Error() string {
	s := fmt.Sprintf("nf page of block %d (positions %d..%d)", e.Page.Block, e.Page.Index, e.Page.Index+NFPageSpan-1)
	if e.Pos >= 0 {
		s += fmt.Sprintf(", index %d", e.Pos)
	}
	return s + ": " + e.Msg
}

// Unwrap makes a damaged page a bad record (errors.Is ErrBadRecord).
func (e *NFPageError) Unwrap() error { return ErrBadRecord }

// AppendNFBody writes an NF page's body (uncompressed) from its NF
// values by offset (nil: absent); ok is false when it holds none (the
// page is to be deleted). The store compresses it (index/nfcodec.go:
// layout does no I/O, and the codec's package reaches some).
func AppendNFBody(dst []byte, nfs *[NFPageSpan][]byte) (out []byte, ok bool) {
	for i, v := range nfs {
		if v == nil {
			continue
		}
		ok = true
		dst = append(dst, byte(i))
		dst = binary.AppendUvarint(dst, uint64(len(v)))
		dst = append(dst, v...)
	}
	return dst, ok
}

// AppendNFHeader writes an NF page value's header, before its body of n
// bytes in the codec's form.
func AppendNFHeader(dst []byte, codec byte, n int) []byte {
	return binary.AppendUvarint(append(dst, NFPageVersion, codec), uint64(n))
}

// NFPageHeader reads an NF page value's header (its key's loc page): its
// codec, the body's length n (at most MaxNFPageBody, and for a zstd page
// at most NFMaxExpansion of the compressed bytes; for an uncompressed
// one, their number) and the body in the codec's form.
func NFPageHeader(page Loc, v []byte) (codec byte, n int, compressed []byte, err error) {
	codec, n, compressed, err = nfPageHeader(page, v)
	if err != nil {
		return 0, 0, nil, err
	}
	switch {
	case codec == NFCodecNone && n != len(compressed):
		err = &NFPageError{Page: page, Pos: -1, Msg: fmt.Sprintf("uncompressed body of %d bytes, the page says %d", len(compressed), n)}
	case codec == NFCodecZstd && n > NFMaxExpansion(len(compressed)):
		err = &NFPageError{Page: page, Pos: -1, Msg: fmt.Sprintf("a body of %d bytes stated for %d compressed (more than %d)", n, len(compressed), NFMaxExpansion(len(compressed)))}
	}
	return codec, n, compressed, err
}

func nfPageHeader(page Loc, v []byte) (codec byte, n int, compressed []byte, err error) {
	if len(v) < 2 {
		return 0, 0, nil, &NFPageError{Page: page, Pos: -1, Msg: fmt.Sprintf("value of %d bytes, too short for its version and codec", len(v))}
	}
	if v[0] != NFPageVersion {
		return 0, 0, nil, &NFPageError{Page: page, Pos: -1, Msg: fmt.Sprintf("nf page version %d, want %d", v[0], NFPageVersion)}
	}
	if v[1] != NFCodecZstd && v[1] != NFCodecNone {
		return 0, 0, nil, &NFPageError{Page: page, Pos: -1, Msg: fmt.Sprintf("unknown codec %d (want %d, zstd, or %d, none)", v[1], NFCodecZstd, NFCodecNone)}
	}
	u, w := binary.Uvarint(v[2:])
	if w <= 0 || u == 0 || u > MaxNFPageBody {
		return 0, 0, nil, &NFPageError{Page: page, Pos: -1, Msg: fmt.Sprintf("bad body length (unreadable, zero, or above %d)", MaxNFPageBody)}
	}
	return v[1], int(u), v[2+w:], nil
}

// WalkNFBody calls fn with every NF value of a page's body (NFPageBody)
// in index order, each with its position; nf is a slice of body.
func WalkNFBody(page Loc, body []byte, fn func(l Loc, nf []byte) error) error {
	b := body
	last := -1
	for len(b) > 0 {
		low := int(b[0])
		pos := int(page.Index) + low
		if low >= NFPageSpan || low <= last {
			return &NFPageError{Page: page, Pos: -1, Msg: fmt.Sprintf("entry offset %d after %d (want increasing, below %d)", low, last, NFPageSpan)}
		}
		n, w := binary.Uvarint(b[1:])
		if w <= 0 || w != uvarintLen(n) || n == 0 || n > uint64(len(b)-1-w) {
			return &NFPageError{Page: page, Pos: pos, Msg: fmt.Sprintf("bad nf length (zero, not minimal, or past the %d bytes left)", len(b)-1)}
		}
		nf := b[1+w : 1+w+int(n)]
		b = b[1+w+int(n):]
		last = low
		if err := fn(Loc{Block: page.Block, Index: uint32(pos)}, nf); err != nil {
			return err
		}
	}
	if last < 0 {
		return &NFPageError{Page: page, Pos: -1, Msg: "no nf"}
	}
	return nil
}

// NFBodyEntries parses a page's body into its NF values by offset
// (nil: absent); the values are slices of body.
func NFBodyEntries(page Loc, body []byte, into *[NFPageSpan][]byte) error {
	*into = [NFPageSpan][]byte{}
	return WalkNFBody(page, body, func(l Loc, nf []byte) error {
		into[l.Index-page.Index] = nf
		return nil
	})
}
