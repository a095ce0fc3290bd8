package normalform_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
)

// TestTrackerPoolConcurrent runs analyses of trees of every size class
// (small ones that reuse pooled root trackers, large ones whose trackers
// are dropped, and small ones after large ones) from four goroutines at
// once, and checks each encoding and hash against the same analysis run
// alone first: a tracker shared between two analyses, or one carrying
// state into the next, changes a normal form. Run under -race it also
// checks that the pool hands a tracker to one analysis at a time.
func TestTrackerPoolConcurrent(t *testing.T) {
	cfg := normalform.DefaultConfig()
	var txs []*normalform.Tx
	for i, n := range []int{3, 40, 300, 6000, 5, 120, 2, 900} {
		txs = append(txs, gen.StarTx(n, int64(i)), gen.ChainTx(n, int64(i)), gen.ScaleRandomTx(n, int64(i)))
	}
	type result struct {
		enc  []byte
		hash any
	}
	want := make([]result, len(txs))
	for i, tx := range txs {
		a, err := normalform.Analyze(tx, cfg)
		if err != nil {
			t.Fatalf("tx %d: %v", i, err)
		}
		want[i] = result{normalform.EncodeNF(a), a.Hashes()}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4*len(txs))
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for k := range txs {
				i := (k + g*5) % len(txs) // each goroutine in its own order
				a, err := normalform.Analyze(txs[i], cfg)
				if err != nil {
					errs <- err.Error()
					return
				}
				if !bytes.Equal(normalform.EncodeNF(a), want[i].enc) || a.Hashes() != want[i].hash {
					errs <- "goroutine " + string(rune('0'+g)) + ": a normal form differs from the one analysed alone"
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
