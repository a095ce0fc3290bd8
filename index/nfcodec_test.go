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
// above the page's own (a hostile or damaged page) is refused before
// anything of that size is allocated.
func TestNFPageHostileLength(t *testing.T) {
	v := layout.AppendNFHeader(nil, 10)
	v = nfEncoder().EncodeAll(make([]byte, 48<<20), v) // a frame stating 48 MiB (of zeros: a few KB)
	var got [layout.NFPageSpan][]byte
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := nfPageEntries(Loc{Block: 9}, v, nil, &got)
	runtime.ReadMemStats(&after)
	var pe *layout.NFPageError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "nf page of block 9") {
		t.Fatalf("a block stating 48 MiB in a page of 10 bytes: %v", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Fatalf("%d bytes allocated to refuse it", n)
	}
}
