package index

import (
	"context"
	"errors"

	badger "github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/normalform"
)

// Failures superseded by a later ingest.
//
// A failure recorded for a transaction (its input did not decode it) is
// cleared when a later input of the ingest puts that transaction in the
// index: the failure no longer says that the transaction is missing, and
// --retry-failed would otherwise run the failed input again (which, since
// put never lets a record that knows less replace one that knows more,
// changes nothing). The failures of the input that stores the transaction
// are its own, rewritten with its marker as always.

// failRef names one recorded failure.
type failRef struct {
	src SourceID
	seq uint32
}

// failing maps each transaction named by a recorded failure to its
// failures (nil when there are none: the common case costs nothing).
type failing map[normalform.Hash][]failRef

// failingTxs reads the failures that name a transaction.
func (ix *Index) failingTxs(ctx context.Context) (failing, error) {
	var m failing
	err := ix.failures(ctx, func(src SourceID, f Failure) error {
		m.add(src, []Failure{f})
		return nil
	})
	return m, err
}

// add records the failures an input has just written.
func (m *failing) add(src SourceID, fs []Failure) {
	for _, f := range fs {
		if !f.HasTx {
			continue
		}
		if *m == nil {
			*m = failing{}
		}
		(*m)[f.Tx] = append((*m)[f.Tx], failRef{src, f.Seq})
	}
}

// clear deletes, in the write transaction, the failures of transaction tx
// recorded by inputs other than src: tx has just been put in the index by
// src.
func (m failing) clear(w *wtx, tx normalform.Hash, src SourceID) error {
	refs := m[tx]
	if len(refs) == 0 {
		return nil
	}
	// The map is left as it is: the write may be retried (a conflict) or
	// fail, and a failure already deleted is skipped below.
	for _, r := range refs {
		if r.src == src {
			continue
		}
		k := FailureKey(r.src, r.seq).Bytes()
		// Only a failure still there and still naming tx (its input may
		// have been ingested again since, renumbering its failures).
		item, err := w.txn.Get(k)
		if errors.Is(err, badger.ErrKeyNotFound) {
			continue
		} else if err != nil {
			return err
		}
		var f Failure
		if err := item.Value(func(v []byte) (err error) {
			f, err = decodeFailure(Key{Kind: KindFailure, Source: r.src, Seq: r.seq}, v)
			return
		}); err != nil {
			return err
		}
		if !f.HasTx || f.Tx != tx {
			continue
		}
		if err := w.ix.del(w.txn, k); err != nil {
			return err
		}
	}
	return nil
}
