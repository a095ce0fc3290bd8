package normalform_test

import (
	"bytes"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
)

// TestKernelCarriedBlocks: a pooled kernel carries the unused rests of
// its blocks of small δs, operand lists and lift texts to the next
// analysis (releaseKernel), the step log an analysis keeps is copied out
// of the kernel's working log (keepSteps), and classify's balances and
// reasons out of its buffers (deltaAcc, keep). No two analyses may share
// any of that memory, and an analysis must read the same after later
// ones ran as right after it was made, and the same as when the
// transactions are analysed in the opposite order (other carvings).
func TestKernelCarriedBlocks(t *testing.T) {
	cfg := normalform.DefaultConfig()
	var txs []*normalform.Tx
	for s := int64(0); s < 300; s++ {
		txs = append(txs, gen.RandomTx(rand.New(rand.NewSource(s)), s%40 == 0))
	}
	for _, sh := range gen.Shapes {
		txs = append(txs, sh.Build(200, 1))
	}
	encode := func(a *normalform.Analysis) []byte {
		h := a.Hashes()
		b := append(normalform.EncodeNF(a), h.Exact[:]...)
		for _, st := range a.Steps {
			b = append(b, st.String()...)
		}
		return fmt.Appendf(b, "%v|%v|%v|%v|%v|%v|%v", a.Gross, a.Explained, a.Unexplained, a.Net, a.Reasons, a.Verdict, a.Tier)
	}
	type owned struct {
		r  normalform.MemRange
		tx int
	}
	run := func(order []int) (map[int]*normalform.Analysis, map[int][]byte, []owned) {
		as, enc := map[int]*normalform.Analysis{}, map[int][]byte{}
		var mem []owned
		for _, i := range order {
			a, err := normalform.Analyze(txs[i], cfg)
			if err != nil {
				continue
			}
			if len(a.Steps) != cap(a.Steps) {
				t.Fatalf("tx %d: step log of %d steps kept in an array of %d", i, len(a.Steps), cap(a.Steps))
			}
			as[i], enc[i] = a, encode(a)
			for _, r := range normalform.CarvedMemory(a) {
				mem = append(mem, owned{r, i})
			}
		}
		return as, enc, mem
	}
	fwd := make([]int, len(txs))
	for i := range fwd {
		fwd[i] = i
	}
	rev := make([]int, len(txs))
	for i := range rev {
		rev[i] = len(txs) - 1 - i
	}
	as, enc, mem := run(fwd)
	if len(as) < len(txs)/2 {
		t.Fatalf("%d analyses of %d transactions", len(as), len(txs))
	}
	asR, encR, memR := run(rev)
	for i, a := range as {
		if !bytes.Equal(encode(a), enc[i]) {
			t.Fatalf("tx %d: its analysis changed after later analyses ran", i)
		}
		if !bytes.Equal(enc[i], encR[i]) {
			t.Fatalf("tx %d: analysed after other transactions, its analysis differs", i)
		}
	}
	for i, a := range asR {
		if !bytes.Equal(encode(a), encR[i]) {
			t.Fatalf("tx %d (reverse order): its analysis changed after later analyses ran", i)
		}
	}
	// No memory held by two analyses (both runs' analyses are alive).
	for _, m := range memR {
		m.tx += len(txs)
		mem = append(mem, m)
	}
	sort.Slice(mem, func(x, y int) bool { return mem[x].r.Start < mem[y].r.Start })
	adjacent := 0
	for x := 1; x < len(mem); x++ {
		p, q := mem[x-1], mem[x]
		if q.r.Start < p.r.End && p.tx != q.tx {
			t.Fatalf("analyses of tx %d and tx %d share memory [%#x, %#x) and [%#x, %#x)",
				p.tx%len(txs), q.tx%len(txs), p.r.Start, p.r.End, q.r.Start, q.r.End)
		}
		if q.r.Start == p.r.End && p.tx != q.tx {
			adjacent++ // carved one after the other from one block
		}
	}
	t.Logf("%d ranges, %d where one analysis's carving follows another's", len(mem), adjacent)
}
