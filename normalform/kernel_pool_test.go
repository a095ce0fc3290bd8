package normalform_test

import (
	"bytes"
	"math/rand"
	"sync"
	"testing"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
)

// TestKernelPoolKeepsNothing: kernels are kept between analyses for their
// scratch (releaseKernel), so an analysis must own everything it returns.
// Analyses made one after another, and on two goroutines at once, encode
// (normal form, step log, hashes) the same when encoded after all of them
// ran as right after each one did.
func TestKernelPoolKeepsNothing(t *testing.T) {
	cfg := normalform.DefaultConfig()
	var txs []*normalform.Tx
	for s := int64(0); s < 400; s++ {
		txs = append(txs, gen.RandomTx(rand.New(rand.NewSource(s)), s%25 == 0))
	}
	for _, sh := range gen.Shapes {
		txs = append(txs, sh.Build(300, 1))
	}
	encode := func(a *normalform.Analysis) []byte {
		h := a.Hashes()
		b := append(normalform.EncodeNF(a), h.Exact[:]...)
		for _, st := range a.Steps {
			b = append(b, st.String()...)
		}
		return b
	}
	type result struct {
		a    *normalform.Analysis
		want []byte
	}
	run := func(txs []*normalform.Tx) []result {
		var out []result
		for _, tx := range txs {
			a, err := normalform.Analyze(tx, cfg)
			if err != nil {
				continue // an overflow error: nothing returned to keep
			}
			out = append(out, result{a, encode(a)})
		}
		return out
	}
	var got [2][]result
	var wg sync.WaitGroup
	for g := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[g] = run(txs)
		}()
	}
	wg.Wait()
	for g := range got {
		if len(got[g]) < len(txs)/2 {
			t.Fatalf("goroutine %d: %d analyses of %d transactions", g, len(got[g]), len(txs))
		}
		for i, r := range got[g] {
			if b := encode(r.a); !bytes.Equal(b, r.want) {
				t.Fatalf("goroutine %d, analysis %d: its encoding changed after later analyses ran", g, i)
			}
		}
	}
}
