package index

import (
	"bytes"
	"errors"
	"sort"

	badger "github.com/dgraph-io/badger/v4"
)

// A write transaction's page cache, one for each kind of page: the
// record pages (pages.go) and the NF pages (nfpages.go). A page is
// read at most once a Badger transaction (not at all when w.abs says
// its block held nothing when the transaction began, as for postings), changed in memory, and written once,
// right before the commit (wtx.flush), in key order; an emptied page is
// deleted. What differs between the kinds is in their pageKind.

// pageKind says how one kind of page is keyed, read and written.
type pageKind struct {
	span  uint32
	first func(l Loc) Loc       // the first position of l's page
	key   func(page Loc) []byte // the page's Badger key
	parse func(page Loc, v []byte, vals [][]byte) error
	// parse reads a page's value v (valid only during the call) into
	// vals (span entries; nil: absent), which must not alias v.
	build func(page Loc, vals [][]byte) (v []byte, ok bool, err error)
	// build writes a page's value from its entries; ok is false when
	// none is left (the page is to be deleted).
}

// wpage is a page a write transaction has read or changed.
type wpage struct {
	loc   Loc      // its first position
	vals  [][]byte // by offset from loc; nil: absent
	dirty bool
}

// pageCache is a write transaction's pages of one kind.
type pageCache struct {
	kind  *pageKind
	pages map[Loc]*wpage
}

// page is the page of c's kind that holds position l (known index).
func (w *wtx) page(c *pageCache, l Loc) (*wpage, error) {
	pl := c.kind.first(l)
	if p, ok := c.pages[pl]; ok {
		return p, nil
	}
	p := &wpage{loc: pl, vals: make([][]byte, c.kind.span)}
	if !w.abs.posAbsent(l) {
		item, err := w.txn.Get(c.kind.key(pl))
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
		case err != nil:
			return nil, err
		default:
			if err := item.Value(func(v []byte) error { return c.kind.parse(pl, v, p.vals) }); err != nil {
				return nil, err
			}
		}
	}
	if c.pages == nil {
		c.pages = map[Loc]*wpage{}
	}
	c.pages[pl] = p
	return p, nil
}

// pageValue reads the entry at l (known index) as this write
// transaction sees it: nil when absent.
func (w *wtx) pageValue(c *pageCache, l Loc) ([]byte, error) {
	p, err := w.page(c, l)
	if err != nil {
		return nil, err
	}
	return p.vals[l.Index-p.loc.Index], nil
}

// setPageValue sets (v non-nil) or removes (v nil) the entry at l
// (known index); a page whose entry does not change stays clean.
func (w *wtx) setPageValue(c *pageCache, l Loc, v []byte) error {
	p, err := w.page(c, l)
	if err != nil {
		return err
	}
	i := l.Index - p.loc.Index
	if (v == nil) != (p.vals[i] == nil) || !bytes.Equal(p.vals[i], v) {
		p.vals[i], p.dirty = v, true
	}
	return nil
}

// flushPages writes every page of c the transaction changed.
func (w *wtx) flushPages(c *pageCache) error {
	ps := make([]*wpage, 0, len(c.pages))
	for _, p := range c.pages {
		if p.dirty {
			ps = append(ps, p)
		}
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].loc.Less(ps[j].loc) })
	for _, p := range ps {
		v, ok, err := c.kind.build(p.loc, p.vals)
		if err != nil {
			return err
		}
		if ok {
			err = w.ix.set(w.txn, c.kind.key(p.loc), v)
		} else {
			err = w.ix.del(w.txn, c.kind.key(p.loc))
		}
		if err != nil {
			return err
		}
		p.dirty = false // p.vals still holds the entries written
	}
	return nil
}
