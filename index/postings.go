package index

import (
	"errors"
	"slices"
	"unsafe"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
)

// Secondary keys as per-block postings (schema 12, layout/posting.go):
// the secondary keys of a transaction whose index is known are stored
// one per (kind, value, block), the key's value listing the block's
// indexes that have it.
//
// Writers: a record's keys (Record.Keys) are still one per (kind, value,
// loc); setKey and delKey route those of the posting kinds into the
// write transaction's posting cache (wtx.postKey): a posting is read at
// most once a Badger transaction (not at all when absent.go says its
// block held nothing when the transaction began), changed in memory, and
// written once, right before the commit (wtx.flush calls flushPostings;
// an emptied posting is deleted), through the index's hooked set and
// delete, so a failure leaves it as it was.
//
// Readers: postIter walks the keys under a prefix position by position,
// giving each position of a posting as its per-transaction key
// (layout.Entry), so that the readers of per-transaction keys (ParseKey,
// locOf, the block checks of scanGroupsTxn, the merge of addrKeys) read
// postings unchanged.

// wpost is a posting a write transaction has read or changed.
type wpost struct {
	idx   []uint32 // increasing
	dirty bool
}

// postArena gives a write transaction's postings, their keys and their
// first index from chunks: a new posting costs no allocation of its own
// (it cost three: the map key's string, the wpost and its index). What
// it gives is never written again but through the wpost (an index past
// the first moves the posting's indexes out of the chunk), so a chunk
// lives as long as the map (wtx.posts, then absent.posts) holds any of
// it.
type postArena struct {
	keys []byte
	ps   []wpost
	idx  []uint32
}

// key is a copy of k, as a string that shares the chunk.
func (a *postArena) key(k []byte) string {
	if len(k) == 0 {
		return ""
	}
	if cap(a.keys)-len(a.keys) < len(k) {
		a.keys = make([]byte, 0, max(16<<10, len(k)))
	}
	s := len(a.keys)
	a.keys = append(a.keys, k...)
	return unsafe.String(&a.keys[s], len(k))
}

// post is a new empty posting with room for one index.
func (a *postArena) post() *wpost {
	if len(a.ps) == cap(a.ps) {
		a.ps = make([]wpost, 0, 256)
	}
	if len(a.idx) == cap(a.idx) {
		a.idx = make([]uint32, 0, 1024)
	}
	a.ps = a.ps[:len(a.ps)+1]
	n := len(a.idx)
	a.idx = a.idx[:n+1]
	p := &a.ps[len(a.ps)-1]
	p.idx = a.idx[n : n : n+1]
	return p
}

// postsSize is the first size of the posting map of a batch of n
// operations: about nine postings a transaction on the synthetic
// workload (a map started at 1,024 grew twice in a batch of 256
// transactions), at least 1,024.
func postsSize(n int) int { return min(max(9*n, 1024), 1<<16) }

// postKey writes (set) or deletes one of a record's per-transaction
// secondary keys into its posting, when it is one (a posting kind, the
// index known): handled reports whether it was.
func (w *wtx) postKey(k []byte, set bool) (handled bool, err error) {
	pk, i, ok := layout.SplitPosting(k)
	if !ok {
		return false, nil
	}
	p, err := w.posting(pk)
	if err != nil {
		return true, err
	}
	j, found := slices.BinarySearch(p.idx, i)
	switch {
	case set && !found:
		p.idx = slices.Insert(p.idx, j, i)
		p.dirty = true
	case !set && found:
		p.idx = slices.Delete(p.idx, j, j+1)
		p.dirty = true
	}
	return true, nil
}

// posting is the posting under key pk as this write transaction sees it
// (read once a Badger transaction).
func (w *wtx) posting(pk []byte) (*wpost, error) {
	if p, ok := w.posts[string(pk)]; ok {
		return p, nil
	}
	p := w.arena.post()
	b := layout.BlockAt(pk[len(pk)-layout.BlockWidth:])
	if q, ok := w.abs.committedPost(pk, b); ok {
		if q != nil {
			p.idx = slices.Clone(q.idx)
		}
	} else if !w.abs.blockFresh(b) {
		item, err := w.txn.Get(pk)
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
		case err != nil:
			return nil, err
		default:
			if err := item.Value(func(v []byte) (err error) { p.idx, err = layout.ParsePosting(pk, v, p.idx[:0]); return }); err != nil {
				return nil, err
			}
		}
	}
	if w.posts == nil {
		w.posts = make(map[string]*wpost, 1024)
	}
	w.posts[w.arena.key(pk)] = p
	return p, nil
}

// keepPosts keeps the postings of a transaction that committed (its
// wtx's, no longer changed), and the blocks it wrote first, all of whose
// postings they are: the next transaction reads a posting of those
// blocks from them (committedPost) instead of from Badger, and a posting
// of those blocks they lack is absent. Only while the batches are the
// index's one writer (a non-nil absent); called before committed.
func (a *absent) keepPosts(posts map[string]*wpost) {
	if a != nil {
		a.posts = posts
		a.whole, a.fresh = a.fresh, a.whole // committed clears the new fresh
		if a.fresh == nil {
			a.fresh = map[uint64]struct{}{}
		}
	}
}

// committedPost is the posting under pk as the batches' last committed
// transaction left it: known when that transaction read or wrote it (an
// emptied posting: no index), or wrote its block first (absent: none).
func (a *absent) committedPost(pk []byte, block uint64) (p *wpost, known bool) {
	if a == nil {
		return nil, false
	}
	p, known = a.posts[string(pk)]
	if !known {
		_, known = a.whole[block]
	}
	if known {
		a.postSkips++
	}
	return p, known
}

// flushPostings writes every posting the transaction changed once (an
// emptied one is deleted), in no particular order (a Badger transaction
// keeps its writes in a map). wtx.flush calls it; so does a reader of
// the bot keys inside the write transaction (refreshFirst).
func (w *wtx) flushPostings() error {
	size := 0
	for k, p := range w.posts {
		if p.dirty {
			size += len(k) + 4*len(p.idx)
		}
	}
	if size == 0 {
		return nil
	}
	// Badger keeps the slices given to Set until the commit: one slab
	// for the keys and values, not reused.
	slab := make([]byte, 0, size)
	for k, p := range w.posts {
		if !p.dirty {
			continue
		}
		s := len(slab)
		slab = append(slab, k...)
		key := slab[s:len(slab):len(slab)]
		var err error
		if len(p.idx) == 0 {
			err = w.ix.del(w.txn, key)
		} else {
			s = len(slab)
			slab = layout.AppendPosting(slab, p.idx)
			err = w.ix.set(w.txn, key, slab[s:len(slab):len(slab)])
		}
		if err != nil {
			return err
		}
		p.dirty = false
	}
	return nil
}

// postIter walks the secondary keys under a prefix in key order,
// position by position: a posting gives each of its positions in turn,
// as its per-transaction key (layout.Entry); a key without value (index
// unknown) is itself. Seek's key must not go past a block (a posting is
// entered at its first position). A posting that does not parse stops
// the walk with a *layout.PostingError (Err).
type postIter struct {
	it     *badger.Iterator
	prefix []byte
	key    []byte // the current position's key; nil: done
	pk     []byte // the current posting's key
	idx    []uint32
	i      int
	err    error
}

func newPostIter(txn *badger.Txn, prefix []byte) *postIter {
	return &postIter{it: txn.NewIterator(badger.IteratorOptions{Prefix: prefix}), prefix: prefix}
}

func (p *postIter) Close() { p.it.Close() }

// Seek moves to the first position whose key is at least lo.
func (p *postIter) Seek(lo []byte) {
	p.it.Seek(lo)
	p.load()
}

// Valid reports whether there is a current position.
func (p *postIter) Valid() bool { return p.key != nil }

// Key is the current position's per-transaction key, valid until the
// next move.
func (p *postIter) Key() []byte { return p.key }

// Err is the error that ended the walk (nil: none).
func (p *postIter) Err() error { return p.err }

// Next moves to the next position.
func (p *postIter) Next() {
	if p.i+1 < len(p.idx) {
		p.i++
		p.key = layout.Entry(p.key[:0], p.pk, p.idx[p.i])
		return
	}
	p.it.Next()
	p.load()
}

// load enters the key the Badger iterator is at.
func (p *postIter) load() {
	p.idx, p.i = p.idx[:0], 0
	if p.err != nil || !p.it.ValidForPrefix(p.prefix) {
		p.key = nil
		return
	}
	item := p.it.Item()
	k := item.Key()
	buf := p.key
	if buf == nil {
		buf = make([]byte, 0, 64)
	}
	if _, ok := layout.IsPostingKey(k); !ok {
		p.key = append(buf[:0], k...)
		return
	}
	p.pk = append(p.pk[:0], k...)
	if err := item.Value(func(v []byte) (err error) { p.idx, err = layout.ParsePosting(p.pk, v, p.idx); return }); err != nil {
		p.err, p.key = err, nil
		return
	}
	p.key = layout.Entry(buf[:0], p.pk, p.idx[0])
}

// positionsOf calls fn with the position of every transaction a
// secondary key (k, its value v) stands for: a posting's, or the key's
// own loc.
func positionsOf(k, v []byte, fn func(l Loc) error) error {
	h, ok := layout.IsPostingKey(k)
	if !ok {
		l, err := locOf(k)
		if err != nil {
			return err
		}
		return fn(l)
	}
	idx, err := layout.ParsePosting(k, v, nil)
	if err != nil {
		return err
	}
	b := layout.BlockAt(k[h:])
	for _, i := range idx {
		if err := fn(Loc{Block: b, Index: i}); err != nil {
			return err
		}
	}
	return nil
}

// isPostingKey reports whether k is a posting key.
func isPostingKey(k []byte) bool { _, ok := layout.IsPostingKey(k); return ok }
