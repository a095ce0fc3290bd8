package index

import (
	"bytes"
	"errors"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
)

// Record pages (schema 11, layout/page.go): the records of up to 16
// consecutive positions of a block under one key. Every reader of a
// record goes through a recSource (a read transaction's, which keeps
// the last page it read, or a write transaction's page cache); every
// writer of a record through its write transaction's page cache, which
// writes each page it changed once, right before the Badger
// transaction commits (wtx.flush).

// recSource reads the record at a position: fn receives its bytes
// (valid only during fn); badger.ErrKeyNotFound when there is none.
type recSource interface {
	record(l Loc, fn func(v []byte) error) error
}

// txnRecs reads records in a read transaction; consecutive positions
// of one page read and parse the page once (as wtx.page does for a
// write transaction).
type txnRecs struct {
	txn   *badger.Txn
	key   []byte // the page last read
	found bool   // whether it was there
	buf   []byte // its value, copied (reused from page to page)
	recs  [layout.PageSpan][]byte
}

func newTxnRecs(txn *badger.Txn) *txnRecs { return &txnRecs{txn: txn} }

func (r *txnRecs) record(l Loc, fn func(v []byte) error) error {
	if !l.Known() {
		return loneRecord(r.txn, l, fn)
	}
	var kb [1 + layout.LocWidth]byte
	k := layout.PageKey(l).Append(kb[:0])
	if !bytes.Equal(k, r.key) {
		r.key, r.found = append(r.key[:0], k...), false
		item, err := r.txn.Get(k)
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
		case err != nil:
			r.key = r.key[:0]
			return err
		default:
			if r.buf, err = item.ValueCopy(r.buf[:0]); err == nil {
				err = layout.PageRecords(layout.PageLoc(l), r.buf, &r.recs)
			}
			if err != nil {
				r.key = r.key[:0] // not cached: read (and fail) again
				return err
			}
			r.found = true
		}
	}
	if !r.found {
		return badger.ErrKeyNotFound
	}
	rec := r.recs[l.Index-layout.PageLoc(l).Index]
	if rec == nil {
		return badger.ErrKeyNotFound
	}
	return fn(rec)
}

// loneRecord reads the record of a position without index, under its
// own key (it has no page).
func loneRecord(txn *badger.Txn, l Loc, fn func(v []byte) error) error {
	item, err := txn.Get(TxKey(l).Bytes())
	if err != nil {
		return err
	}
	return item.Value(fn)
}

// recordValue reads the record at l in a read transaction (one page
// read; see txnRecs to read many).
func recordValue(txn *badger.Txn, l Loc, fn func(v []byte) error) error {
	return newTxnRecs(txn).record(l, fn)
}

// walkTxKey calls fn with every record under one tx key (k, v): a
// page's, or a lone record.
func walkTxKey(k, v []byte, fn func(l Loc, rec []byte) error) error {
	l, err := layout.TxLoc(k)
	if err != nil {
		return err
	}
	if !layout.IsPageKey(k) {
		return fn(l, v)
	}
	if l.Index%layout.PageSpan != 0 {
		return fmt.Errorf("%w: tx key %x: a page key's index is not a multiple of %d", ErrBadKey, k, layout.PageSpan)
	}
	return layout.WalkPage(l, v, fn)
}

// recordPages is the record pages' kind for the write transaction's
// page cache (wpages.go).
var recordPages = &pageKind{
	span:  layout.PageSpan,
	first: layout.PageLoc,
	key:   func(page Loc) []byte { return TxKey(page).Bytes() },
	parse: func(page Loc, v []byte, vals [][]byte) error {
		// A copy (a page past Badger's value threshold lives in the
		// value log, valid only inside Value): the records are slices
		// of it, kept until the transaction ends.
		return layout.PageRecords(page, bytes.Clone(v), (*[layout.PageSpan][]byte)(vals))
	},
	build: func(_ Loc, vals [][]byte) ([]byte, bool, error) {
		recs := (*[layout.PageSpan][]byte)(vals)
		v, ok := layout.AppendPage(make([]byte, 0, pageCap(recs)), recs)
		return v, ok, nil
	},
}

// record reads the record at l as this write transaction sees it.
func (w *wtx) record(l Loc, fn func(v []byte) error) error {
	if !l.Known() {
		return loneRecord(w.txn, l, fn)
	}
	rec, err := w.pageValue(&w.pages, l)
	if err != nil {
		return err
	}
	if rec == nil {
		return badger.ErrKeyNotFound
	}
	return fn(rec)
}

// setRecord writes the record at l (in its page; written by flush).
func (w *wtx) setRecord(l Loc, v []byte) error {
	if !l.Known() {
		return w.ix.set(w.txn, TxKey(l).Bytes(), v)
	}
	return w.setPageValue(&w.pages, l, v)
}

// delRecord deletes the record at l.
func (w *wtx) delRecord(l Loc) error {
	if !l.Known() {
		return w.ix.del(w.txn, TxKey(l).Bytes())
	}
	return w.setPageValue(&w.pages, l, nil)
}

// flush writes every page the transaction changed, in key order, once
// (an empty page is deleted). Every path that commits a record change
// calls it right before the commit.
func (w *wtx) flush() error {
	if err := w.flushPostings(); err != nil { // postings.go
		return err
	}
	if err := w.flushPages(&w.nfPages); err != nil { // the NF pages (nfpages.go)
		return err
	}
	return w.flushPages(&w.pages)
}

func pageCap(recs *[layout.PageSpan][]byte) int {
	n := 1
	for _, r := range recs {
		if r != nil {
			n += 4 + len(r)
		}
	}
	return n
}
