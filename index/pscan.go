package index

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/dgraph-io/badger/v4"

	"github.com/flowq/flowq/index/layout"
)

// The record scan on all cores. Records are keyed by position, so a block
// range is a key range; scanRecords cuts it into chunks of consecutive
// blocks, reads the chunks on several goroutines (each with its own
// iterator in the one read transaction) and hands their records to fn in
// position order on the caller's goroutine. What a user sees — rows, their
// order, the first error — is the sequential scan's.
//
// Chunks are sized as the scan goes: the first is one block (the first row
// comes as soon as a sequential scan's would), then each doubles until a
// chunk has been read, and from then on a chunk spans the blocks expected
// to hold chunkRecords records at the density seen so far. Empty block
// ranges are skipped by seeking to the next record, so a sparse index (or
// the unknown-block transactions after the last known block) costs nothing.
// At most workers+1 chunks are read ahead of fn, which bounds memory.

// chunkRecords is the records a chunk aims at (a variable for tests).
var chunkRecords int64 = 4096

// scanWorkers is the number of goroutines that read chunks.
var scanWorkers = func() int { return runtime.GOMAXPROCS(0) }

type chunk struct {
	from, to uint64 // blocks
	recs     []*Record
	lent     []Record // a lent scan's records: lent[:kept] (slots past kept are scratch)
	kept     int
	n        int // records read (matching or not)
	err      error
	done     chan struct{}
}

// scanSpec is what a record scan decodes, and what it gives fn.
type scanSpec struct {
	d     depth // what match sees: a partial record (header, or header and addresses)
	front bool  // match sees only the record's front (when out is past d)
	match func(*Record) (bool, error)
	out   depth // what fn receives; past d, the record is decoded again
	// lent (out == depthRow): fn's record is lent, valid only during fn,
	// and its storage decodes later records (no record allocated per row).
	lent bool
}

// scanRecords calls fn, in position order, with every record of blocks
// whose header s.match accepts (nil: every record). match runs on a
// partial record (depth s.d: header, or header and addresses) on several
// goroutines at once, and must only read it. fn receives the record
// decoded to depth s.out when s.out is past s.d (depthWhole: with its NF,
// read from its key), else the partial record match saw (a fresh one fn
// may keep, unless s.lent). With s.front set (and out past d), match sees
// only the record's front (layout.RowDecoder.Front: no dictionary ids
// resolved, no reasons).
func (ix *Index) scanRecords(ctx context.Context, txn *badger.Txn, blocks BlockRange, s scanSpec, fn func(*Record) error) error {
	if blocks.From > blocks.To {
		return nil
	}
	if s.lent && s.out != depthRow {
		s.lent = false // only rows are lent (a bug in the caller otherwise; never lend what it did not ask to borrow)
	}
	workers := scanWorkers()
	if workers < 2 {
		var one *Record
		return guarded(func() error {
			return ix.readChunk(ctx, txn, blocks, s, fn, &chunkState{slot: func() *Record {
				if one == nil {
					one = &Record{}
				}
				return one
			}})
		})
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait() // no iterator outlives the transaction
	}()

	work := make(chan *chunk)
	order := make(chan *chunk, workers+1)
	ahead := make(chan struct{}, workers+1)
	free := make(chan []Record, workers+2) // a lent scan's slabs, back from fn
	var seenRecs, seenBlocks atomic.Int64

	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := &chunkState{names: ix.namesIn(txn)} // one per goroutine (it caches unlocked)
			var c *chunk
			keep := func(r *Record) error {
				c.recs = append(c.recs, r)
				return nil
			}
			if s.lent {
				st.slot = func() *Record {
					if c.kept < cap(c.lent) {
						c.lent = c.lent[:c.kept+1] // the slot keeps its arrays
					} else {
						c.lent = append(c.lent, Record{})
					}
					return &c.lent[c.kept]
				}
				keep = func(*Record) error { c.kept++; return nil }
			}
			for c = range work {
				if s.lent {
					select {
					case c.lent = <-free:
					default:
					}
				}
				st.n = 0
				c.err = guarded(func() error { return ix.readChunk(ctx, txn, Blocks(c.from, c.to), s, keep, st) })
				c.n = st.n
				if c.err == nil && c.to-c.from < 1<<40 {
					seenRecs.Add(int64(c.n))
					seenBlocks.Add(int64(c.to - c.from + 1))
				}
				close(c.done)
			}
		}()
	}

	// dispatch cuts the range into chunks, in order, for the workers.
	dispatch := func() {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: layout.KindPrefix(KindTx)})
		defer it.Close()
		next, span := blocks.From, uint64(1)
		for {
			// The next block that holds a record.
			lo, _ := layout.BlockBounds(layout.KindPrefix(KindTx), next, blocks.To)
			it.Seek(lo)
			if !it.ValidForPrefix(layout.KindPrefix(KindTx)) {
				return
			}
			l, err := layout.TxLoc(it.Item().Key())
			if err != nil || l.Block > blocks.To {
				// A bad key is left to the chunk that reads it to report.
				if err == nil {
					return
				}
				l.Block = next
			}
			from := max(l.Block, next)
			if recs, bl := seenRecs.Load(), seenBlocks.Load(); recs > 0 {
				span = max(1, uint64(chunkRecords*bl/recs))
			} else if next != blocks.From {
				span *= 2
			}
			to := blocks.To
			if from+span-1 >= from && from+span-1 < to {
				to = from + span - 1
			}
			c := &chunk{from: from, to: to, done: make(chan struct{})}
			select {
			case ahead <- struct{}{}:
			case <-ctx.Done():
				return
			}
			select {
			case work <- c:
			case <-ctx.Done():
				return
			}
			order <- c
			if to == blocks.To {
				return
			}
			next = to + 1
		}
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(order)
		defer close(work)
		if err := guarded(func() error { dispatch(); return nil }); err != nil {
			c := &chunk{err: err, done: make(chan struct{})} // the scan's last, its error
			close(c.done)
			select {
			case order <- c:
			case <-ctx.Done():
			}
		}
	}()

	for c := range order {
		select {
		case <-c.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		emit := func(i int, r *Record) error {
			if i%64 == 0 { // a chunk may hold many records: honour a cancel before and within it, as the sequential scan does
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			return fn(r)
		}
		// those before a chunk's error too, as a sequential scan gives them
		for i, r := range c.recs {
			if err := emit(i, r); err != nil {
				return err
			}
		}
		for i := range c.kept {
			if err := emit(i, &c.lent[i]); err != nil {
				return err
			}
		}
		if c.err != nil {
			return c.err
		}
		if c.lent != nil {
			select {
			case free <- c.lent[:0]: // fn is done with its records: their storage decodes the next chunks'
			default:
			}
		}
		c.recs, c.lent = nil, nil
		<-ahead
	}
	return ctx.Err()
}

// chunkState is what a worker keeps across chunks.
type chunkState struct {
	names Names
	n     int            // records read in the chunk
	slot  func() *Record // a lent scan's: where the next row is decoded
	dec   layout.RowDecoder
}

// readChunk is the sequential scan of one block range.
func (ix *Index) readChunk(ctx context.Context, txn *badger.Txn, blocks BlockRange, s scanSpec, fn func(*Record) error, st *chunkState) error {
	d, match, out := s.d, s.match, s.out
	whole := out > d
	front := s.front && whole // a record fn keeps is never a front
	names := st.names
	if names == nil {
		names = ix.namesIn(txn)
		st.names = names
	}
	head := &Record{}
	var slab []Record // the records fn receives, allocated 32 at a time
	// NFs in step with the records: one read of each NF page (nfpages.go)
	nfs := newNFReader(txn)
	return recordsTxn(ctx, txn, blocks, func(l Loc, v []byte) error {
		st.n++
		if match != nil || !whole {
			var h *Record
			var err error
			switch {
			case front:
				h, err = head, st.dec.Front(head, l, v) // reused: only match sees it, and only fronts are decoded into it
			case whole:
				h, _, err = decodeInto(head, l, v, names, d) // reused: only match sees it
			default:
				h, err = decodeRecord(l, v, names, d)
			}
			if err != nil {
				return err
			}
			if match != nil {
				if ok, err := match(h); err != nil || !ok {
					return err
				}
			}
			if !whole {
				return fn(h)
			}
		}
		if s.lent {
			rec, err := st.dec.Row(st.slot(), l, v, names)
			if err != nil {
				return err
			}
			return fn(rec)
		}
		if len(slab) == 0 {
			slab = make([]Record, 32)
		}
		rec, _, err := decodeInto(&slab[0], l, v, names, out)
		if err != nil {
			return err
		}
		slab = slab[1:]
		if out == depthWhole {
			if err := nfs.set(rec); err != nil {
				return err
			}
		}
		return fn(rec)
	})
}
