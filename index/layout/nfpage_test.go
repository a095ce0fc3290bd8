package layout

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// TestNFPageBody: a body written from NFs at some offsets reads back
// the NFs written, at their offsets; a header of another version or
// codec, or with a body length zero, past the bound or unreadable, is a
// page error naming its block and positions.
func TestNFPageBody(t *testing.T) {
	var nfs [NFPageSpan][]byte
	for i := 0; i < NFPageSpan; i += 3 {
		nfs[i] = bytes.Repeat([]byte{byte(i), 7}, 1+i%9)
	}
	body, ok := AppendNFBody(nil, &nfs)
	if !ok {
		t.Fatal("a body with NFs: not ok")
	}
	page := Loc{Block: 42, Index: NFPageSpan}
	var got [NFPageSpan][]byte
	if err := NFBodyEntries(page, body, &got); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if !bytes.Equal(got[i], nfs[i]) || (got[i] == nil) != (nfs[i] == nil) {
			t.Fatalf("offset %d read back otherwise", i)
		}
	}
	if _, ok := AppendNFBody(nil, &[NFPageSpan][]byte{}); ok {
		t.Fatal("an empty page: ok (want none, to delete)")
	}
	v := AppendNFHeader(nil, NFCodecZstd, 300)
	if codec, n, c, err := NFPageHeader(page, append(v, 1, 2)); err != nil || codec != NFCodecZstd || n != 300 || !bytes.Equal(c, []byte{1, 2}) {
		t.Fatalf("a header read back: %d %d %x %v", codec, n, c, err)
	}
	if codec, n, c, err := NFPageHeader(page, append(AppendNFHeader(nil, NFCodecNone, 2), 1, 2)); err != nil || codec != NFCodecNone || n != 2 || !bytes.Equal(c, []byte{1, 2}) {
		t.Fatalf("an uncompressed page's header read back: %d %d %x %v", codec, n, c, err)
	}
	for name, v := range map[string][]byte{
		"version":          {9, NFCodecZstd, 1, 0},
		"codec":            {NFPageVersion, 7, 1, 0},
		"short":            {NFPageVersion},
		"zero":             {NFPageVersion, NFCodecZstd, 0, 0},
		"huge":             AppendNFHeader(nil, NFCodecZstd, MaxNFPageBody+1),
		"cut":              {NFPageVersion, NFCodecZstd, 0x80},
		"past expansion":   append(AppendNFHeader(nil, NFCodecZstd, NFMaxExpansion(3)+1), 1, 2, 3),
		"uncompressed cut": append(AppendNFHeader(nil, NFCodecNone, 3), 1, 2),
	} {
		_, _, _, err := NFPageHeader(page, v)
		var pe *NFPageError
		if !errors.As(err, &pe) || !errors.Is(err, ErrBadRecord) || !strings.Contains(err.Error(), "nf page of block 42 (positions 128..255)") {
			t.Fatalf("%s: %v", name, err)
		}
	}
}
