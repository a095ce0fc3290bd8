package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// Verify checks the index's invariants: every key parses; every record
// decodes, names only ids the dictionary holds, and has all its
// secondary keys; every secondary key belongs to the record at its
// position, which has it; every txhash key lists, in order, exactly the
// positions of the records whose hash begins so; every first-seen key
// names the least position of its bot and shape; the dictionary's two
// directions agree and its ids are below the next one. It reports the
// first violations it finds (at most ten).
func (ix *Index) Verify(ctx context.Context) error {
	return guarded(func() error { return ix.verify(ctx) }) // a damaged table panics inside Badger: its error
}

func (ix *Index) verify(ctx context.Context) error {
	var errs []error
	report := func(format string, a ...any) bool {
		errs = append(errs, fmt.Errorf(format, a...))
		return len(errs) >= 10
	}
	err := ix.db.View(func(txn *badger.Txn) error {
		names := ix.namesIn(txn)
		it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: true})
		defer it.Close()
		var cachedLoc *Loc
		var cached *Record
		var cachedID ids
		var cachedKeys map[string][]byte
		recs := newTxnRecs(txn) // records through their pages (pages.go)
		nfs := newNFReader(txn) // NFs through theirs (nfpages.go)
		recordKeys := func(l Loc) (*Record, map[string][]byte, error) {
			if cachedLoc != nil && *cachedLoc == l {
				return cached, cachedKeys, nil
			}
			var enc []byte
			if err := recs.record(l, func(v []byte) error { enc = append([]byte(nil), v...); return nil }); err != nil {
				return nil, nil, err
			}
			rec, id, err := decodeRecordIDs(l, enc, names, depthFull)
			if err != nil {
				return nil, nil, err
			}
			// Its NF, when its key holds the one the record was written
			// with: else the record's keys name an NF value of nil, which
			// the NF key, missing or another, does not have.
			err = nfs.nf(l, func(v []byte) error { _ = rec.SetNF(v); return nil }) // another NF: the keys below say so
			if err != nil && !errors.Is(err, badger.ErrKeyNotFound) {
				return nil, nil, err // its NF page does not read
			}
			m := map[string][]byte{}
			for _, x := range keysOf(rec, nil, enc, id) {
				m[string(x.K)] = x.V
			}
			cachedLoc, cached, cachedID, cachedKeys = &l, rec, id, m
			return rec, m, nil
		}
		// checkRecord checks the record at l and its keys; true: enough reported.
		checkRecord := func(l Loc) (bool, error) {
			rec, m, err := recordKeys(l)
			if err != nil {
				return report("record at %s: %v", l, err), nil
			}
			for sk, sv := range m {
				if sk[0] == byte(KindTx) {
					continue // the record itself, read from its page above
				}
				if pk, i, ok := layout.SplitPosting([]byte(sk)); ok {
					// Its posting must list its index (postings.go).
					has, err := postingHas(txn, pk, i)
					if err != nil {
						if report("tx %s: key %x: %v", rec.Hash.Hex(), sk, err) {
							return true, nil
						}
					} else if !has && report("tx %s: missing key %x", rec.Hash.Hex(), sk) {
						return true, nil
					}
					continue
				}
				var got []byte
				var err error
				if sk[0] == byte(KindNF) {
					err = nfs.nf(l, func(v []byte) error { got = append([]byte(nil), v...); return nil }) // from its page
				} else {
					var item *badger.Item
					if item, err = txn.Get([]byte(sk)); err == nil {
						got, err = item.ValueCopy(nil)
					}
				}
				if errors.Is(err, badger.ErrKeyNotFound) {
					if report("tx %s: missing key %x", rec.Hash.Hex(), sk) {
						return true, nil
					}
					continue
				} else if err != nil {
					return false, err
				}
				if !bytes.Equal(got, sv) {
					if report("tx %s: key %x has value %x", rec.Hash.Hex(), sk, got) {
						return true, nil
					}
				}
			}
			locs, err := locsOf(txn, rec.Hash)
			found := false
			for _, l := range locs {
				found = found || l == rec.Loc
			}
			if err != nil || !found {
				if report("tx %s: its txhash key does not list %s (%v)", rec.Hash.Hex(), rec.Loc, err) {
					return true, nil
				}
			}
			first := FirstKey(rec.Recipient, cachedID[normalform.Shape]).Bytes()
			if _, err := txn.Get(first); err != nil {
				return report("tx %s: first-seen key %x: %v", rec.Hash.Hex(), first, err), nil
			}
			return false, nil
		}
		var next uint32
		if item, err := txn.Get(NextKey().Bytes()); err == nil {
			if err := item.Value(func(v []byte) (err error) { next, err = parseID(v); return }); err != nil {
				report("next key: %v", err)
			}
		}
		n := 0
		for it.Rewind(); it.Valid(); it.Next() {
			if n++; n%checkEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			item := it.Item()
			k := item.KeyCopy(nil)
			v, err := item.ValueCopy(nil)
			if err != nil {
				return err
			}
			key, err := ParseKey(k)
			if err != nil {
				if report("%v", err) {
					return nil
				}
				continue
			}
			switch key.Kind {
			case KindTx:
				// A page holds many records (layout/page.go): each is checked.
				stop := false
				var failed error
				err := walkTxKey(k, v, func(l Loc, _ []byte) error {
					stop, failed = checkRecord(l)
					if stop || failed != nil {
						return errStopVerify
					}
					return nil
				})
				if failed != nil {
					return failed
				}
				if stop {
					return nil
				}
				if err != nil && report("tx key %x: %v", k, err) {
					return nil
				}
			case KindTxHash:
				locs, err := parseLocs(v)
				if err != nil {
					if report("%v", err) {
						return nil
					}
					continue
				}
				for i, l := range locs {
					if i > 0 && !locs[i-1].Less(l) {
						if report("txhash key %x: positions not in order: %x", k, v) {
							return nil
						}
					}
					rec, _, err := recordKeys(l)
					if err != nil || Short(rec.Hash) != key.Tag {
						if report("txhash key %x lists %s, which is not a transaction of that hash (%v)", k, l, err) {
							return nil
						}
					}
				}
			case KindHash, KindBot, KindVerdict, KindProfit, KindAddr, KindToken:
				if key.Posting {
					// Every position it lists has the key (postings.go).
					err := positionsOf(k, v, func(l Loc) error {
						rec, m, err := recordKeys(l)
						e := layout.Entry(nil, k, l.Index)
						switch {
						case err != nil:
							if report("key %x: position %s: its record: %v", k, l, err) {
								return errStopVerify
							}
						case !hasKey(m, e):
							if report("key %x: position %s: not a key of its record %s (stale)", k, l, rec.Hash.Hex()) {
								return errStopVerify
							}
						}
						return nil
					})
					if errors.Is(err, errStopVerify) {
						return nil
					}
					if err != nil && report("key %x: %v", k, err) {
						return nil
					}
					continue
				}
				if key.Loc.Known() {
					if report("key %x: a position with index outside a posting", k) {
						return nil
					}
					continue
				}
				rec, m, err := recordKeys(key.Loc)
				if err != nil {
					if report("key %x: its record: %v", k, err) {
						return nil
					}
					continue
				}
				if _, ok := m[string(k)]; !ok || len(v) != 0 {
					if report("key %x: not a key of its record %s (stale)", k, rec.Hash.Hex()) {
						return nil
					}
				}
			case KindNF:
				// A page holds many NFs (layout/nfpage.go): each is checked.
				stop := false
				err := walkNFKey(k, v, func(l Loc, _ []byte) error {
					if _, m, err := recordKeys(l); err != nil || !hasKey(m, NFKey(l).Bytes()) {
						if stop = report("nf key %x: no record at %s holds its NF (%v)", k, l, err); stop {
							return errStopVerify
						}
					}
					return nil
				})
				if stop {
					return nil
				}
				if err != nil && report("nf key %x: %v", k, err) {
					return nil
				}
			case KindFirst:
				got, err := firstRef(txn, k, v)
				if err != nil {
					if report("key %x: %v", k, err) {
						return nil
					}
					continue
				}
				least, err := leastOfBot(txn, recs, names, key.Addr, key.ID)
				if err != nil {
					return err
				}
				if least == nil || *least != got {
					if report("first-seen key %x names %+v, the least is %+v", k, got, least) {
						return nil
					}
				}
			case KindDict:
				id, err := parseID(v)
				if err == nil && id >= next {
					err = fmt.Errorf("id %d is not below the next, %d", id, next)
				}
				if err == nil {
					if h, ok := names(key.Level, id); !ok || h != key.Struct {
						err = fmt.Errorf("its id %d names another hash", id)
					}
				}
				if err != nil {
					if report("dict key %x: %v", k, err) {
						return nil
					}
				}
			case KindName:
				dn, err := parseNameValue(v)
				if err == nil && key.ID >= next {
					err = fmt.Errorf("id %d is not below the next, %d", key.ID, next)
				}
				if err == nil {
					if id, ok, e := ix.idIn(txn, dn.level, dn.h); e != nil || !ok || id != key.ID {
						err = fmt.Errorf("its hash has id %d (%v)", id, e)
					}
				}
				if err != nil {
					if report("name key %x: %v", k, err) {
						return nil
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return errors.Join(errs...)
}

func hasKey(m map[string][]byte, k []byte) bool { _, ok := m[string(k)]; return ok }

// postingHas reports whether the posting under pk lists index i.
func postingHas(txn *badger.Txn, pk []byte, i uint32) (bool, error) {
	item, err := txn.Get(pk)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	var has bool
	err = item.Value(func(v []byte) error {
		idx, err := layout.ParsePosting(pk, v, nil)
		_, has = slices.BinarySearch(idx, i)
		return err
	})
	return has, err
}

// errStopVerify stops a page's walk in Verify (enough reported).
var errStopVerify = errors.New("stop")
