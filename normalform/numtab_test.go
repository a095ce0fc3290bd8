package normalform

import (
	"math/rand"
	"testing"
)

// TestNumTab numbers keys in arrival order through several growths,
// empties the table and numbers other keys in it, as a kept root tracker
// does from one analysis to the next: a key of the earlier use must not
// be found, and the numbering starts again from 0. Each round but the
// first reserves fewer keys than it numbers (the table grows within the
// array an earlier round left), and a small round's table is small.
func TestNumTab(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	var tab numTab[Address]
	for round, n := range []int{5000, 30, 2000, 0, 7} {
		if round > 0 {
			tab.reserve(n / 2)
			if n < 100 && len(tab.tab) > 64 {
				t.Fatalf("round %d: a table of %d positions for %d keys", round, len(tab.tab), n/2)
			}
		}
		want := map[Address]int32{}
		var order []Address
		for range 3 * n {
			var a Address
			a[r.Intn(20)] = byte(r.Intn(256)) // collisions of addresses: repeats
			a[0] = byte(round)
			x := tab.num(&a, hashAddr(&a), hashAddr)
			if w, ok := want[a]; ok {
				if x != w {
					t.Fatalf("round %d: %x numbered %d, then %d", round, a, w, x)
				}
				continue
			}
			if int(x) != len(order) {
				t.Fatalf("round %d: new key %x numbered %d, want %d", round, a, x, len(order))
			}
			want[a] = x
			order = append(order, a)
		}
		if tab.len() != len(order) || 2*tab.len() > len(tab.tab) {
			t.Fatalf("round %d: %d keys in a table of %d, want %d at most half full", round, tab.len(), len(tab.tab), len(order))
		}
		for x, a := range order {
			if tab.keys[x] != a {
				t.Fatalf("round %d: number %d is %x, want %x", round, x, tab.keys[x], a)
			}
		}
		tab.reset()
		for i, v := range tab.tab {
			if v != 0 {
				t.Fatalf("round %d: position %d not emptied", round, i)
			}
		}
	}
}
