package index

import (
	"encoding/binary"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/normalform"
)

// Writes that do not read (issue 22). Writing a record reads the index
// first: the record at its position (a transaction already there, or
// another one: PositionError) and its hash's txhash key (the transaction
// elsewhere: a move replaces it). On an index that held no record when
// an ingest's batches began, and that no other writer has touched since,
// both keys can only hold what these batches wrote; the batches remember
// the blocks and the hash tags they wrote, and a read that could only
// miss is not made (a Badger read that misses searches every memtable
// and every level-0 table's filter). The sets over-approximate (a key
// written in a transaction that was then discarded stays in them), so a
// read skipped is one that would have found nothing.
//
// Other writers break the premise, so record writes are serialised
// (Index.recMu) and counted (Index.recWrites): PutRecord and Delete
// count theirs; a batch finding the count moved since its last commit
// reads everything from then on.

// absent is what an ingest's batches wrote to an index that held no
// record when they began.
type absent struct {
	blocks map[uint64]struct{} // blocks of the positions written
	tags   map[uint64]struct{} // txhash tags written (Short, 6 bytes; ~36 MB at 1M)
	// first holds the value of every first-seen key (bot, shape) as these
	// batches' last committed transaction left it (a key not there is
	// absent); pending, the current transaction's, until it commits.
	// Every first-seen write of a fresh index's batches goes through
	// them, but a recomputation from the bot keys (refreshFirst: a
	// replaced record), after which noFirst reads the keys again.
	first, pending map[string]Loc
	noFirst        bool
	// fresh are the blocks first written by the current transaction:
	// nothing of theirs was in the index when it began (postings.go).
	fresh map[uint64]struct{}
	// posts are the postings the last committed transaction read or
	// wrote, as it committed them (postings.go): a block cut by two
	// transactions is read from here, not from Badger; whole are the
	// blocks it wrote first, all of whose postings posts holds.
	posts     map[string]*wpost
	whole     map[uint64]struct{}
	skips     int // reads not made (tests)
	postSkips int // posting reads not made (tests)
}

func newAbsent() *absent {
	return &absent{blocks: map[uint64]struct{}{}, tags: map[uint64]struct{}{},
		first: map[string]Loc{}, pending: map[string]Loc{}, fresh: map[uint64]struct{}{}}
}

// firstOf is the position a first-seen key holds (found: the key is
// there), known when the batches know it without reading.
func (a *absent) firstOf(key []byte) (l Loc, found, known bool) {
	if a == nil || a.noFirst {
		return Loc{}, false, false
	}
	a.skips++
	if l, ok := a.pending[string(key)]; ok {
		return l, true, true
	}
	l, ok := a.first[string(key)]
	return l, ok, true
}

// setFirst notes a first-seen key written in the current transaction.
func (a *absent) setFirst(key []byte, l Loc) {
	if a != nil && !a.noFirst {
		a.pending[string(key)] = l
	}
}

// forgetFirst: a first-seen key was recomputed from the bot keys; read
// them all from now on.
func (a *absent) forgetFirst() {
	if a != nil {
		a.noFirst, a.first, a.pending = true, nil, nil
	}
}

// begin starts a transaction: what an earlier one that did not commit
// wrote is forgotten.
func (a *absent) begin() {
	if a != nil {
		clear(a.fresh)
	}
	if a != nil && !a.noFirst {
		clear(a.pending)
	}
}

// committed: the current transaction committed.
func (a *absent) committed() {
	if a != nil {
		clear(a.fresh)
	}
	if a != nil && !a.noFirst {
		for k, l := range a.pending {
			a.first[k] = l
		}
		clear(a.pending)
	}
}

func tagOf(tx normalform.Hash) uint64 {
	var b [8]byte
	copy(b[2:], tx[:6]) // Short: the txhash key's tag
	return binary.BigEndian.Uint64(b[:])
}

// posAbsent reports that no page (record or NF) holding l can be in
// Badger: l is a known position in a block that held nothing when the
// current transaction began (not written by these batches, or first
// written by this transaction: blockFresh's blocks).
func (a *absent) posAbsent(l Loc) bool {
	if a == nil || !l.Known() {
		return false
	}
	_, seen := a.blocks[l.Block]
	_, fresh := a.fresh[l.Block]
	if !seen || fresh {
		a.skips++
		return true
	}
	return false
}

// blockFresh reports that the index held nothing of a block when the
// current transaction began (its postings can only be this
// transaction's).
func (a *absent) blockFresh(b uint64) bool {
	if a == nil {
		return false
	}
	_, seen := a.blocks[b]
	_, fresh := a.fresh[b]
	if !seen || fresh {
		a.postSkips++
		return true
	}
	return false
}

// hashAbsent reports that tx's txhash key is absent.
func (a *absent) hashAbsent(tx normalform.Hash) bool {
	if a == nil {
		return false
	}
	_, ok := a.tags[tagOf(tx)]
	if !ok {
		a.skips++
	}
	return !ok
}

// wrote notes a record written at l.
func (a *absent) wrote(tx normalform.Hash, l Loc) {
	if a == nil {
		return
	}
	if _, ok := a.blocks[l.Block]; l.Known() && !ok {
		a.blocks[l.Block] = struct{}{}
		a.fresh[l.Block] = struct{}{}
	}
	a.tags[tagOf(tx)] = struct{}{}
}

// holdsRecords reports whether the index holds a record, a txhash key
// or a first-seen key.
func holdsRecords(txn *badger.Txn) bool {
	for _, k := range []Kind{KindTx, KindTxHash, KindFirst} {
		prefix := []byte{byte(k)}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		it.Seek(prefix)
		found := it.ValidForPrefix(prefix)
		it.Close()
		if found {
			return true
		}
	}
	return false
}
