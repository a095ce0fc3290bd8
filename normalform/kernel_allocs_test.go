package normalform_test

import (
	"fmt"
	"testing"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
)

// TestKernelAllocations bounds the rewriting kernel's allocations per
// transaction for every scale shape (issue 22): the kernel carves its
// nodes, chains, small δs and the root tracker's grown lists from blocks,
// and keeps a large δ in pointer-free slots, so a transaction of n
// transfers costs far fewer than n/4 allocations (at 2,000 transfers
// about 190–230; before the blocks, 1,100–2,200: one or more per built
// chain). Allocation counts do not depend on the machine's load.
func TestKernelAllocations(t *testing.T) {
	cfg := normalform.DefaultConfig()
	for _, sh := range gen.Shapes {
		for _, n := range []int{2000, 20000} {
			t.Run(fmt.Sprintf("%s/n=%d", sh.Name, n), func(t *testing.T) {
				tx := sh.Build(n, 1)
				var err error
				allocs := testing.AllocsPerRun(2, func() {
					if e := normalform.Rewrite(tx, cfg); e != nil {
						err = e
					}
				})
				if err != nil {
					t.Fatal(err)
				}
				if limit := float64(n) / 4; allocs > limit {
					t.Errorf("Rewrite of %s with %d transfers: %.0f allocations, want at most %.0f", sh.Name, n, allocs, limit)
				}
			})
		}
	}
}
