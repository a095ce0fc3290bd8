package normalform_test

import (
	"math/rand"
	"sync"
	"testing"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
)

// TestTermsConcurrent: goroutines sharing one analysis may each call
// Terms and Hashes first (the memo is written atomically; this test is
// meant for -race): every one sees what one caller alone sees.
func TestTermsConcurrent(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for i := range 40 {
		tx, _ := gen.RandomRoute(r)
		alone, err := normalform.Analyze(tx, normalform.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		shared, err := normalform.Analyze(tx, normalform.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		want, wantTerms := alone.Hashes(), len(alone.Terms())
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if got := shared.Hashes(); got != want {
					t.Errorf("route %d: hashes %v with four callers at once, want %v", i, got, want)
				}
				if got := len(shared.Terms()); got != wantTerms {
					t.Errorf("route %d: %d terms with four callers at once, want %d", i, got, wantTerms)
				}
			}()
		}
		wg.Wait()
	}
}
