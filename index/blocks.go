package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/block"
)

// Block findings (issue 18; keys.go, 0x19 and 0x19's dirty marker 0x1a):
// the block analysis of every block whose records changed, stored beside
// its transactions.

// blockValueVersion is the first byte of a block value; the rest is the
// JSON of a block.Report.
const blockValueVersion = 1

func encodeBlockValue(r *block.Report) ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return append([]byte{blockValueVersion}, b...), nil
}

// ErrBadBlockValue reports a block value that does not decode.
var ErrBadBlockValue = errors.New("bad block findings value")

func decodeBlockValue(n uint64, v []byte) (*block.Report, error) {
	if len(v) == 0 || v[0] != blockValueVersion {
		return nil, fmt.Errorf("block %d: %w (version byte)", n, ErrBadBlockValue)
	}
	var r block.Report
	if err := json.Unmarshal(v[1:], &r); err != nil {
		return nil, fmt.Errorf("block %d: %w: %v", n, ErrBadBlockValue, err)
	}
	if r.Block != n {
		return nil, fmt.Errorf("block %d: %w: it holds block %d", n, ErrBadBlockValue, r.Block)
	}
	return &r, nil
}

// markDirty writes the dirty key of the blocks of a record written (and
// of the record it replaced), in the write's transaction.
func (w *wtx) markDirty(locs ...Loc) error {
	for _, l := range locs {
		if l.Block == UnknownBlock || !l.Known() {
			continue
		}
		if err := w.ix.set(w.txn, DirtyKey(l.Block).Bytes(), nil); err != nil {
			return err
		}
	}
	return nil
}

// RefreshBlocks computes the findings of every dirty block from its
// records (normal forms decoded, in index order) and writes each with
// its dirty key's deletion in one transaction; a block left without
// records loses its findings. cfg is the analysis configuration (nil:
// Ethereum defaults). It returns the number of blocks computed.
func (ix *Index) RefreshBlocks(ctx context.Context, cfg *normalform.Config) (int, error) {
	var dirty []uint64
	err := ix.db.View(func(txn *badger.Txn) error {
		return scanTxn(ctx, txn, kindPrefix(KindDirty), nil, false, func(k, _ []byte) ([]byte, bool, error) {
			key, err := ParseKey(k)
			if err != nil {
				return nil, true, err
			}
			dirty = append(dirty, key.Block)
			return nil, false, nil
		})
	})
	if err != nil {
		return 0, err
	}
	for _, n := range dirty {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		var txs []*normalform.Analysis
		err := ix.db.View(func(txn *badger.Txn) error {
			names := ix.namesIn(txn)
			return recordsTxn(ctx, txn, Blocks(n, n), func(l Loc, v []byte) error {
				if !l.Known() {
					return nil
				}
				rec, err := decodeRecord(l, v, names, depthFull)
				if err != nil {
					return fmt.Errorf("block %d: record at %s: %w", n, l, err)
				}
				a, err := rec.Analysis()
				if err != nil {
					return fmt.Errorf("block %d: normal form of tx %s: %w", n, rec.Hash.Hex(), err)
				}
				txs = append(txs, a)
				return nil
			})
		})
		if err != nil {
			return 0, err
		}
		var val []byte
		if len(txs) > 0 {
			r, err := block.Analyze(n, txs, cfg)
			if err != nil {
				return 0, err
			}
			if val, err = encodeBlockValue(r); err != nil {
				return 0, err
			}
		}
		if err := ix.roomFor(uint64(len(val)) + 1<<10); err != nil {
			return 0, err
		}
		err = ix.db.Update(func(txn *badger.Txn) error {
			if val == nil {
				if err := ix.del(txn, BlockKey(n).Bytes()); err != nil {
					return err
				}
			} else if err := ix.set(txn, BlockKey(n).Bytes(), val); err != nil {
				return err
			}
			return ix.del(txn, DirtyKey(n).Bytes())
		})
		if err != nil {
			return 0, ix.noSpace(err)
		}
	}
	return len(dirty), nil
}

// Block returns a block's findings; ok is false when the index holds none
// for it (no transaction of the block, or not yet computed: Dirty says).
func (ix *Index) Block(n uint64) (r *block.Report, ok bool, err error) {
	err = ix.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(BlockKey(n).Bytes())
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		r, err = decodeBlockValue(n, v)
		ok = err == nil
		return err
	})
	return r, ok, err
}

// Dirty reports whether a block's findings wait to be computed (an ingest
// stopped before it could).
func (ix *Index) Dirty(n uint64) (bool, error) {
	var dirty bool
	err := ix.db.View(func(txn *badger.Txn) error {
		_, err := txn.Get(DirtyKey(n).Bytes())
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		dirty = err == nil
		return err
	})
	return dirty, err
}

// BlockReports streams the findings of the blocks of a range, in block
// order.
func (ix *Index) BlockReports(ctx context.Context, blocks BlockRange, fn func(*block.Report) error) error {
	if blocks.From > blocks.To {
		return nil
	}
	lo := appendBlock(kindPrefix(KindBlock), blocks.From)
	return ix.db.View(func(txn *badger.Txn) error {
		return scanTxn(ctx, txn, kindPrefix(KindBlock), lo, true, func(k, v []byte) ([]byte, bool, error) {
			key, err := ParseKey(k)
			if err != nil {
				return nil, true, err
			}
			if key.Block > blocks.To {
				return nil, true, nil
			}
			r, err := decodeBlockValue(key.Block, v)
			if err != nil {
				return nil, true, err
			}
			return nil, false, fn(r)
		})
	})
}
