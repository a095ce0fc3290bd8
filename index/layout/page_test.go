package layout

import (
	"bytes"
	"errors"
	"testing"

	"github.com/flowq/flowq/normalform"
)

// TestPageKeys: a known position's page is its block's, its index
// rounded down to PageSpan (a hash the Loc carries is not part of it);
// a position without index is its own key; IsPageKey tells the two by
// length; a page's key is its first position's tx key.
func TestPageKeys(t *testing.T) {
	h := normalform.Hash{1, 2, 3}
	for _, c := range []struct {
		l    Loc
		want Loc
	}{
		{Loc{Block: 9, Index: 0}, Loc{Block: 9, Index: 0}},
		{Loc{Block: 9, Index: PageSpan - 1}, Loc{Block: 9, Index: 0}},
		{Loc{Block: 9, Index: PageSpan}, Loc{Block: 9, Index: PageSpan}},
		{Loc{Block: 9, Index: 5*PageSpan + 3, Tx: h}, Loc{Block: 9, Index: 5 * PageSpan}},
		{Loc{Block: 9, Index: UnknownIndex, Tx: h}, Loc{Block: 9, Index: UnknownIndex, Tx: h}},
	} {
		if got := PageLoc(c.l); got != c.want {
			t.Errorf("PageLoc(%s) = %s, want %s", c.l, got, c.want)
		}
		k := PageKey(c.l).Bytes()
		if !bytes.Equal(k, TxKey(c.want).Bytes()) || IsPageKey(k) != c.l.Known() {
			t.Errorf("PageKey(%s) = %x (page %v)", c.l, k, IsPageKey(k))
		}
	}
}

// TestPageRoundTrip: a page written from records by offset walks back
// to the same records at the same positions, PageRecord finds each (and
// nothing where none is), and an empty set of records writes no page.
func TestPageRoundTrip(t *testing.T) {
	page := Loc{Block: 70, Index: 3 * PageSpan}
	var recs [PageSpan][]byte
	if _, ok := AppendPage(nil, &recs); ok {
		t.Fatal("an empty page is written")
	}
	recs[0], recs[2], recs[PageSpan-1] = []byte("a"), bytes.Repeat([]byte("b"), 300), []byte("c")
	v, ok := AppendPage(nil, &recs)
	// The version byte; per record its offset, its length (uvarint) and bytes.
	const want = 1 + (1 + 1 + 1) + (1 + 2 + 300) + (1 + 1 + 1)
	if !ok || v[0] != PageVersion || len(v) != want {
		t.Fatalf("page %x (%v), size %d want %d", v, ok, len(v), want)
	}
	var back [PageSpan][]byte
	if err := PageRecords(page, v, &back); err != nil || !equalRecs(&back, &recs) {
		t.Fatalf("PageRecords: %v", err)
	}
	err := PageRecords(page, v[:len(v)-1], &back)
	var pe *PageError
	if !errors.As(err, &pe) || pe.Page != page || !errors.Is(err, ErrBadRecord) {
		t.Fatalf("a page cut short: %v", err)
	}
}

func equalRecs(a, b *[PageSpan][]byte) bool {
	for i := range a {
		if !bytes.Equal(a[i], b[i]) || (a[i] == nil) != (b[i] == nil) {
			return false
		}
	}
	return true
}
