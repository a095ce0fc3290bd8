package index

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/flowq/flowq/index/layout"
)

// TestNFPageCodec: a page reads back the NFs written, at their offsets,
// and is smaller than they are; damage (its data changed, cut short, its
// length disagreeing) is a page error naming the block and positions.
func TestNFPageCodec(t *testing.T) {
	var nfs [layout.NFPageSpan][]byte
	raw := 0
	for i := 0; i < layout.NFPageSpan; i += 3 {
		nfs[i] = []byte(strings.Repeat(fmt.Sprintf("step %d swap pool 0x%04x; ", i%5, i), 10+i%7))
		raw += len(nfs[i])
	}
	page := Loc{Block: 42, Index: layout.NFPageSpan}
	v, ok, err := appendNFPage(nil, &nfs)
	if err != nil || !ok || v[1] != layout.NFCodecZstd {
		t.Fatalf("write: %v %v", ok, err)
	}
	if len(v) >= raw/2 {
		t.Fatalf("%d bytes for %d raw: not compressed", len(v), raw)
	}
	var got [layout.NFPageSpan][]byte
	if _, err := nfPageEntries(page, v, nil, &got); err != nil {
		t.Fatalf("read: %v", err)
	}
	for i := range got {
		if !bytes.Equal(got[i], nfs[i]) || (got[i] == nil) != (nfs[i] == nil) {
			t.Fatalf("offset %d read back otherwise", i)
		}
	}
	for name, damage := range map[string]func([]byte) []byte{
		"data": func(v []byte) []byte {
			v = bytes.Clone(v)
			copy(v[len(v)/2:], bytes.Repeat([]byte{0xa5}, 24))
			return v
		},
		"cut":    func(v []byte) []byte { return v[:len(v)-7] },
		"length": func(v []byte) []byte { v = bytes.Clone(v); v[2]++; return v }, // the body's length, one more
	} {
		_, err := nfPageEntries(page, damage(v), nil, &got)
		var pe *layout.NFPageError
		if !errors.As(err, &pe) || !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), fmt.Sprintf("nf page of block 42 (positions %d..%d)", layout.NFPageSpan, 2*layout.NFPageSpan-1)) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if _, ok, err := appendNFPage(nil, &[layout.NFPageSpan][]byte{}); ok || err != nil {
		t.Fatalf("an empty page: ok %v, %v (want none, to delete)", ok, err)
	}
}

// TestNFPageHostileLength: a page whose zstd frame states a length far
// above the page's own, or whose page and frame agree on a length far
// above what its compressed bytes may stand for (layout.NFMaxExpansion:
// zstd's run-length blocks let a few bytes stand for megabytes), a
// hostile or damaged page, is refused before anything of that size is
// allocated.
func TestNFPageHostileLength(t *testing.T) {
	zeros := nfEncoder().EncodeAll(make([]byte, 48<<20), nil) // a frame stating 48 MiB of zeros: a few KB
	for name, v := range map[string][]byte{
		"the frame states more than the page": append(layout.AppendNFHeader(nil, layout.NFCodecZstd, 10), zeros...),
		"both state more than the bytes hold": append(layout.AppendNFHeader(nil, layout.NFCodecZstd, 48<<20), zeros...),
	} {
		var got [layout.NFPageSpan][]byte
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := nfPageEntries(Loc{Block: 9}, v, nil, &got)
		runtime.ReadMemStats(&after)
		var pe *layout.NFPageError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), "nf page of block 9") {
			t.Fatalf("%s (48 MiB in %d bytes): %v", name, len(v), err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
			t.Fatalf("%s: %d bytes allocated to refuse it", name, n)
		}
	}
}

// TestNFPageUncompressed: a page that would compress further than a
// reader accepts (identical NFs) is written as it is (codec none) and
// reads back; an uncompressed page whose length disagrees is refused.
func TestNFPageUncompressed(t *testing.T) {
	var nfs [layout.NFPageSpan][]byte
	same := bytes.Repeat([]byte{7}, 200<<10) // 128 of them: 25 MiB, compressed to a few KB
	for i := range nfs {
		nfs[i] = same
	}
	v, ok, err := appendNFPage(nil, &nfs)
	if err != nil || !ok || v[1] != layout.NFCodecNone {
		t.Fatalf("write: %v %v, codec %d (want %d, none)", ok, err, v[1], layout.NFCodecNone)
	}
	var got [layout.NFPageSpan][]byte
	if _, err := nfPageEntries(Loc{Block: 3}, v, nil, &got); err != nil || !sameNFs(&got, &nfs) {
		t.Fatalf("read: %v", err)
	}
	// a page of NFs that compress as real ones do stays compressed
	nfs = [layout.NFPageSpan][]byte{}
	nfs[5] = []byte(strings.Repeat("swap pool 0x1234 token 0xabcd; ", 40))
	if v, _, _ := appendNFPage(nil, &nfs); v[1] != layout.NFCodecZstd {
		t.Fatalf("codec %d for a page that compresses 30 times", v[1])
	}
	cut := append(layout.AppendNFHeader(nil, layout.NFCodecNone, 100), make([]byte, 99)...)
	if _, err := nfPageEntries(Loc{Block: 3}, cut, nil, &got); err == nil || !strings.Contains(err.Error(), "uncompressed body of 99 bytes, the page says 100") {
		t.Fatalf("an uncompressed page cut short: %v", err)
	}
}
