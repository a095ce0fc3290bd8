package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
)

// The dictionary of structural hashes (keys.go: 0x04 dict, 0x05 name,
// 0x06 next). Ids are assigned by writes (wtx.id) in the Badger
// transaction of the record that first uses them, and are immutable once
// committed, so the cache below only ever holds committed entries and
// never goes stale: a write's new ids enter it after its commit.

type dictName struct {
	level normalform.Level
	h     normalform.Hash
}

// dictCache holds committed dictionary entries (distinct shape, tokens
// and family hashes: few; addresses by role, layout.LevelAddr: a bot's,
// its senders', the tokens').
//
// A name is read without a lock: scans resolve eight ids a record, from
// every worker, and a million records' addresses are some 200,000
// distinct ids. runs holds the names by id in runs of nameChunk, each
// slot published once (a name never changes); a writer (add, loadChunk)
// takes mu and replaces the slice of runs when it grows.
type dictCache struct {
	mu   sync.RWMutex
	ids  map[dictName]uint32
	runs atomic.Pointer[[]*nameRun]
	// read are the runs whose names have been read (loadChunk): a reader
	// that misses an id reads its run's names with one iterator, not one
	// point read an id (a reopened million's first find met ~50,000
	// distinct principals: ~0.4 s of point reads).
	read map[uint32]bool
}

// nameRun is the names of one run of nameChunk consecutive ids, in line
// (a lookup reads one slot, not a pointer and then its name): a slot's
// name is written once, before its set flag, and read only after it.
type nameRun [nameChunk]nameSlot

type nameSlot struct {
	set atomic.Bool
	n   dictName
}

// nameChunk is the run of consecutive ids a reader's miss reads at once.
// Ids are given in the order records first use them, so a run's names
// tend to be wanted together.
const nameChunk = 1024

func newDictCache() *dictCache {
	return &dictCache{ids: map[dictName]uint32{}, read: map[uint32]bool{}}
}

// loadChunk reads the names of the ids of id's run, as txn sees them,
// into the cache, once a run (false: the run was read already).
func (c *dictCache) loadChunk(txn *badger.Txn, id uint32) (bool, error) {
	chunk := id / nameChunk
	c.mu.RLock()
	done := c.read[chunk]
	c.mu.RUnlock()
	if done {
		return false, nil
	}
	var names []dictName
	var got []uint32
	it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: []byte{byte(KindName)}})
	defer it.Close()
	end := NameKey(chunk*nameChunk + nameChunk - 1).Bytes()
	for it.Seek(NameKey(chunk * nameChunk).Bytes()); it.Valid(); it.Next() {
		item := it.Item()
		k := item.Key()
		if bytes.Compare(k, end) > 0 {
			break
		}
		key, err := ParseKey(k)
		if err != nil {
			return false, err
		}
		var n dictName
		if err := item.Value(func(v []byte) (err error) { n, err = parseNameValue(v); return }); err != nil {
			return false, fmt.Errorf("name key %x: %w", k, err)
		}
		names, got = append(names, n), append(got, key.ID)
	}
	c.mu.Lock()
	for i, id := range got {
		c.put(&names[i], id)
	}
	c.read[chunk] = true
	c.mu.Unlock()
	return true, nil
}

func (c *dictCache) id(n dictName) (uint32, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	id, ok := c.ids[n]
	return id, ok
}

// name is id's name, if the cache has it; it takes no lock.
func (c *dictCache) name(id uint32) (dictName, bool) {
	if runs := c.runs.Load(); runs != nil {
		if r := id / nameChunk; int(r) < len(*runs) {
			if run := (*runs)[r]; run != nil {
				if slot := &run[id%nameChunk]; slot.set.Load() {
					return slot.n, true
				}
			}
		}
	}
	return dictName{}, false
}

func (c *dictCache) add(n dictName, id uint32) {
	c.mu.Lock()
	c.put(&n, id)
	c.mu.Unlock()
}

// put publishes n as id's name; c.mu is held.
func (c *dictCache) put(n *dictName, id uint32) {
	c.ids[*n] = id
	var runs []*nameRun
	if p := c.runs.Load(); p != nil {
		runs = *p
	}
	r := int(id / nameChunk)
	if r >= len(runs) || runs[r] == nil {
		grown := make([]*nameRun, max(len(runs), r+1))
		copy(grown, runs)
		grown[r] = new(nameRun)
		runs = grown
		c.runs.Store(&runs)
	}
	if slot := &runs[r][id%nameChunk]; !slot.set.Load() {
		slot.n = *n
		slot.set.Store(true)
	}
}

func nameValue(n dictName) []byte { return layout.NameValue(n.level, n.h) }

func parseNameValue(v []byte) (dictName, error) {
	l, h, err := layout.ParseNameValue(v)
	return dictName{level: l, h: h}, err
}

func parseID(v []byte) (uint32, error) {
	if len(v) != 4 || binary.BigEndian.Uint32(v) == 0 {
		return 0, fmt.Errorf("bad dictionary id %x", v)
	}
	return binary.BigEndian.Uint32(v), nil
}

// namesIn resolves ids as txn, a read transaction, sees the dictionary
// (committed entries), through the cache (its reads take no lock).
func (ix *Index) namesIn(txn *badger.Txn) Names { return ix.namesFor(txn, true) }

// namesFor is namesIn; chunks says whether a miss may read its id's run
// of names (loadChunk) into the cache: not in a write transaction, whose
// iterator would see, and the cache keep, names it has not committed.
func (ix *Index) namesFor(txn *badger.Txn, chunks bool) Names {
	return func(l normalform.Level, id uint32) (normalform.Hash, bool) {
		n, ok := ix.dict.name(id)
		if !ok && chunks {
			if read, err := ix.dict.loadChunk(txn, id); err == nil && read {
				n, ok = ix.dict.name(id)
			}
		}
		if ok {
			return n.h, n.level == l
		}
		// not in its run as read before (an id written since, by another
		// process), or the run did not read: one point read
		item, err := txn.Get(NameKey(id).Bytes())
		if err != nil {
			return normalform.Hash{}, false
		}
		if err := item.Value(func(v []byte) (err error) { n, err = parseNameValue(v); return }); err != nil {
			return normalform.Hash{}, false
		}
		ix.dict.add(n, id)
		return n.h, n.level == l
	}
}

// idIn is the id of a hash as txn sees the dictionary (false: none).
func (ix *Index) idIn(txn *badger.Txn, l normalform.Level, h normalform.Hash) (uint32, bool, error) {
	n := dictName{l, h}
	if id, ok := ix.dict.id(n); ok {
		return id, true, nil
	}
	item, err := txn.Get(DictKey(l, h).Bytes())
	if errors.Is(err, badger.ErrKeyNotFound) {
		return 0, false, nil
	} else if err != nil {
		return 0, false, err
	}
	var id uint32
	if err := item.Value(func(v []byte) (err error) { id, err = parseID(v); return }); err != nil {
		return 0, false, err
	}
	ix.dict.add(n, id)
	return id, true, nil
}

// wtx is a write transaction with the dictionary entries it assigned
// (not yet committed, so not yet in the cache).
type wtx struct {
	ix      *Index
	txn     *badger.Txn
	pending map[dictName]uint32
	names   map[uint32]dictName
	next    uint32 // the next id; 0 until read
	// kept is set by put when it kept the index's record, which knows
	// more than the one it was given.
	kept bool
	// wrote is the record value put left at the record's position (written,
	// or the same content there already); nil when it kept the index's.
	wrote []byte
	// dirty are the blocks whose dirty key this transaction has written
	// (blocks.go).
	dirty map[uint64]bool
	// pages are the record pages the transaction has read or changed
	// (pages.go); abs, when set, says which cannot exist (absent.go).
	pages pageCache
	abs   *absent
	// posts are the postings it has read or changed (postings.go), their
	// keys and values from arena.
	posts map[string]*wpost
	arena postArena
	// nfPages are the NF pages it has read or changed (nfpages.go).
	nfPages pageCache
}

func (ix *Index) newWtx(txn *badger.Txn) *wtx {
	return &wtx{ix: ix, txn: txn, pages: pageCache{kind: recordPages}, nfPages: pageCache{kind: nfPages}}
}

// id returns a hash's id, assigning the next one when it has none.
func (w *wtx) id(l normalform.Level, h normalform.Hash) (uint32, error) {
	n := dictName{l, h}
	if id, ok := w.pending[n]; ok {
		return id, nil
	}
	id, ok, err := w.ix.idIn(w.txn, l, h)
	if err != nil || ok {
		return id, err
	}
	if w.next == 0 {
		w.next = 1
		item, err := w.txn.Get(NextKey().Bytes())
		switch {
		case errors.Is(err, badger.ErrKeyNotFound):
		case err != nil:
			return 0, err
		default:
			if err := item.Value(func(v []byte) (err error) { w.next, err = parseID(v); return }); err != nil {
				return 0, err
			}
		}
	}
	id = w.next
	if id == 0 || id == ^uint32(0) {
		return 0, errors.New("the dictionary of structural hashes and addresses is full")
	}
	w.next++
	if err := w.ix.set(w.txn, DictKey(l, h).Bytes(), binary.BigEndian.AppendUint32(nil, id)); err != nil {
		return 0, err
	}
	if err := w.ix.set(w.txn, NameKey(id).Bytes(), nameValue(n)); err != nil {
		return 0, err
	}
	if err := w.ix.set(w.txn, NextKey().Bytes(), binary.BigEndian.AppendUint32(nil, w.next)); err != nil {
		return 0, err
	}
	if w.pending == nil {
		w.pending, w.names = map[dictName]uint32{}, map[uint32]dictName{}
	}
	w.pending[n], w.names[id] = id, n
	return id, nil
}

// addrIDs returns the dictionary ids of a record's dictionary addresses
// (layout.Encoded.Dict: 20 bytes each), assigning the next ones to those
// that have none, into dst.
func (w *wtx) addrIDs(dict []byte, dst []uint32) ([]uint32, error) {
	for i := 0; i+20 <= len(dict); i += 20 {
		var h normalform.Hash
		copy(h[:], dict[i:i+20])
		id, err := w.id(layout.LevelAddr, h)
		if err != nil {
			return dst, err
		}
		dst = append(dst, id)
	}
	return dst, nil
}

// resolve resolves ids as the write transaction sees them.
func (w *wtx) resolve() Names {
	committed := w.ix.namesFor(w.txn, false)
	return func(l normalform.Level, id uint32) (normalform.Hash, bool) {
		if n, ok := w.names[id]; ok {
			return n.h, n.level == l
		}
		return committed(l, id)
	}
}

// committed publishes the transaction's new ids, after its commit.
func (w *wtx) committed() {
	for n, id := range w.pending {
		w.ix.dict.add(n, id)
	}
}
