package ingest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
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

// TestBudgetBeforeLoad: inputs whose size is known before they are
// loaded (Input.Size: files, bytes in memory) are loaded only once their
// bytes are taken, so the inputs loaded and not yet written never hold
// more than the budget and the input being written (none waits loaded
// beside it), with four decoders and a writer slower than they are. A
// file input's size is its stat; a file's that grew since is corrected.
func TestBudgetBeforeLoad(t *testing.T) {
	gen := scenarioGenerator(t, workload.Options{Seed: 5, BlockTxs: 4})
	const inputs = 40
	var mu sync.Mutex
	finished := 0
	sizes := make([]int64, inputs)
	loaded := make([]bool, inputs)
	var maxSize, worst int64
	var in []Input
	for k := range inputs {
		blk := gen.BlockAppend(nil)
		b := blk.Bundle
		sizes[k] = int64(len(b))
		maxSize = max(maxSize, sizes[k])
		in = append(in, Input{
			Name: fmt.Sprintf("synthetic:block:%d", blk.Number),
			Size: func() (int64, bool) { return int64(len(b)), true },
			Load: func(int) ([]byte, error) {
				mu.Lock()
				defer mu.Unlock()
				loaded[k] = true
				var held int64 // loaded, not yet written
				for j := finished; j < inputs; j++ {
					if loaded[j] {
						held += sizes[j]
					}
				}
				worst = max(worst, held)
				return b, nil
			},
		})
	}
	budgetBytes := 2 * maxSize
	ix, err := index.Open(filepath.Join(t.TempDir(), "ix"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	sum, err := Ingest(context.Background(), ix, in, Options{Workers: 4, BatchTxs: 1, InFlightBytes: budgetBytes,
		AfterCommit: func(n int) {
			time.Sleep(2 * time.Millisecond) // the writer slower than the decoders
			mu.Lock()
			finished = n
			mu.Unlock()
		}})
	if err != nil || sum.Stored != 4*inputs {
		t.Fatalf("ingest: %+v, %v", sum, err)
	}
	if worst > budgetBytes+maxSize {
		t.Errorf("inputs loaded and not written held %d bytes: more than the budget (%d) and the input being written (%d)", worst, budgetBytes, maxSize)
	}
	t.Logf("at most %d bytes loaded and not written (budget %d, largest input %d)", worst, budgetBytes, maxSize)
}

// TestFileInputSize: a file input's size is known before it is read
// (a regular file's stat), and a file that grows between its stat and its
// read is ingested whole, the budget corrected (adjust).
func TestFileInputSize(t *testing.T) {
	dir := t.TempDir()
	gen := scenarioGenerator(t, workload.Options{Seed: 6, BlockTxs: 3})
	path := filepath.Join(dir, "block.json")
	blk := gen.BlockAppend(nil)
	if err := os.WriteFile(path, blk.Bundle[:10], 0o644); err != nil {
		t.Fatal(err)
	}
	f := FileInput(path)
	if n, ok := f.Size(); !ok || n != 10 {
		t.Fatalf("size of a 10-byte file: %d, %v", n, ok)
	}
	load := f.Load
	f.Load = func(max int) ([]byte, error) { // the file grows after its stat
		if err := os.WriteFile(path, blk.Bundle, 0o644); err != nil {
			return nil, err
		}
		return load(max)
	}
	ix, err := index.Open(filepath.Join(dir, "ix"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	g := NewIngester(context.Background(), ix, Options{Workers: 1, InFlightBytes: 1 << 20})
	if err := g.Add(f); err != nil {
		t.Fatal(err)
	}
	sum, err := g.Close()
	if err != nil || sum.Stored != 3 {
		t.Fatalf("ingest of a file that grew: %+v, %v", sum, err)
	}
	if g.budget.held != 0 {
		t.Errorf("the budget holds %d bytes after the ingest (want 0)", g.budget.held)
	}
	if _, ok := FileInput(filepath.Join(dir, "missing.json")).Size(); ok {
		t.Error("a missing file has a size")
	}
	if n, ok := namedInput(path).Size(); !ok || n != int64(len(blk.Bundle)) { // --retry-failed's
		t.Errorf("a file read again: size %d, %v (want %d)", n, ok, len(blk.Bundle))
	}
}

// scenarioGenerator is a synthetic workload over the geth scenario
// bundles of examples/.
func scenarioGenerator(t *testing.T, opt workload.Options) *workload.Generator {
	t.Helper()
	sc, err := workload.LoadScenarios(filepath.Join("..", "..", "examples", "scenarios", "geth"))
	if err != nil {
		t.Fatal(err)
	}
	gen, err := workload.New(sc, opt)
	if err != nil {
		t.Fatal(err)
	}
	return gen
}
