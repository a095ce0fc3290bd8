package index

import (
	"context"
	"errors"
	"fmt"

	badger "github.com/dgraph-io/badger/v4"
	"github.com/zeebo/xxh3"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/block"
)

// Writing in batches: what the ingest pipeline (index/ingest) asks of the
// store. The pipeline decodes and analyses; the store writes each batch in
// one Badger transaction (split when Badger finds it too big, retried
// when a concurrent Put assigned dictionary ids), with each input's
// failures and marker in the batch with its last transaction.

// Entry is an analysed transaction ready to write: its record, encoded
// but for the dictionary ids, which the writer assigns.
type Entry struct {
	Rec *Record
	// Facts are what block analysis reads of the transaction's analysis
	// (block.FactsOf, under the batches' configuration), or nil: kept
	// for its block's findings at the end of the ingest, so that they
	// need not decode the record again (Batches.RefreshBlocks).
	Facts *block.TxFacts
	enc   *encoded
}

// NewEntry encodes rec for a batch, and builds its keys that need no
// dictionary id, on the analysing goroutine: the writer's is the
// ingest's one serial stage.
func NewEntry(rec *Record) *Entry {
	e := encodeRecord(rec)
	e.Fixed = rec.FixedKeys()
	return &Entry{Rec: rec, enc: e}
}

// Finish is an input's last step: its failures (replacing the earlier
// ones) and its marker.
type Finish struct {
	Name     string
	Content  [32]byte   // the input's content hash (ingest.contentHash)
	Skip     *InputMark // the marker that matched, when the input is skipped: nothing is written
	ReadFail bool       // the input could not be read: its failures are written, no marker
	Failures []Failure
	Txs      int // transactions of the input written (a transaction dropped by the writer is not)
	// BlockTxs: for each block whose header the input gives, the number of
	// transactions the header lists (trace.Result.BlockTxs), kept with the
	// block so that its findings know the indexes past the last one given.
	BlockTxs map[uint64]int
}

// Op is one step of a batch: a transaction to put (Entry, of the input
// whose finish is Owner), or an input finished (Fin). After Write,
// Changed says the transaction's record was written (new or different),
// Kept that it was not because the index's record knows more.
type Op struct {
	Entry   *Entry
	Owner   *Finish
	Changed bool
	Kept    bool
	Fin     *Finish
}

// Batches writes an ingest's batches.
type Batches struct {
	ix      *Index
	ctx     context.Context
	cfg     *normalform.Config
	fp      [8]byte
	failing failing // the transactions recorded failures name (supersede.go)
	// memo holds the facts of the records the batches wrote, for their
	// blocks' findings (blocks.go); refreshed are the blocks computed
	// (some before the end, when the memo grew to memoLimit).
	memo      factsMemo
	refreshed map[uint64]bool
	// abs: what these batches wrote, while the index held no record
	// before them and no other writer has written one since (absent.go);
	// nil: every write reads. seen is Index.recWrites after their last
	// transaction.
	abs  *absent
	seen uint64
}

// memoLimit bounds the facts an ingest keeps (about 1 kB each): past it,
// the findings of the dirty blocks are computed and the memo emptied.
const memoLimit = 1 << 16

// Batches starts writing an ingest's batches under the analysis
// configuration cfg (its fingerprint goes into the input markers).
func (ix *Index) Batches(ctx context.Context, cfg *normalform.Config) (*Batches, error) {
	f, err := ix.failingTxs(ctx)
	if err != nil {
		return nil, err
	}
	w := &Batches{ix: ix, ctx: ctx, cfg: cfg, fp: ConfigFingerprint(cfg), failing: f, memo: factsMemo{}}
	ix.recMu.Lock()
	defer ix.recMu.Unlock()
	w.seen = ix.recWrites
	txn := ix.db.NewTransaction(false)
	defer txn.Discard()
	if !holdsRecords(txn) {
		w.abs = newAbsent()
	}
	return w, nil
}

// RefreshBlocks computes the findings of every dirty block
// (Index.RefreshBlocks), reading the facts of the records these batches
// wrote from memory, and returns the number of blocks computed since the
// batches began (a block computed twice counted once).
func (w *Batches) RefreshBlocks(ctx context.Context) (int, error) {
	err := w.refresh(ctx)
	return len(w.refreshed), err
}

// refresh computes the dirty blocks with the memo, and empties it.
func (w *Batches) refresh(ctx context.Context) error {
	done, err := w.ix.refreshBlocks(ctx, w.cfg, w.memo)
	if w.refreshed == nil {
		w.refreshed = map[uint64]bool{}
	}
	for _, n := range done {
		w.refreshed[n] = true
	}
	clear(w.memo)
	return err
}

// Write writes ops, in one Badger transaction when they fit. A
// transaction that cannot be written (its position taken by another, or
// too big for one write on its own) becomes a failure of its input
// (Owner.Failures) and the rest is written.
func (w *Batches) Write(ops []Op) error {
	if err := w.commit(ops); err != nil {
		return err
	}
	if w.memo.size() >= memoLimit {
		return w.refresh(w.ctx)
	}
	return nil
}

func (w *Batches) commit(ops []Op) error {
	if err := w.ix.roomFor(opsSize(ops)); err != nil {
		return err
	}
	for range 10 {
		wt, err := w.try(ops)
		if errors.Is(err, badger.ErrConflict) {
			continue // a concurrent Put assigned dictionary ids: again
		}
		if err == nil && wt != nil {
			wt.committed()
		}
		return w.ix.noSpace(err)
	}
	return fmt.Errorf("writing a batch: %w", badger.ErrConflict)
}

// try writes ops in one Badger transaction; it returns the transaction's
// state after its commit (nil when a split or retry wrote the batch).
func (w *Batches) try(ops []Op) (*wtx, error) {
	w.ix.recMu.Lock()
	locked := true
	unlock := func() {
		if locked {
			locked = false
			w.ix.recMu.Unlock()
		}
	}
	defer unlock()
	if w.ix.recWrites != w.seen {
		w.abs = nil // another writer wrote records: read them
	}
	w.ix.recWrites++
	w.seen = w.ix.recWrites
	w.abs.begin()
	txn := w.ix.db.NewTransaction(true)
	defer txn.Discard()
	wt := w.ix.newWtx(txn)
	wt.posts = make(map[string]*wpost, postsSize(len(ops)))
	fails, err := failuresAt(txn, ops)
	if err != nil {
		return nil, err
	}
	var facts []memoAdd // the facts of the records written, once committed
	for i := range ops {
		err := w.apply(wt, &ops[i], fails)
		if e := ops[i].Entry; err == nil && e != nil && e.Facts != nil && wt.wrote != nil && e.Rec.Loc.Known() && e.Rec.Loc.Block != UnknownBlock {
			facts = append(facts, memoAdd{e.Rec.Loc, xxh3.Hash(contentOf(wt.wrote)), e.Facts})
		}
		var pe *PositionError
		switch {
		case err == nil:
			continue
		case errors.As(err, &pe) && ops[i].Entry != nil:
			// Not this transaction; the batch again without it.
			txn.Discard()
			unlock()
			w.drop(&ops[i], pe.Error())
			return nil, w.commit(ops)
		case errors.Is(err, badger.ErrTxnTooBig):
			txn.Discard()
			unlock()
			return nil, w.split(ops)
		default:
			return nil, err
		}
	}
	// The postings, NF pages and record pages the batch changed, each
	// written once (wtx.flush).
	if err := wt.flush(); errors.Is(err, badger.ErrTxnTooBig) {
		txn.Discard()
		unlock()
		return nil, w.split(ops)
	} else if err != nil {
		return nil, err
	}
	if err := txn.Commit(); err != nil {
		return wt, err
	}
	w.abs.keepPosts(wt.posts) // postings.go (before committed, which forgets the blocks it wrote first)
	w.abs.committed()
	for _, f := range facts {
		w.memo.add(f)
	}
	return wt, nil
}

// split writes a batch too big for one Badger transaction in two
// halves, or drops its one transaction.
func (w *Batches) split(ops []Op) error {
	if len(ops) > 1 {
		half := len(ops) / 2
		if err := w.commit(ops[:half]); err != nil {
			return err
		}
		return w.commit(ops[half:])
	}
	if ops[0].Entry == nil {
		return fmt.Errorf("%s: the input's failures and marker do not fit in one write", ops[0].Fin.Name)
	}
	w.drop(&ops[0], fmt.Sprintf("tx %s: its record and keys do not fit in one Badger write", ops[0].Entry.Rec.Hash.Hex()))
	return nil
}

// drop turns a transaction that cannot be written into a failure of its
// input.
func (w *Batches) drop(o *Op, msg string) {
	o.Owner.Failures = append(o.Owner.Failures, Failure{Source: o.Owner.Name, Stage: StageIndex, Tx: o.Entry.Rec.Hash, HasTx: true, Msg: msg})
	o.Owner.Txs--
	o.Entry = nil
}

// failuresAt lists, before the transaction writes anything, the ranks
// of the failure keys of the inputs ops finish. A Badger iterator in a
// write transaction first sorts every key the transaction has written
// (sort.Slice over the pending writes: 3% of the ingest's CPU when each
// input's finish walked its failures after its records); at the start
// there are none.
func failuresAt(txn *badger.Txn, ops []Op) (map[SourceID][]uint32, error) {
	var out map[SourceID][]uint32
	for i := range ops {
		f := ops[i].Fin
		if f == nil || f.Skip != nil {
			continue
		}
		src := SourceOf(f.Name)
		if _, ok := out[src]; ok {
			continue
		}
		if out == nil {
			out = map[SourceID][]uint32{}
		}
		prefix := FailureKey(src, 0).Bytes()
		prefix = prefix[:len(prefix)-4]
		seqs := []uint32{}
		it := txn.NewIterator(badger.IteratorOptions{Prefix: prefix})
		for it.Seek(prefix); it.ValidForPrefix(prefix); it.Next() {
			k, err := ParseKey(it.Item().Key())
			if err != nil {
				it.Close()
				return nil, err
			}
			seqs = append(seqs, k.Seq)
		}
		it.Close()
		out[src] = seqs
	}
	return out, nil
}

// staleFailuresIn deletes an input's failures from rank n on (an input
// ingested again with fewer failures than before; a failure cleared
// since may have left a gap among them), from the ranks failuresAt
// listed, which it then sets to the input's failures as now written
// (0..n-1: for a later finish of the same input in the transaction).
// A rank listed whose key the transaction has deleted since (a failure
// cleared) is deleted again, which changes nothing.
func (wt *wtx) staleFailuresIn(fails map[SourceID][]uint32, src SourceID, n uint32) error {
	for _, seq := range fails[src] {
		if seq >= n {
			if err := wt.ix.del(wt.txn, FailureKey(src, seq).Bytes()); err != nil {
				return err
			}
		}
	}
	seqs := make([]uint32, n)
	for i := range seqs {
		seqs[i] = uint32(i)
	}
	fails[src] = seqs
	return nil
}

func (w *Batches) apply(wt *wtx, o *Op, fails map[SourceID][]uint32) error {
	ix, txn := w.ix, wt.txn
	if o.Entry != nil {
		changed, err := wt.putAbsent(o.Entry.Rec, o.Entry.enc, w.abs)
		o.Changed, o.Kept = changed, wt.kept
		if err != nil {
			return err
		}
		return w.failing.clear(wt, o.Entry.Rec.Hash, SourceOf(o.Owner.Name))
	}
	if o.Fin == nil {
		return nil
	}
	f := o.Fin
	if f.Skip != nil {
		return nil
	}
	src := SourceOf(f.Name)
	for i, fl := range f.Failures {
		fl.Seq = uint32(i)
		f.Failures[i] = fl
		if err := ix.set(txn, FailureKey(src, uint32(i)).Bytes(), fl.encode()); err != nil {
			return err
		}
	}
	if err := wt.staleFailuresIn(fails, src, uint32(len(f.Failures))); err != nil { // earlier failures beyond the new ones
		return err
	}
	w.failing.add(src, f.Failures)
	if f.ReadFail {
		return nil
	}
	for n, c := range f.BlockTxs {
		if err := wt.markCount(n, c); err != nil {
			return err
		}
	}
	m := InputMark{Name: f.Name, Content: f.Content, Schema: SchemaVersion, Algebra: normalform.AlgebraVersion,
		Config: w.fp, Txs: f.Txs, Failures: len(f.Failures)}
	return ix.set(txn, InputKey(src).Bytes(), m.encode())
}
