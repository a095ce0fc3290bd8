package ingest

import (
	"context"
	"sync"
)

// budget bounds the bytes of the inputs an ingest holds between their
// load and the writer (Options.InFlightBytes), beside the bound on
// their number (inputsInFlight). The decoders take an input's bytes in
// input order: the writer takes inputs in that order, so an input
// waiting for bytes that later inputs hold would wait for ever (they
// are not written before it). An input larger than the whole budget is
// let in when no other holds any. An input whose size is known before
// its load (Input.Size) takes its bytes before it is loaded; another
// takes them once loaded, so each decoder may hold one such input
// outside the budget while it waits.
type budget struct {
	mu   sync.Mutex
	cond *sync.Cond
	max  int64
	held int64
	turn int // the input (its seq) whose turn it is to take
	stop bool
}

func newBudget(ctx context.Context, max int64) *budget {
	b := &budget{max: max}
	b.cond = sync.NewCond(&b.mu)
	context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.stop = true
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	return b
}

// take waits for input seq's turn and for n bytes to be free, and takes
// them; false when the ingest stopped first. Every input takes its turn
// once (n 0 when it holds nothing: a read failure), or the ones after
// it wait until the ingest stops.
func (b *budget) take(seq int, n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for !b.stop && (b.turn != seq || (b.held > 0 && b.held+n > b.max)) {
		b.cond.Wait()
	}
	if b.stop {
		return false
	}
	b.held += n
	b.turn++
	b.cond.Broadcast()
	return true
}

// adjust corrects the bytes an input took before its load by what the
// load found (d = loaded - taken): more are taken without waiting (the
// input's turn is past; a file grew between its stat and its read), fewer
// are given back.
func (b *budget) adjust(d int64) {
	switch {
	case d > 0:
		b.mu.Lock()
		b.held += d
		b.mu.Unlock()
	case d < 0:
		b.give(-d)
	}
}

// give gives back n bytes taken.
func (b *budget) give(n int64) {
	if n == 0 {
		return
	}
	b.mu.Lock()
	b.held -= n
	b.cond.Broadcast()
	b.mu.Unlock()
}
