package index

import (
	"bytes"
	"errors"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
)

// NF pages (schema 12, layout/nfpage.go): the normal forms of up to
// layout.NFPageSpan consecutive positions of a block under one key,
// compressed together. A record's keys (layout.Record.Keys) still name
// its NF by its own position (NFKey(loc)): the write transaction routes
// that key into its page (setKey, delKey: wtx.setNF, wtx.delNF), and
// every reader reads it through an nfReader, which keeps the last page
// it decompressed. A lone record's NF (index unknown) keeps its own key.

// nfKeyLoc is the position an NF key written by setKey names, and
// whether it goes into a page (its index known).
func nfKeyLoc(k []byte) (Loc, bool, error) {
	key, err := ParseKey(k)
	if err != nil {
		return Loc{}, false, err
	}
	return key.Loc, key.Loc.Known(), nil
}

// nfPages is the NF pages' kind for the write transaction's page cache
// (wpages.go).
var nfPages = &pageKind{
	span:  layout.NFPageSpan,
	first: layout.NFPageLoc,
	key:   func(page Loc) []byte { return layout.NFKey(page).Bytes() },
	parse: func(page Loc, v []byte, vals [][]byte) error {
		// The values are slices of the body, a buffer of its own, kept
		// until the transaction ends.
		_, err := nfPageEntries(page, v, nil, (*[layout.NFPageSpan][]byte)(vals))
		return err
	},
	build: func(page Loc, vals [][]byte) ([]byte, bool, error) {
		v, ok, err := appendNFPage(nil, (*[layout.NFPageSpan][]byte)(vals))
		if err != nil {
			return nil, false, fmt.Errorf("%s: %w", nfPageName(page), err)
		}
		return v, ok, nil
	},
}

// nfKey writes (v non-nil) or deletes (v nil) an NF key of a record,
// into its page when its index is known; handled is false for any other
// key.
func (w *wtx) nfKey(k, v []byte, del bool) (handled bool, err error) {
	if len(k) == 0 || k[0] != byte(KindNF) {
		return false, nil
	}
	l, paged, err := nfKeyLoc(k)
	if err != nil {
		return true, err
	}
	if !paged {
		if del {
			return true, w.ix.del(w.txn, k)
		}
		return true, w.ix.set(w.txn, k, v)
	}
	if del {
		v = nil
	}
	return true, w.setPageValue(&w.nfPages, l, v)
}

func nfPageName(l Loc) string {
	return fmt.Sprintf("nf page of block %d (positions %d..%d)", l.Block, l.Index, l.Index+layout.NFPageSpan-1)
}

// nfReader reads NF values in a read transaction; the NFs of one page
// read and decompress it once.
type nfReader struct {
	txn   *badger.Txn
	key   []byte // the page last read
	found bool   // whether it was there
	body  []byte // its body (reused from page to page)
	nfs   [layout.NFPageSpan][]byte
}

func newNFReader(txn *badger.Txn) *nfReader { return &nfReader{txn: txn} }

// nf calls fn with the NF value at l (valid only during fn);
// badger.ErrKeyNotFound when there is none.
func (r *nfReader) nf(l Loc, fn func(v []byte) error) error {
	if !l.Known() {
		item, err := r.txn.Get(layout.NFKey(l).Bytes())
		if err != nil {
			return err
		}
		return item.Value(fn)
	}
	var kb [1 + layout.LocWidth]byte
	k := layout.NFPageKey(l).Append(kb[:0])
	if !bytes.Equal(k, r.key) {
		r.key, r.found = append(r.key[:0], k...), false
		item, err := r.txn.Get(k)
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
		case err != nil:
			r.key = r.key[:0]
			return err
		default:
			pl := layout.NFPageLoc(l)
			err = item.Value(func(v []byte) error {
				body, err := nfPageEntries(pl, v, r.body, &r.nfs)
				if body != nil {
					r.body = body
				}
				return err
			})
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
	v := r.nfs[l.Index-layout.NFPageLoc(l).Index]
	if v == nil {
		return badger.ErrKeyNotFound
	}
	return fn(v)
}

// set sets rec's NF from its NF key.
func (r *nfReader) set(rec *Record) error {
	err := r.nf(rec.Loc, rec.SetNF)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return fmt.Errorf("tx %s at %s: its normal form (key %x) is missing", rec.Hash.Hex(), rec.Loc, layout.NFPageKey(rec.Loc).Bytes())
	}
	return err
}

// walkNFKey calls fn with every NF value under one NF key (k, v): a
// page's, or a lone NF.
func walkNFKey(k, v []byte, fn func(l Loc, nf []byte) error) error {
	key, err := ParseKey(k)
	if err != nil {
		return err
	}
	if !layout.IsNFPageKey(k) {
		return fn(key.Loc, v)
	}
	if key.Loc.Index%layout.NFPageSpan != 0 {
		return fmt.Errorf("%w: nf key %x: a page key's index is not a multiple of %d", ErrBadKey, k, layout.NFPageSpan)
	}
	body, err := nfPageBody(key.Loc, v, nil)
	if err != nil {
		return err
	}
	return layout.WalkNFBody(key.Loc, body, fn)
}
