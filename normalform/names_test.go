package normalform

import (
	"strconv"
	"sync"
	"testing"
)

// TestNumNames: the step log's names made in blocks (shared by every
// kernel below sharedNamed, the kernel's own above it, made one by one
// out of range) are prefix and number, at the blocks' edges too, and
// kernels naming at once in several goroutines agree.
func TestNumNames(t *testing.T) {
	nums := []int64{-7, -1, 0, 1, 9, 10, 99, 100, 255, 256, 257, 1000, 65535,
		sharedNamed - 1, sharedNamed, sharedNamed + 1, sharedNamed + nameBlockSize, maxNamed - 1, maxNamed, maxNamed + 5}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []string
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := &kernel{}
			for _, i := range nums {
				for _, c := range []struct {
					nn     *numNames
					shared *sharedNames
					prefix string
				}{{&k.leafNames, &sharedLeafNames, "#"}, {&k.chainNames, &sharedChainNames, "C"}, {&k.frameNames, &sharedFrameNames, "frame "}} {
					if got, want := c.nn.get(c.shared, c.prefix, i), c.prefix+strconv.FormatInt(i, 10); got != want {
						mu.Lock()
						errs = append(errs, got+" for "+want)
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	for _, e := range errs[:min(len(errs), 10)] {
		t.Error(e)
	}
}
