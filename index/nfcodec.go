package index

import (
	"fmt"
	"slices"
	"sync"

	"github.com/klauspost/compress/s2"

	"github.com/flowq/flowq/index/layout"
)

// The NF pages' codec (layout/nfpage.go gives the format; the codec's
// package reaches I/O, which layout may not): a page's body compressed
// as one S2 block.

// nfBodies pools the uncompressed bodies the writer builds.
var nfBodies = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

// appendNFPage writes an NF page's value from its NF values by offset
// (nil: absent); ok is false when it holds none (the page is to be
// deleted).
func appendNFPage(dst []byte, nfs *[layout.NFPageSpan][]byte) (out []byte, ok bool, err error) {
	bp := nfBodies.Get().(*[]byte)
	body, ok := layout.AppendNFBody((*bp)[:0], nfs)
	defer func() { *bp = body[:0]; nfBodies.Put(bp) }()
	if !ok {
		return dst, false, nil
	}
	m := s2.MaxEncodedLen(len(body))
	if len(body) > layout.MaxNFPageBody || m < 0 {
		return dst, false, fmt.Errorf("%d bytes of normal forms, above the %d a page may hold", len(body), layout.MaxNFPageBody)
	}
	dst = layout.AppendNFHeader(dst, len(body))
	h := len(dst)
	dst = slices.Grow(dst, m)[:h+m]
	c := s2.Encode(dst[h:], body) // into dst's storage: len(dst[h:]) is enough
	return dst[:h+len(c)], true, nil
}

// nfPageBody decompresses an NF page's value (its key's loc page) into
// dst's storage when it is large enough, and returns the body.
func nfPageBody(page Loc, v []byte, dst []byte) ([]byte, error) {
	n, c, err := layout.NFPageHeader(page, v)
	if err != nil {
		return nil, err
	}
	// The block states its decoded length first: checked against the
	// page's before anything is allocated, and decoded into n bytes.
	if m, err := s2.DecodedLen(c); err != nil || m != n {
		return nil, &layout.NFPageError{Page: page, Pos: -1, Msg: fmt.Sprintf("corrupt compressed data: it states %d bytes (%v), the page %d", m, err, n)}
	}
	if cap(dst) < n {
		dst = make([]byte, 0, n)
	}
	body, err := s2.Decode(dst[:n], c)
	if err != nil {
		return nil, &layout.NFPageError{Page: page, Pos: -1, Msg: "corrupt compressed data: " + err.Error()}
	}
	if len(body) != n {
		return nil, &layout.NFPageError{Page: page, Pos: -1, Msg: fmt.Sprintf("body of %d bytes, the page says %d", len(body), n)}
	}
	return body, nil
}

// nfPageEntries decompresses an NF page and parses it into its NF
// values by offset (nil: absent); the values are slices of the body
// returned, which uses dst's storage when it is large enough.
func nfPageEntries(page Loc, v []byte, dst []byte, into *[layout.NFPageSpan][]byte) ([]byte, error) {
	*into = [layout.NFPageSpan][]byte{}
	body, err := nfPageBody(page, v, dst)
	if err != nil {
		return nil, err
	}
	return body, layout.NFBodyEntries(page, body, into)
}
