package normalform_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
)

// TestKernelBytes bounds the bytes the rewriting kernel allocates for one
// transaction of 20,000 transfers of each scale shape (issue 22, session
// 6: one run at a time, a run of 20,000 is what starts a collection cycle,
// so its bytes are what bends the growth curve's slope). The bounds sit
// between the code before session 6's continuation (star 13.84, chain
// 17.17, random 16.60 MB, measured as here) and after the tracker's
// pointer-free entries and dirty bitset, the reused nodes below the root
// and the blocks sized to their size class (13.22, 15.10, 14.80 MB).
// Bytes allocated do not depend on the machine's load: the second of two
// runs is measured (the first fills the pools a run reuses).
func TestKernelBytes(t *testing.T) {
	cfg := normalform.DefaultConfig()
	limits := map[string]uint64{"star": 13_600_000, "chain": 16_000_000, "random": 15_500_000}
	for _, sh := range gen.Shapes {
		t.Run(fmt.Sprintf("%s/n=20000", sh.Name), func(t *testing.T) {
			tx := sh.Build(20000, 1)
			var before, after runtime.MemStats
			for run := range 2 {
				runtime.ReadMemStats(&before)
				if err := normalform.Rewrite(tx, cfg); err != nil {
					t.Fatal(err)
				}
				runtime.ReadMemStats(&after)
				if run == 0 {
					continue
				}
				if b := after.TotalAlloc - before.TotalAlloc; b > limits[sh.Name] {
					t.Errorf("Rewrite of %s with 20,000 transfers allocated %d bytes, want at most %d", sh.Name, b, limits[sh.Name])
				} else {
					t.Logf("%s: %d bytes", sh.Name, b)
				}
			}
		})
	}
}
