package index

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/flowq/flowq/index/layout"
)

// The NF pages' codec (layout/nfpage.go gives the format; the codec's
// package reaches I/O, which layout may not): a page's body compressed
// as one zstd frame, at the fastest level, stating its content size (or
// stored as it is, when it compresses further than a reader accepts:
// layout.NFMaxExpansion).

// nfBodies pools the uncompressed bodies the writer builds.
var nfBodies = sync.Pool{New: func() any { b := make([]byte, 0, 32<<10); return &b }}

// The codec's encoder and decoder, made once and shared: EncodeAll and
// DecodeAll may be called from several goroutines at once. The decoder
// refuses a frame that would take more memory than a page's bound
// (layout.MaxNFPageBody) or that states no content size; the reader
// also checks the stated size against the page's before decoding.
var (
	nfEncOnce sync.Once
	nfEnc     *zstd.Encoder
	nfDecOnce sync.Once
	nfDec     *zstd.Decoder
)

func nfEncoder() *zstd.Encoder {
	nfEncOnce.Do(func() {
		var err error
		nfEnc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false),
			zstd.WithZeroFrames(true), zstd.WithSingleSegment(true))
		if err != nil {
			panic("index: the NF pages' zstd encoder: " + err.Error()) // options fixed here: never
		}
	})
	return nfEnc
}

func nfDecoder() *zstd.Decoder {
	nfDecOnce.Do(func() {
		var err error
		nfDec, err = zstd.NewReader(nil, zstd.WithDecoderMaxMemory(layout.MaxNFPageBody), zstd.IgnoreChecksum(true))
		if err != nil {
			panic("index: the NF pages' zstd decoder: " + err.Error()) // options fixed here: never
		}
	})
	return nfDec
}

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
	if len(body) > layout.MaxNFPageBody {
		return dst, false, fmt.Errorf("%d bytes of normal forms, above the %d a page may hold", len(body), layout.MaxNFPageBody)
	}
	h := len(dst)
	dst = layout.AppendNFHeader(dst, layout.NFCodecZstd, len(body))
	c := len(dst)
	dst = nfEncoder().EncodeAll(body, dst)
	if len(body) > layout.NFMaxExpansion(len(dst)-c) { // compresses further than a reader takes: stored as it is
		dst = append(layout.AppendNFHeader(dst[:h], layout.NFCodecNone, len(body)), body...)
	}
	return dst, true, nil
}

// nfPageBody decompresses an NF page's value (its key's loc page) into
// dst's storage when it is large enough, and returns the body.
func nfPageBody(page Loc, v []byte, dst []byte) ([]byte, error) {
	codec, n, c, err := layout.NFPageHeader(page, v)
	if err != nil {
		return nil, err
	}
	if codec == layout.NFCodecNone {
		return append(dst[:0], c...), nil
	}
	// The frame states its decoded length first: checked against the
	// page's before anything is allocated, and decoded into n bytes.
	var h zstd.Header
	if err := h.Decode(c); err != nil || !h.HasFCS || h.FrameContentSize != uint64(n) {
		m := int64(-1)
		if err == nil && h.HasFCS {
			m = int64(h.FrameContentSize)
		}
		return nil, &layout.NFPageError{Page: page, Pos: -1, Msg: fmt.Sprintf("corrupt compressed data: it states %d bytes (%v), the page %d", m, err, n)}
	}
	if cap(dst) < n {
		dst = make([]byte, 0, n)
	}
	body, err := nfDecoder().DecodeAll(c, dst[:0])
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
