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
	tags   map[uint64]struct{} // txhash tags written (Short, 6 bytes)
	skips  int                 // reads not made (tests)
}

func newAbsent() *absent {
	return &absent{blocks: map[uint64]struct{}{}, tags: map[uint64]struct{}{}}
}

func tagOf(tx normalform.Hash) uint64 {
	var b [8]byte
	copy(b[2:], tx[:6]) // Short: the txhash key's tag
	return binary.BigEndian.Uint64(b[:])
}

// posAbsent reports that no record is at l: a known position in a block
// these batches have not written.
func (a *absent) posAbsent(l Loc) bool {
	if a == nil || !l.Known() {
		return false
	}
	_, ok := a.blocks[l.Block]
	if !ok {
		a.skips++
	}
	return !ok
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
	if l.Known() {
		a.blocks[l.Block] = struct{}{}
	}
	a.tags[tagOf(tx)] = struct{}{}
}

// holdsRecords reports whether the index holds a record or a txhash
// key.
func holdsRecords(txn *badger.Txn) bool {
	for _, k := range []Kind{KindTx, KindTxHash} {
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
