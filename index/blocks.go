package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"
	"github.com/zeebo/xxh3"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/block"
)

// Block findings (issue 18; keys.go, 0x19 and 0x19's dirty marker 0x1a):
// the block analysis of every block whose records changed, stored beside
// its transactions.

// blockValueVersion is the first byte of a block value; the rest is the
// binary form of the block's findings (block.Report.AppendFindings:
// counts, missing indexes, builder totals, sandwiches and back-runs; not
// the Txs and Swaps lists, which the block's records give).
const blockValueVersion = 2

func encodeBlockValue(r *block.Report) ([]byte, error) {
	return r.AppendFindings([]byte{blockValueVersion}), nil
}

// ErrBadBlockValue reports a block value that does not decode.
var ErrBadBlockValue = errors.New("bad block findings value")

// decodeBlockValue reads a block value: the findings, without Txs (nil)
// and Swaps (empty).
func decodeBlockValue(n uint64, v []byte) (*block.Report, error) {
	if len(v) == 0 || v[0] != blockValueVersion {
		return nil, fmt.Errorf("block %d: %w (version byte)", n, ErrBadBlockValue)
	}
	r, err := block.DecodeFindings(n, v[1:])
	if err != nil {
		return nil, fmt.Errorf("block %d: %w: %v", n, ErrBadBlockValue, err)
	}
	return r, nil
}

// markDirty writes the dirty key of the blocks of a record written (and
// of the record it replaced), in the write's transaction.
func (w *wtx) markDirty(locs ...Loc) error {
	for _, l := range locs {
		if l.Block == UnknownBlock || !l.Known() || w.dirty[l.Block] {
			continue
		}
		if err := w.ix.set(w.txn, DirtyKey(l.Block).Bytes(), nil); err != nil {
			return err
		}
		if w.dirty == nil {
			w.dirty = map[uint64]bool{}
		}
		w.dirty[l.Block] = true // once a write transaction: a batch holds a block's transactions
	}
	return nil
}

// markCount writes a block's dirty key with the number of transactions
// its header lists (an input that gives the header), in the write's
// transaction.
func (w *wtx) markCount(n uint64, count int) error {
	if n == UnknownBlock || count < 0 {
		return nil
	}
	if err := w.ix.set(w.txn, DirtyKey(n).Bytes(), binary.AppendUvarint(nil, uint64(count))); err != nil {
		return err
	}
	if w.dirty == nil {
		w.dirty = map[uint64]bool{}
	}
	w.dirty[n] = true
	return nil
}

// RefreshBlocks computes the findings of every dirty block from its
// records (normal forms decoded, in index order) and writes each with
// its dirty key's deletion in one transaction; a block left without
// records loses its findings. cfg is the analysis configuration (nil:
// Ethereum defaults). It returns the number of blocks computed.
func (ix *Index) RefreshBlocks(ctx context.Context, cfg *normalform.Config) (int, error) {
	done, err := ix.refreshBlocks(ctx, cfg, nil)
	return len(done), err
}

// factsMemo holds the block facts of records an ingest wrote, per block
// and index, with the XXH3 of the record's content they were written
// with: a record still holding that content has those facts, any other is
// decoded (a record written since by another writer).
type factsMemo map[uint64]map[uint32]memoFacts

type memoFacts struct {
	sum   uint64
	facts *block.TxFacts
}

type memoAdd struct {
	loc Loc
	sum uint64
	f   *block.TxFacts
}

func (m factsMemo) add(a memoAdd) {
	b := m[a.loc.Block]
	if b == nil {
		b = map[uint32]memoFacts{}
		m[a.loc.Block] = b
	}
	b[a.loc.Index] = memoFacts{a.sum, a.f}
}

func (m factsMemo) size() int {
	n := 0
	for _, b := range m {
		n += len(b)
	}
	return n
}

// refreshChunk is how many dirty blocks refreshBlocks computes at a
// time (on all cores: blockValues) and then writes in one Badger
// transaction (writeBlockValues). Taken one block at a time, an
// ingest's writer waited, for every block, on its analysis on one core,
// a space check and a Badger write (BENCHMARKS.md, "Session 13").
const refreshChunk = 256

// refreshBlocks is RefreshBlocks with the facts of records an ingest
// wrote (memo, or nil); it returns the blocks computed.
func (ix *Index) refreshBlocks(ctx context.Context, cfg *normalform.Config, memo factsMemo) ([]uint64, error) {
	var dirty []uint64
	counts := map[uint64]int{} // the counts dirty keys carry
	err := ix.db.View(func(txn *badger.Txn) error {
		return scanTxn(ctx, txn, kindPrefix(KindDirty), nil, true, func(k, v []byte) ([]byte, bool, error) {
			key, err := ParseKey(k)
			if err != nil {
				return nil, true, err
			}
			dirty = append(dirty, key.Block)
			if c, m := binary.Uvarint(v); m > 0 && m == len(v) && c <= math.MaxInt32 {
				counts[key.Block] = int(c)
			}
			return nil, false, nil
		})
	})
	if err != nil {
		return nil, err
	}
	for lo := 0; lo < len(dirty); lo += refreshChunk {
		part := dirty[lo:min(lo+refreshChunk, len(dirty))]
		vals, err := ix.blockValues(ctx, part, counts, cfg, memo)
		if err != nil {
			return nil, err
		}
		if err := ix.writeBlockValues(part, vals); err != nil {
			return nil, err
		}
	}
	return dirty, nil
}

// blockValues computes the findings of blocks (each in its own read
// transaction, on all cores) and returns each one's stored value (nil:
// the block has no record). counts are the transaction counts the dirty
// keys carry; memo is read, not written. An error is the first block's,
// in blocks' order; a panic in a block's analysis is its error.
func (ix *Index) blockValues(ctx context.Context, blocks []uint64, counts map[uint64]int, cfg *normalform.Config, memo factsMemo) ([][]byte, error) {
	vals := make([][]byte, len(blocks))
	errs := make([]error, len(blocks))
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range min(scanWorkers(), len(blocks)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !failed.Load() && ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(blocks) {
					return
				}
				if vals[i], errs[i] = ix.blockValue(ctx, blocks[i], counts, cfg, memo); errs[i] != nil {
					failed.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return vals, nil
}

// blockValue is one block's findings as blockValues computes them.
func (ix *Index) blockValue(ctx context.Context, n uint64, counts map[uint64]int, cfg *normalform.Config, memo factsMemo) (val []byte, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true)) // a goroutine of blockValues: a fault here is recovered below
	defer func() {
		if p := recover(); p != nil {
			val, err = nil, fmt.Errorf("block %d: internal error computing its findings: %v", n, p)
		}
	}()
	var r *block.Report
	err = ix.db.View(func(txn *badger.Txn) (err error) {
		count, ok := counts[n]
		if !ok {
			count = ix.storedCount(txn, n)
		}
		r, err = ix.analyzeBlock(ctx, txn, n, cfg, count, memo[n])
		return err
	})
	if err != nil || r == nil {
		return nil, err
	}
	return encodeBlockValue(r)
}

// writeBlockValues writes blocks' findings (vals, as blockValues gives
// them: nil deletes a block's) and deletes their dirty keys, in one
// Badger transaction, or in halves when Badger finds it too big.
func (ix *Index) writeBlockValues(blocks []uint64, vals [][]byte) error {
	size := uint64(len(blocks)) << 10
	for _, v := range vals {
		size += uint64(len(v))
	}
	if err := ix.roomFor(size); err != nil {
		return err
	}
	err := ix.db.Update(func(txn *badger.Txn) error {
		for i, n := range blocks {
			var err error
			if vals[i] == nil {
				err = ix.del(txn, BlockKey(n).Bytes())
			} else {
				err = ix.set(txn, BlockKey(n).Bytes(), vals[i])
			}
			if err == nil {
				err = ix.del(txn, DirtyKey(n).Bytes())
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, badger.ErrTxnTooBig) && len(blocks) > 1 {
		h := len(blocks) / 2
		if err := ix.writeBlockValues(blocks[:h], vals[:h]); err != nil {
			return err
		}
		return ix.writeBlockValues(blocks[h:], vals[h:])
	}
	return ix.noSpace(err)
}

// analyzeBlockTxn computes a block's findings from its records (normal
// forms decoded, in index order) in txn; nil when it has none.
// storedCount is the header's transaction count the block's stored
// findings carry (-1: none known).
func (ix *Index) storedCount(txn *badger.Txn, n uint64) int {
	item, err := txn.Get(BlockKey(n).Bytes())
	if err != nil {
		return -1
	}
	var r *block.Report
	if err := item.Value(func(v []byte) error { r, err = decodeBlockValue(n, v); return err }); err != nil || r == nil || r.Count <= 0 {
		return -1
	}
	return r.Count
}

// analyzeBlockTxn computes a block's findings; count is the number of
// transactions the block's header lists (-1: unknown).
func (ix *Index) analyzeBlockTxn(ctx context.Context, txn *badger.Txn, n uint64, cfg *normalform.Config, count int) (*block.Report, error) {
	return ix.analyzeBlock(ctx, txn, n, cfg, count, nil)
}

// analyzeBlock is analyzeBlockTxn taking the facts of a record from memo
// (the block's, or nil) when the record holds the content they were
// written with, and decoding its normal form otherwise.
func (ix *Index) analyzeBlock(ctx context.Context, txn *badger.Txn, n uint64, cfg *normalform.Config, count int, memo map[uint32]memoFacts) (*block.Report, error) {
	if cfg == nil {
		cfg = normalform.DefaultConfig()
	}
	var txs []*block.TxFacts
	var names Names
	nfs := newNFReader(txn) // one read of each NF page (nfpages.go)
	err := recordsTxn(ctx, txn, Blocks(n, n), func(l Loc, v []byte) error {
		if !l.Known() {
			return nil
		}
		if m, ok := memo[l.Index]; ok && m.sum == xxh3.Hash(contentOf(v)) {
			txs = append(txs, m.facts)
			return nil
		}
		if names == nil {
			names = ix.namesIn(txn)
		}
		rec, err := decodeRecord(l, v, names, depthFull)
		if err == nil {
			err = nfs.set(rec)
		}
		if err != nil {
			return fmt.Errorf("block %d: record at %s: %w", n, l, err)
		}
		a, err := rec.Analysis()
		if err != nil {
			return fmt.Errorf("block %d: normal form of tx %s: %w", n, rec.Hash.Hex(), err)
		}
		txs = append(txs, block.FactsOf(a, cfg))
		return nil
	})
	if err != nil || len(txs) == 0 {
		return nil, err
	}
	for _, f := range txs {
		if f.HasIndex && f.Index >= count {
			count = -1 // a record past the count: the count is not this block's (never an error here)
			break
		}
	}
	r, err := block.AnalyzeFacts(n, txs, cfg, count)
	if err == nil && r != nil && count > 0 {
		r.Count = count
	}
	return r, err
}

// Block returns a block's findings, with its Txs and Swaps lists rebuilt
// from its records (the stored findings hold neither; each row's roles
// are the stored findings'); ok is false when the index holds none for
// it (no transaction of the block, or not yet computed: Dirty says).
func (ix *Index) Block(n uint64) (r *block.Report, ok bool, err error) {
	err = ix.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(BlockKey(n).Bytes())
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := item.Value(func(v []byte) (err error) { r, err = decodeBlockValue(n, v); return err }); err != nil {
			return err
		}
		count := -1
		if r.Count > 0 {
			count = r.Count
		}
		got, err := ix.analyzeBlockTxn(context.Background(), txn, n, nil, count)
		if err != nil {
			return err
		}
		if got != nil {
			roles := block.Roles(r)
			r.Txs, r.Swaps = got.Txs, got.Swaps
			for i := range r.Txs {
				r.Txs[i].Roles = roles[r.Txs[i].Index]
			}
		}
		ok = true
		return nil
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
// order: as stored, without the Txs list (nil) and the Swaps list (empty),
// which the blocks' records give (Block rebuilds them; block.Roles gives
// each transaction's roles).
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

// VerifyBlocks checks the block findings against the records: every
// block holding records (at a known index) has findings, equal to those
// its records' normal forms give under cfg (nil: Ethereum defaults; the
// configuration the index was ingested with); findings of a block
// without records are stale; a dirty key is a block whose findings wait
// to be computed (an ingest stopped before it could; the next ingest
// computes them). It returns the number of blocks checked, and reports
// the first violations it finds (at most ten), each naming its block.
func (ix *Index) VerifyBlocks(ctx context.Context, cfg *normalform.Config) (int, error) {
	var errs []error
	checked := 0
	report := func(format string, a ...any) bool {
		errs = append(errs, fmt.Errorf(format, a...))
		return len(errs) >= 10
	}
	err := ix.db.View(func(txn *badger.Txn) error {
		// The blocks: those with records, with findings, or dirty.
		blocks := map[uint64]bool{}
		txPrefix := kindPrefix(KindTx)
		err := scanTxn(ctx, txn, txPrefix, nil, false, func(k, _ []byte) ([]byte, bool, error) {
			l, rest, err := layout.ReadLoc(k[1:])
			if err != nil || len(rest) != 0 {
				return nil, true, fmt.Errorf("%w: tx key %x", ErrBadKey, k)
			}
			if l.Block == UnknownBlock {
				return nil, true, nil
			}
			blocks[l.Block] = true
			return appendBlock(append([]byte(nil), txPrefix...), l.Block+1), false, nil
		})
		if err != nil {
			return err
		}
		dirty := map[uint64]bool{}
		for _, kind := range []Kind{KindBlock, KindDirty} {
			err := scanTxn(ctx, txn, kindPrefix(kind), nil, false, func(k, _ []byte) ([]byte, bool, error) {
				key, err := ParseKey(k)
				if err != nil {
					return nil, true, err
				}
				blocks[key.Block] = true
				if kind == KindDirty {
					dirty[key.Block] = true
				}
				return nil, false, nil
			})
			if err != nil {
				return err
			}
		}
		order := make([]uint64, 0, len(blocks))
		for n := range blocks {
			order = append(order, n)
		}
		slices.Sort(order)
		for _, n := range order {
			if err := ctx.Err(); err != nil {
				return err
			}
			if dirty[n] {
				checked++
				if report("block %d: dirty: its findings wait to be computed (an ingest stopped before it could; the next ingest computes them)", n) {
					return nil
				}
				continue
			}
			var stored *block.Report
			item, err := txn.Get(BlockKey(n).Bytes())
			if err == nil {
				err = item.Value(func(v []byte) (err error) {
					stored, err = decodeBlockValue(n, v)
					return err
				})
				if err != nil {
					if errors.Is(err, ErrBadBlockValue) {
						if report("%v", err) {
							return nil
						}
						continue
					}
					return err
				}
			} else if !errors.Is(err, badger.ErrKeyNotFound) {
				return err
			}
			count := -1
			if stored != nil && stored.Count > 0 {
				count = stored.Count
			}
			got, err := ix.analyzeBlockTxn(ctx, txn, n, cfg, count)
			if err != nil {
				if report("block %d: its findings cannot be computed from its records: %v", n, err) {
					return nil
				}
				continue
			}
			if stored == nil && got == nil {
				continue // records at unknown indexes only: no findings
			}
			checked++
			var stop bool
			switch {
			case stored == nil:
				stop = report("block %d: no findings stored, and it holds %d transactions", n, len(got.Txs))
			case got == nil:
				stop = report("block %d: findings stored for a block with no records (stale)", n)
			default:
				if d := reportDiff(stored, got); len(d) > 0 {
					stop = report("block %d: stored findings differ from those its records give, in %s (stored %s; computed %s)",
						n, strings.Join(d, ", "), reportBrief(stored), reportBrief(got))
				}
			}
			if stop {
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return checked, err
	}
	return checked, errors.Join(errs...)
}

// reportDiff names the parts of two block reports that differ among
// those a block value stores (not Txs and Swaps, which the records give).
func reportDiff(a, b *block.Report) []string {
	type part struct {
		name string
		a, b any
	}
	var d []string
	for _, p := range []part{
		{"partial", [2]any{a.Partial, a.Missing}, [2]any{b.Partial, b.Missing}},
		{"count", a.Count, b.Count},
		{"sandwiches", a.Sandwiches, b.Sandwiches},
		{"backruns", a.Backruns, b.Backruns},
		{"builder", a.Builder, b.Builder},
	} {
		x, errx := json.Marshal(p.a)
		y, erry := json.Marshal(p.b)
		if errx != nil || erry != nil || !bytes.Equal(x, y) {
			d = append(d, p.name)
		}
	}
	return d
}

// reportBrief counts a block report's parts (its rows when it has them).
func reportBrief(r *block.Report) string {
	s := fmt.Sprintf("%d sandwiches, %d back-runs, builder %s", len(r.Sandwiches), len(r.Backruns), r.Builder.Total)
	if r.Txs != nil { // computed from the records (stored findings hold no rows)
		s = fmt.Sprintf("%d txs, %s", len(r.Txs), s)
	}
	return s
}
