package index

import (
	"errors"
	"testing"

	badger "github.com/dgraph-io/badger/v4"
)

// rawNF reads the NF value at l through its page (nil, false: none).
func rawNF(t *testing.T, ix *Index, l Loc) ([]byte, bool) {
	t.Helper()
	var v []byte
	err := ix.db.View(func(txn *badger.Txn) error {
		return newNFReader(txn).nf(l, func(b []byte) error { v = append([]byte(nil), b...); return nil })
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return nil, false
	} else if err != nil {
		t.Fatal(err)
	}
	return v, true
}

// putNFRaw writes (v non-nil) or deletes the NF value at l in its page
// and nothing else: damage, for the tests of the readers.
func putNFRaw(t *testing.T, ix *Index, l Loc, v []byte) {
	t.Helper()
	err := ix.db.Update(func(txn *badger.Txn) error {
		w := ix.newWtx(txn)
		if _, err := w.nfKey(NFKey(l).Bytes(), v, v == nil); err != nil {
			return err
		}
		return w.flush()
	})
	if err != nil {
		t.Fatal(err)
	}
}
