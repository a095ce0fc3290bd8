package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// checkEvery is how many keys an iterator reads between two looks at its
// context.
const checkEvery = 64

// scan calls fn for every key with the prefix, in key order, from the
// first key >= lo (lo nil: the prefix). fn returns the key to seek to
// next (nil: the next key), or stop. k and v are valid only during fn.
func (ix *Index) scan(ctx context.Context, prefix, lo []byte, values bool, fn func(k, v []byte) (seek []byte, stop bool, err error)) error {
	return ix.db.View(func(txn *badger.Txn) error {
		return scanTxn(ctx, txn, prefix, lo, values, fn)
	})
}

func scanTxn(ctx context.Context, txn *badger.Txn, prefix, lo []byte, values bool, fn func(k, v []byte) ([]byte, bool, error)) error {
	// Values are read in place (item.Value), not prefetched: every value
	// of this index is small enough to live in the LSM tree beside its
	// key, and prefetching copies each one (in a goroutine per item).
	it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
	defer it.Close()
	if lo == nil {
		lo = prefix
	}
	n := 0
	for it.Seek(lo); it.ValidForPrefix(prefix); {
		if n++; n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		item := it.Item()
		var seek []byte
		var stop bool
		var err error
		if values {
			err = item.Value(func(v []byte) (err error) {
				seek, stop, err = fn(item.Key(), v)
				return err
			})
		} else {
			seek, stop, err = fn(item.Key(), nil)
		}
		if err != nil || stop {
			return err
		}
		if seek != nil {
			it.Seek(seek)
		} else {
			it.Next()
		}
	}
	return ctx.Err()
}

// scanGroupsTxn walks keys prefix | group | pos, where group has gw
// bytes, position by position (postIter: a posting's positions as
// per-transaction keys; fn's v is nil), keeping the locations in blocks:
// within each group it seeks to the range's first block and skips past
// its last.
func scanGroupsTxn(ctx context.Context, txn *badger.Txn, prefix []byte, gw int, blocks BlockRange, fn func(k, v []byte) error) error {
	if blocks.From > blocks.To {
		return nil
	}
	at := len(prefix) + gw
	lo := prefix
	if gw == 0 {
		lo, _ = blockBounds(prefix, blocks.From, blocks.To)
	}
	c := newPostIter(txn, prefix)
	defer c.Close()
	n := 0
	for c.Seek(lo); c.Valid(); {
		if n++; n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		k := c.Key()
		if len(k) < at+locWidth {
			return fmt.Errorf("%w: %x", ErrBadKey, k)
		}
		b := locBlock(k[at:])
		switch {
		case b < blocks.From:
			s, _ := blockBounds(k[:at], blocks.From, blocks.To)
			c.Seek(s)
			continue
		case b > blocks.To:
			next := prefixEnd(k[:at])
			if gw == 0 || next == nil || !bytes.HasPrefix(next, prefix) {
				return nil
			}
			c.Seek(next)
			continue
		}
		if err := fn(k, nil); err != nil {
			return err
		}
		c.Next()
	}
	if err := c.Err(); err != nil {
		return err
	}
	return ctx.Err()
}

// locOf reads a key's position (the per-transaction kinds').
func locOf(k []byte) (Loc, error) {
	key, err := ParseKey(k)
	return key.Loc, err
}

// The By* functions and Fetch read secondary keys, whose addresses,
// tokens and exact hashes are tags (layout/keys.go): each key found is checked
// against the record at its position, which is read anyway, so that a tag
// two addresses (tokens, hashes) share never gives a transaction of the
// other. find is the walk they share.

// find streams the records a lookup finds, in its order, each once,
// decoded to depth d (at least what the lookup's check reads). key is the
// secondary key that found the record (parsed).
func (ix *Index) find(ctx context.Context, txn *badger.Txn, lk Lookup, d depth, fn func(rec *Record, key *Key) error) error {
	names := ix.namesIn(txn)
	d = max(d, lk.CheckDepth()) // what the check reads
	n := 0
	recs := newTxnRecs(txn) // consecutive positions of a page: one read
	nfs := newNFReader(txn) // and of an NF page (nfpages.go)
	// read reads the record a key leads to, nil when it is not one the
	// lookup asks for; emit gives a record found to fn.
	read := func(key *Key) (*Record, error) {
		if n++; n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		var rec *Record
		if err := recs.record(key.Loc, func(v []byte) (err error) { rec, err = decodeRecord(key.Loc, v, names, d); return }); err != nil {
			if errors.Is(err, badger.ErrKeyNotFound) {
				return nil, fmt.Errorf("%s key at %s: its record: %w", key.Kind, key.Loc, err)
			}
			return nil, err
		}
		if !lk.Holds(rec, key) {
			return nil, nil // another hash, address or token with the same tag (or amount in the same bucket)
		}
		return rec, nil
	}
	emit := func(rec *Record, key *Key) error {
		if d == depthWhole {
			if err := nfs.set(rec); err != nil {
				return err
			}
		}
		return fn(rec, key)
	}
	get := func(key *Key) error {
		rec, err := read(key)
		if rec == nil || err != nil {
			return err
		}
		return emit(rec, key)
	}
	keys := func(prefix []byte, gw int) error {
		return scanGroupsTxn(ctx, txn, prefix, gw, lk.Blocks, func(k, _ []byte) error {
			key, err := ParseKey(k)
			if err != nil {
				return err
			}
			return get(&key)
		})
	}
	switch lk.By {
	case KindHash:
		var id uint32
		if lk.Level != normalform.Exact {
			var ok bool
			var err error
			if id, ok, err = ix.idIn(txn, lk.Level, lk.Hash); err != nil || !ok {
				return err
			}
		}
		return keys(layout.HashPrefix(lk.Level, lk.Hash, id), 0)
	case KindBot:
		ids, err := ix.botShapes(ctx, txn, lk.Addr)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := keys(layout.BotShapePrefix(lk.Addr, id), 0); err != nil {
				return err
			}
		}
		return nil
	case KindAddr:
		if !lk.AsToken {
			return ix.addrKeys(ctx, txn, lk.Addr, lk.Blocks, get)
		}
		// The address's keys (its addr and bot keys) and the token's,
		// merged in position order.
		var found []Key
		seen := map[Loc]bool{}
		add := func(key *Key) error {
			if !seen[key.Loc] {
				seen[key.Loc] = true
				found = append(found, *key)
			}
			return nil
		}
		collect := func(k, _ []byte) error {
			key, err := ParseKey(k)
			if err != nil {
				return err
			}
			return add(&key)
		}
		if err := ix.addrKeys(ctx, txn, lk.Addr, lk.Blocks, add); err != nil {
			return err
		}
		if err := scanGroupsTxn(ctx, txn, layout.TokenPrefix(normalform.FungibleToken(lk.Addr)), 0, lk.Blocks, collect); err != nil {
			return err
		}
		sort.SliceStable(found, func(i, j int) bool { return found[i].Loc.Less(found[j].Loc) })
		for i := range found {
			if err := get(&found[i]); err != nil {
				return err
			}
		}
		return nil
	case KindProfit:
		return profitFind(ctx, txn, lk, read, emit)
	}
	// A key of the lookup's value then the position (keys grouped by
	// gw bytes between them): layout says which.
	if prefix, gw, ok := lk.Prefix(); ok {
		return keys(prefix, gw)
	}
	return fmt.Errorf("index: no lookup by %s", lk.By)
}

// addrKeys streams the keys of an address's tag, in position order and
// each position once: its addr keys and its bot keys (every shape),
// merged. A transaction's recipient has no addr key, its bot key (of
// the same tag) stands for it (layout.Record.Keys). Each source is an
// iterator from the range's first block; the merge takes the least
// position among them.
func (ix *Index) addrKeys(ctx context.Context, txn *badger.Txn, a normalform.Address, blocks BlockRange, fn func(*Key) error) error {
	if blocks.From > blocks.To {
		return nil
	}
	shapes, err := ix.botShapes(ctx, txn, a)
	if err != nil {
		return err
	}
	type source struct {
		it     *postIter // position by position (postings.go)
		prefix []byte
		loc    []byte // the position of the current key; nil: done
	}
	srcs := make([]source, 0, 1+len(shapes))
	defer func() {
		for _, s := range srcs {
			s.it.Close()
		}
	}()
	next := func(s *source) error {
		for ; s.it.Valid(); s.it.Next() {
			k := s.it.Key()
			if len(k) < len(s.prefix)+locWidth {
				return fmt.Errorf("%w: %x", ErrBadKey, k)
			}
			if locBlock(k[len(s.prefix):]) > blocks.To {
				break
			}
			s.loc = k[len(s.prefix):]
			return nil
		}
		s.loc = nil
		return s.it.Err()
	}
	prefixes := append(make([][]byte, 0, 1+len(shapes)), layout.AddrPrefix(a))
	for _, id := range shapes {
		prefixes = append(prefixes, layout.BotShapePrefix(a, id))
	}
	for _, p := range prefixes {
		srcs = append(srcs, source{it: newPostIter(txn, p), prefix: p})
		s := &srcs[len(srcs)-1]
		lo, _ := blockBounds(p, blocks.From, blocks.To)
		s.it.Seek(lo)
		if err := next(s); err != nil {
			return err
		}
	}
	var last []byte
	for {
		var least *source
		for i := range srcs {
			if s := &srcs[i]; s.loc != nil && (least == nil || bytes.Compare(s.loc, least.loc) < 0) {
				least = s
			}
		}
		if least == nil {
			return nil
		}
		if last == nil || !bytes.Equal(least.loc, last) {
			last = append(last[:0], least.loc...)
			key, err := ParseKey(least.it.Key())
			if err != nil {
				return err
			}
			if err := fn(&key); err != nil {
				return err
			}
		}
		least.it.Next()
		if err := next(least); err != nil {
			return err
		}
	}
}

// refs adapts a Ref callback to find.
func refs(fn func(Ref) error) func(*Record, *Key) error {
	return func(rec *Record, _ *Key) error { return fn(Ref{Hash: rec.Hash, Loc: rec.Loc}) }
}

func (ix *Index) view(ctx context.Context, lk Lookup, d depth, fn func(*Record, *Key) error) error {
	return ix.db.View(func(txn *badger.Txn) error { return ix.find(ctx, txn, lk, d, fn) })
}

// ByHash streams the transactions whose hash at level is h, in position
// order.
func (ix *Index) ByHash(ctx context.Context, level normalform.Level, h normalform.Hash, blocks BlockRange, fn func(Ref) error) error {
	return ix.view(ctx, Lookup{By: KindHash, Level: level, Hash: h, Blocks: blocks}, depthHeader, refs(fn))
}

// botShapes lists the ids of the shapes under a bot's tag, in the order
// of their hashes.
func (ix *Index) botShapes(ctx context.Context, txn *badger.Txn, bot normalform.Address) ([]uint32, error) {
	prefix := layout.BotPrefix(bot)
	names := ix.namesIn(txn)
	type shape struct {
		id uint32
		h  normalform.Hash
	}
	var out []shape
	err := scanTxn(ctx, txn, prefix, nil, false, func(k, _ []byte) ([]byte, bool, error) {
		key, err := ParseKey(k)
		if err != nil {
			return nil, true, err
		}
		h, ok := names(normalform.Shape, key.ID)
		if !ok {
			return nil, true, fmt.Errorf("bot key %x: shape id %d is not in the dictionary", k, key.ID)
		}
		out = append(out, shape{key.ID, h})
		return prefixEnd(k[:len(prefix)+4]), false, nil // the next shape
	})
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i].h[:], out[j].h[:]) < 0 })
	ids := make([]uint32, len(out))
	for i, s := range out {
		ids[i] = s.id
	}
	return ids, err
}

// ByBot streams a recipient's transactions, by shape hash and then
// position.
func (ix *Index) ByBot(ctx context.Context, bot normalform.Address, blocks BlockRange, fn func(shape normalform.Hash, r Ref) error) error {
	return ix.view(ctx, Lookup{By: KindBot, Addr: bot, Blocks: blocks}, depthAddrs, func(rec *Record, _ *Key) error {
		return fn(rec.Hashes.Shape, Ref{Hash: rec.Hash, Loc: rec.Loc})
	})
}

// ByBotShape streams a recipient's transactions of one shape, in position
// order.
func (ix *Index) ByBotShape(ctx context.Context, bot normalform.Address, shape normalform.Hash, blocks BlockRange, fn func(Ref) error) error {
	return ix.db.View(func(txn *badger.Txn) error {
		id, ok, err := ix.idIn(txn, normalform.Shape, shape)
		if err != nil || !ok {
			return err
		}
		names := ix.namesIn(txn)
		recs := newTxnRecs(txn)
		return scanGroupsTxn(ctx, txn, botShapePrefix(bot, id), 0, blocks, func(k, _ []byte) error {
			l, err := locOf(k)
			if err != nil {
				return err
			}
			rec, err := recordFrom(recs, txn, l, names, depthAddrs)
			if err != nil || rec.Recipient != bot {
				return err
			}
			return fn(Ref{Hash: rec.Hash, Loc: rec.Loc})
		})
	})
}

// recordIn reads the record at a position, decoded to depth d.
func recordIn(txn *badger.Txn, l Loc, names Names, d depth) (*Record, error) {
	return recordFrom(newTxnRecs(txn), txn, l, names, d)
}

// recordFrom is recordIn reading the record from src. At depthWhole
// the NF is read from txn (nfIn), not from src: a write transaction's
// callers (src a wtx) read at most depthAddrs, and would not see the
// NF pages it has changed.
func recordFrom(src recSource, txn *badger.Txn, l Loc, names Names, d depth) (*Record, error) {
	var rec *Record
	err := src.record(l, func(v []byte) (err error) { rec, err = decodeRecord(l, v, names, d); return })
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, fmt.Errorf("position %s: %w", l, ErrNotFound)
	} else if err != nil {
		return nil, err
	}
	if d == depthWhole {
		if err := nfIn(txn, rec); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// BotShapes streams the shapes a recipient has used, each with its first
// transaction (the least position), in shape-hash order. "Shapes bot B
// had not used before block N" are those whose first block is N or more.
func (ix *Index) BotShapes(ctx context.Context, bot normalform.Address, fn func(shape normalform.Hash, first Ref) error) error {
	type hit struct {
		shape normalform.Hash
		r     Ref
	}
	var hits []hit
	err := ix.db.View(func(txn *badger.Txn) error {
		names := ix.namesIn(txn)
		return scanTxn(ctx, txn, layout.FirstPrefix(bot), nil, true, func(k, v []byte) ([]byte, bool, error) {
			key, err := ParseKey(k)
			if err != nil {
				return nil, true, err
			}
			r, err := firstRef(txn, k, v)
			if err != nil {
				return nil, true, err
			}
			h, ok := names(normalform.Shape, key.ID)
			if !ok {
				return nil, true, fmt.Errorf("first key %x: shape id %d is not in the dictionary", k, key.ID)
			}
			hits = append(hits, hit{h, r})
			return nil, false, nil
		})
	})
	if err != nil {
		return err
	}
	sort.Slice(hits, func(i, j int) bool { return bytes.Compare(hits[i].shape[:], hits[j].shape[:]) < 0 })
	for _, h := range hits {
		if err := fn(h.shape, h.r); err != nil {
			return err
		}
	}
	return nil
}

// FirstSeen returns a recipient's first transaction of a shape.
func (ix *Index) FirstSeen(bot normalform.Address, shape normalform.Hash) (Ref, bool, error) {
	var r Ref
	found := false
	err := ix.db.View(func(txn *badger.Txn) error {
		id, ok, err := ix.idIn(txn, normalform.Shape, shape)
		if err != nil || !ok {
			return err
		}
		item, err := txn.Get(FirstKey(bot, id).Bytes())
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		found = true
		return item.Value(func(v []byte) (err error) { r, err = firstRef(txn, item.Key(), v); return })
	})
	return r, found, err
}

// ByBlocks streams the transactions of a block range in position order.
func (ix *Index) ByBlocks(ctx context.Context, blocks BlockRange, fn func(Ref) error) error {
	return ix.db.View(func(txn *badger.Txn) error {
		return recordsTxn(ctx, txn, blocks, func(l Loc, v []byte) error {
			h, ok := hashOf(v)
			if !ok {
				return fmt.Errorf("record at %s: %w", l, ErrBadRecord)
			}
			return fn(Ref{Hash: h, Loc: l})
		})
	})
}

// recordsTxn walks the record keys of a block range in position order.
func recordsTxn(ctx context.Context, txn *badger.Txn, blocks BlockRange, fn func(l Loc, v []byte) error) error {
	if blocks.From > blocks.To {
		return nil
	}
	prefix := kindPrefix(KindTx)
	lo, _ := blockBounds(prefix, blocks.From, blocks.To)
	return scanTxn(ctx, txn, prefix, lo, true, func(k, v []byte) ([]byte, bool, error) {
		l, err := layout.TxLoc(k)
		if err != nil {
			return nil, true, err
		}
		if !blocks.Has(l.Block) {
			return nil, true, nil
		}
		return nil, false, walkTxKey(k, v, fn) // a page's records, or a lone record (pages.go)
	})
}

// ByVerdict streams the transactions with a verdict, by tier and then
// position.
func (ix *Index) ByVerdict(ctx context.Context, v normalform.Verdict, blocks BlockRange, fn func(t normalform.Tier, r Ref) error) error {
	return ix.view(ctx, Lookup{By: KindVerdict, Verdict: v, Blocks: blocks}, depthHeader, func(rec *Record, _ *Key) error {
		return fn(rec.Tier, Ref{Hash: rec.Hash, Loc: rec.Loc})
	})
}

// ByTier streams the transactions with a verdict and tier, in position
// order.
func (ix *Index) ByTier(ctx context.Context, v normalform.Verdict, t normalform.Tier, blocks BlockRange, fn func(Ref) error) error {
	return ix.view(ctx, Lookup{By: KindVerdict, Verdict: v, Tier: &t, Blocks: blocks}, depthHeader, refs(fn))
}

// ByProfit streams the transactions whose balance (side) has a component
// in tok between lo and hi inclusive (nil: unbounded), in amount order,
// then position. Transactions with no component in tok are not there (an
// absent component is zero, and zero components are not stored).
func (ix *Index) ByProfit(ctx context.Context, side Side, tok normalform.Token, lo, hi *normalform.Signed, fn func(amount normalform.Signed, r Ref) error) error {
	lk := Lookup{By: KindProfit, Side: side, Token: tok, Lo: lo, Hi: hi, Blocks: AllBlocks}
	return ix.view(ctx, lk, depthFull, func(rec *Record, _ *Key) error {
		a, _ := lk.Component(rec)
		return fn(a, Ref{Hash: rec.Hash, Loc: rec.Loc})
	})
}

// profitKeys calls fn with the profit keys of a side's component in tok
// between lo and hi (inclusive; nil: open), in amount then position
// order. A net component equal to a gross one of the same record (the
// same token and amount: every token but the native and wrapped native
// ones, whose net folds them and takes the costs) has no net key of its
// own (layout.Record.Keys): the net side walks the net and gross keys
// merged, and the reader checks each against the record's net balance
// (Lookup.Holds), so a gross key whose net differs is a read, never a
// row.
func profitKeys(ctx context.Context, txn *badger.Txn, side Side, tok normalform.Token, lo, hi *normalform.Signed, fn func(*Key) error) error {
	walks := []*profitWalk{newProfitWalk(txn, side, tok, lo, hi)}
	if side == Net {
		walks = append(walks, newProfitWalk(txn, Gross, tok, lo, hi))
	}
	defer func() {
		for _, w := range walks {
			w.c.Close()
		}
	}()
	n := 0
	for {
		if n++; n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		var least *profitWalk
		for _, w := range walks {
			if w.err != nil {
				return w.err
			}
			if w.valid() && (least == nil || bytes.Compare(w.rest(), least.rest()) < 0) {
				least = w
			}
		}
		if least == nil {
			return ctx.Err()
		}
		key, err := ParseKey(least.c.Key())
		if err != nil {
			return err
		}
		if err := fn(&key); err != nil {
			return err
		}
		least.c.Next()
		if err := least.c.Err(); err != nil {
			return err
		}
	}
}

// profitFind gives fn the records whose balance (the lookup's side) has
// a component in its token within its range, each once, in amount then
// position order. A profit key holds its amount's bucket (layout.Bucket),
// whose records come in position order: each bucket's records found
// (read, which checks the amount) are sorted before they are given. A
// bucket's first profitKept records are kept as read; past them only
// their amounts and keys, and the records are read again in order, so a
// bucket many transactions share (one amount paid to each) holds about
// 100 bytes a transaction, not its records.
func profitFind(ctx context.Context, txn *badger.Txn, lk Lookup, read func(*Key) (*Record, error), emit func(*Record, *Key) error) error {
	type hit struct {
		a   normalform.Signed
		key Key
		rec *Record // nil past profitKept: read again
	}
	var group []hit
	var bucket layout.Bucket
	seen := map[Loc]bool{} // the bucket's records found: a record's component is in one bucket
	flush := func() error {
		slices.SortStableFunc(group, func(x, y hit) int {
			if c := x.a.Cmp(y.a); c != 0 {
				return c
			}
			switch {
			case x.key.Loc.Less(y.key.Loc):
				return -1
			case y.key.Loc.Less(x.key.Loc):
				return 1
			}
			return 0
		})
		for i := range group {
			h := &group[i]
			rec := h.rec
			if rec == nil {
				var err error
				if rec, err = read(&h.key); err != nil {
					return err
				} else if rec == nil {
					return fmt.Errorf("profit key at %s: its record changed while read", h.key.Loc)
				}
			}
			if err := emit(rec, &h.key); err != nil {
				return err
			}
			h.rec = nil
		}
		group = group[:0]
		clear(seen)
		return nil
	}
	err := profitKeys(ctx, txn, lk.Side, lk.Token, lk.Lo, lk.Hi, func(k *Key) error {
		if len(group) > 0 && k.Bucket != bucket {
			if err := flush(); err != nil {
				return err
			}
		}
		bucket = k.Bucket
		if seen[k.Loc] {
			return nil // two tokens sharing a tag, or the net side's gross key beside its net one
		}
		rec, err := read(k)
		if rec == nil || err != nil {
			return err
		}
		seen[k.Loc] = true
		a, _ := lk.Component(rec)
		if len(group) >= profitKept {
			rec = nil
		}
		group = append(group, hit{a: a, key: *k, rec: rec})
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// profitKept bounds the records of one amount bucket kept while it is
// read (profitFind).
const profitKept = 1024

// profitWalk walks one side's profit keys of a token from lo to hi.
type profitWalk struct {
	c      *postIter
	prefix []byte
	end    []byte // nil: the prefix's end
	err    error
}

func newProfitWalk(txn *badger.Txn, side Side, tok normalform.Token, lo, hi *normalform.Signed) *profitWalk {
	w := &profitWalk{prefix: layout.ProfitPrefix(side, tok)}
	start := w.prefix
	if lo != nil {
		b := ProfitBucket(*lo)
		start = append(append([]byte(nil), w.prefix...), b[:]...)
	}
	if hi != nil {
		b := ProfitBucket(*hi)
		w.end = prefixEnd(append(append([]byte(nil), w.prefix...), b[:]...))
	}
	w.c = newPostIter(txn, w.prefix) // position by position (postings.go)
	w.c.Seek(start)
	w.err = w.c.Err()
	return w
}

// valid reports whether the walk is at a key within its range.
func (w *profitWalk) valid() bool {
	return w.c.Valid() && (w.end == nil || bytes.Compare(w.c.Key(), w.end) < 0)
}

// rest is the current key after the side's prefix: amount, then
// position, which order the sides' keys alike.
func (w *profitWalk) rest() []byte { return w.c.Key()[len(w.prefix):] }

// ByAddress streams the transactions that touch an address (as from, to,
// or an endpoint of a transfer), in position order.
func (ix *Index) ByAddress(ctx context.Context, a normalform.Address, blocks BlockRange, fn func(Ref) error) error {
	return ix.view(ctx, Lookup{By: KindAddr, Addr: a, Blocks: blocks}, depthFull, refs(fn))
}

// ByToken streams the transactions that move a token, in position order.
func (ix *Index) ByToken(ctx context.Context, tok normalform.Token, blocks BlockRange, fn func(Ref) error) error {
	return ix.view(ctx, Lookup{By: KindToken, Token: tok, Blocks: blocks}, depthFull, refs(fn))
}

// Records streams the records of a block range in position order. The
// records are keyed by position: the range is read with iterators, on all
// cores, and fn is called in order on the caller's goroutine (pscan.go).
func (ix *Index) Records(ctx context.Context, blocks BlockRange, fn func(*Record) error) error {
	return ix.db.View(func(txn *badger.Txn) error {
		return ix.scanRecords(ctx, txn, blocks, scanSpec{d: depthHeader, out: depthWhole}, fn)
	})
}

// Filter streams the records of a block range in position order as
// Records does, deciding on each record's header first: match receives
// a Partial record (Record.Partial says which fields it has; From, To and
// Recipient only when addrs is set) and is called from several goroutines
// at once, so it must only read it; nil matches every record. fn is
// called in position order on the caller's goroutine with each record
// matched: decoded whole when whole is set (a scan that filters on the
// header decodes only the records it emits), else the partial record
// match saw.
func (ix *Index) Filter(ctx context.Context, blocks BlockRange, addrs bool, match func(*Record) (bool, error), whole bool, fn func(*Record) error) error {
	d := depthHeader
	if addrs {
		d = depthAddrs
	}
	out := depthHeader // the partial record match saw
	if whole {
		out = depthWhole
	}
	return ix.db.View(func(txn *badger.Txn) error {
		return ix.scanRecords(ctx, txn, blocks, scanSpec{d: d, match: match, out: out}, fn)
	})
}

// FilterRows is Filter with whole set, but fn receives each record matched
// decoded as far as a row of find shows (layout.DepthRow: Partial, without
// its addresses, tokens and NF): the planner's find and match rows, which
// read no more, decode less and read no NF key.
func (ix *Index) FilterRows(ctx context.Context, blocks BlockRange, addrs bool, match func(*Record) (bool, error), fn func(*Record) error) error {
	d := depthHeader
	if addrs {
		d = depthAddrs
	}
	return ix.db.View(func(txn *badger.Txn) error {
		return ix.scanRecords(ctx, txn, blocks, scanSpec{d: d, match: match, out: depthRow}, fn)
	})
}

// FilterRowsByFront is FilterRows whose match reads no more than a
// record's front (layout.DecodeFrontInto: position, hash, flags, status,
// verdict, tier, path, mode and counts; not the hashes, reasons or
// principals): each record is decoded to its front for match, without
// resolving its dictionary ids, and the records match keeps are decoded
// once more as rows. A filter on counts, verdicts, tiers, paths, modes or
// blocks over a million records.
func (ix *Index) FilterRowsByFront(ctx context.Context, blocks BlockRange, match func(*Record) (bool, error), fn func(*Record) error) error {
	return ix.db.View(func(txn *badger.Txn) error {
		return ix.scanRecords(ctx, txn, blocks, scanSpec{d: depthHeader, front: true, match: match, out: depthRow}, fn)
	})
}

// FilterRowsLent is FilterRows (front unset) or FilterRowsByFront (front
// set) whose fn borrows the records it receives: each is valid only during
// fn, which must not keep it or its slices (Gross, Net, Reasons), and its
// storage decodes the records after it. A scan that only turns its records
// into rows (the planner's find) so allocates no record: at a million
// records, 210,000 rows kept, the records and their balances were ~0.25 GB
// allocated a scan. fn's records are decoded as a row shows them
// (layout.RowDecoder.Row): without From and the dictionary's hashes, which
// match, when it reads them, sees in its own decode.
func (ix *Index) FilterRowsLent(ctx context.Context, blocks BlockRange, addrs, front bool, match func(*Record) (bool, error), fn func(*Record) error) error {
	s := scanSpec{d: depthHeader, front: front, match: match, out: depthRow, lent: true}
	if addrs && !front {
		s.d = depthAddrs
	}
	return ix.db.View(func(txn *badger.Txn) error {
		return ix.scanRecords(ctx, txn, blocks, s, fn)
	})
}

// Fetch streams the records a lookup finds, in its order, each once:
// whole, or, for a Partial lookup, as far as the lookup's check decoded
// them (Lookup.Depth). It reads each record by its position in the
// lookup's own read transaction: one point read a transaction. It is the
// planner's one execution of every secondary-key access path (the By*
// functions are the same walk, giving Refs).
func (ix *Index) Fetch(ctx context.Context, lk Lookup, fn func(*Record) error) error {
	return ix.view(ctx, lk, lk.Depth(), func(rec *Record, _ *Key) error { return fn(rec) })
}

// Scan streams every record, in position order.
func (ix *Index) Scan(ctx context.Context, fn func(*Record) error) error {
	return ix.Records(ctx, AllBlocks, fn)
}

// KindStats count the keys of one kind and their bytes.
type KindStats struct {
	Keys       int
	KeyBytes   int64
	ValueBytes int64
	// Pages: for the tx kind, the Badger keys (record pages and lone
	// records, layout/page.go); its Keys are the records they hold. For
	// the nf kind the same: the NF pages and lone NFs
	// (layout/nfpage.go), and the NFs they hold.
	Pages int
	// Positions: for the secondary kinds kept as postings (schema 12,
	// layout/posting.go), the transactions' keys they stand for (the
	// positions their postings list, and the keys without value); their
	// Keys are the Badger keys.
	Positions int
}

// Stats counts the keys of every kind (a full scan of the keys), but
// for the tx and nf kinds, whose Keys are the records and NFs (one per
// transaction, read from the pages' values, an NF page's decompressed)
// and Pages the Badger keys that hold them. The posting kinds' Keys are
// their Badger keys, and Positions the per-transaction keys they stand
// for (read from the postings' values).
func (ix *Index) Stats(ctx context.Context) (map[Kind]KindStats, error) {
	out := map[Kind]KindStats{}
	err := ix.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		n := 0
		for it.Rewind(); it.Valid(); it.Next() {
			if n++; n%checkEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			item := it.Item()
			k := Kind(item.Key()[0])
			s := out[k]
			if k == KindTx || k == KindNF {
				s.Pages++
				walk := walkTxKey
				if k == KindNF {
					walk = walkNFKey // decompressed, to count its NFs (nfpages.go)
				}
				err := item.Value(func(v []byte) error {
					return walk(item.Key(), v, func(Loc, []byte) error { s.Keys++; return nil })
				})
				if err != nil {
					return err
				}
			} else {
				s.Keys++
				if layout.PostingKind(k) {
					if !isPostingKey(item.Key()) {
						s.Positions++
					} else if err := item.Value(func(v []byte) error {
						idx, err := layout.ParsePosting(item.Key(), v, nil)
						s.Positions += len(idx)
						return err
					}); err != nil {
						return err
					}
				}
			}
			s.KeyBytes += int64(len(item.Key()))
			s.ValueBytes += item.ValueSize()
			out[k] = s
		}
		return nil
	})
	return out, err
}

// Count is the number of transactions in the index.
// It walks the record pages and counts their entries.
func (ix *Index) Count(ctx context.Context) (int, error) {
	n := 0
	err := ix.scan(ctx, kindPrefix(KindTx), nil, true, func(k, v []byte) ([]byte, bool, error) {
		return nil, false, walkTxKey(k, v, func(Loc, []byte) error { n++; return nil })
	})
	return n, err
}
