package ingest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/internal/workload"
)

// TestBudgetOrderAndBound: takers of a budget started in any order, each
// given back in input order once taken (as the writer does): none waits
// for ever, the bytes held never pass the budget but for an input
// larger than it, held alone.
func TestBudgetOrderAndBound(t *testing.T) {
	const n, budgetBytes = 200, 1000
	b := newBudget(context.Background(), budgetBytes)
	sizes := make([]int64, n)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range sizes {
		sizes[i] = rng.Int64N(400)
		if i%37 == 5 {
			sizes[i] = 2500 // larger than the budget
		}
	}
	var mu sync.Mutex
	var held, peak int64
	alone := true
	taken := make([]chan struct{}, n)
	for i := range taken {
		taken[i] = make(chan struct{})
	}
	var wg sync.WaitGroup
	for _, i := range rng.Perm(n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !b.take(i, sizes[i]) {
				t.Errorf("input %d: take failed", i)
				return
			}
			mu.Lock()
			held += sizes[i]
			if sizes[i] > budgetBytes && held != sizes[i] {
				alone = false
			}
			if sizes[i] <= budgetBytes {
				peak = max(peak, held)
			}
			mu.Unlock()
			close(taken[i])
		}()
	}
	// The writer: each input in order, once taken, its bytes given back.
	for i := range n {
		select {
		case <-taken[i]:
		case <-time.After(10 * time.Second):
			t.Fatalf("input %d never took its bytes (held %d)", i, held)
		}
		mu.Lock()
		held -= sizes[i]
		mu.Unlock()
		b.give(sizes[i])
	}
	wg.Wait()
	if peak > budgetBytes {
		t.Errorf("%d bytes held at once, budget %d", peak, budgetBytes)
	}
	if !alone {
		t.Error("an input larger than the budget was let in beside another")
	}
}

// TestBudgetWaitsForTurn: an input does not take before the inputs
// ahead of it, even with the whole budget free.
func TestBudgetWaitsForTurn(t *testing.T) {
	b := newBudget(context.Background(), 1000)
	done := make(chan struct{})
	go func() {
		b.take(3, 1)
		close(done)
	}()
	for i := range 3 {
		select {
		case <-done:
			t.Fatalf("input 3 took before input %d", i)
		case <-time.After(30 * time.Millisecond):
		}
		b.take(i, 1)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("input 3 never took after inputs 0-2")
	}
}

// TestBudgetStops: a taker waiting for its turn or for bytes returns
// false once the ingest stops.
func TestBudgetStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	b := newBudget(ctx, 10)
	if !b.take(0, 10) {
		t.Fatal("first take failed")
	}
	var waiting sync.WaitGroup
	var got atomic.Int32
	for _, seq := range []int{1, 2} { // 1 waits for bytes, 2 for its turn
		waiting.Add(1)
		go func() {
			defer waiting.Done()
			if b.take(seq, 5) {
				got.Add(1)
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	cancel()
	done := make(chan struct{})
	go func() { waiting.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("takers still waiting after the stop")
	}
	if got.Load() != 0 {
		t.Errorf("%d takes succeeded after the stop", got.Load())
	}
}

// TestIngestSmallBudget: an ingest whose byte budget is smaller than
// any of its inputs (each then let in alone), with inputs that fail to
// load among them, stores everything, records the failures and ends;
// the same as with the default budget.
func TestIngestSmallBudget(t *testing.T) {
	sc, err := workload.LoadScenarios(filepath.Join("..", "..", "examples", "scenarios", "geth"))
	if err != nil {
		t.Fatal(err)
	}
	dump := map[int64]string{}
	for _, limit := range []int64{1, 0} {
		gen, err := workload.New(sc, workload.Options{Seed: 9, BlockTxs: 5})
		if err != nil {
			t.Fatal(err)
		}
		var in []Input
		unreadable := 0
		for k := range 40 {
			blk := gen.BlockAppend(nil)
			in = append(in, BundleInput(fmt.Sprintf("synthetic:block:%d", blk.Number), blk.Bundle))
			if k%9 == 4 {
				name := fmt.Sprintf("unreadable:%d", k)
				in = append(in, Input{Name: name, Load: func(int) ([]byte, error) { return nil, errors.New("cannot read " + name) }})
				unreadable++
			}
		}
		ix, err := index.Open(filepath.Join(t.TempDir(), "ix"))
		if err != nil {
			t.Fatal(err)
		}
		sum, err := Ingest(context.Background(), ix, in, Options{Workers: 4, BatchTxs: 16, InFlightBytes: limit})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Stored != 200 || sum.Failed != unreadable || sum.Inputs != len(in) {
			t.Errorf("budget %d: %+v (want 200 stored, %d failed, %d inputs)", limit, sum, unreadable, len(in))
		}
		var recs []string
		if err := ix.Records(context.Background(), index.AllBlocks, func(r *index.Record) error {
			recs = append(recs, r.Hash.Hex()+" "+r.Verdict.String())
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		dump[limit] = fmt.Sprint(recs)
		ix.Close()
	}
	if dump[1] != dump[0] {
		t.Error("the records differ with a budget of one byte")
	}
}
