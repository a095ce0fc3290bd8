package normalform_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
)

// treeSnapshot records every node of a tree by value (its fields, the
// kernel's unexported bookkeeping included) in pre-order.
func treeSnapshot(n *normalform.Node, out []normalform.Node) []normalform.Node {
	out = append(out, *n)
	for _, c := range n.Children {
		out = treeSnapshot(c, out)
	}
	return out
}

// TestKernelLeavesTreeUntouched: the kernel reads the transaction's tree
// and rewrites copies of its leaves (it no longer copies the whole tree
// first), so analysing a transaction leaves every node of T0 as it was,
// and a second analysis of the same transaction logs the same steps and
// reaches the same normal form.
func TestKernelLeavesTreeUntouched(t *testing.T) {
	cfg := normalform.DefaultConfig()
	for _, sh := range gen.Shapes {
		for _, n := range []int{50, 300, 2000} {
			tx := sh.Build(n, 3)
			before := treeSnapshot(tx.Root, nil)
			a1, err := normalform.Analyze(tx, cfg)
			if err != nil {
				t.Fatalf("%s n=%d: %v", sh.Name, n, err)
			}
			if after := treeSnapshot(tx.Root, nil); !reflect.DeepEqual(before, after) {
				t.Fatalf("%s n=%d: Analyze changed the transaction's tree", sh.Name, n)
			}
			if err := normalform.Rewrite(tx, cfg); err != nil {
				t.Fatalf("%s n=%d: %v", sh.Name, n, err)
			}
			if after := treeSnapshot(tx.Root, nil); !reflect.DeepEqual(before, after) {
				t.Fatalf("%s n=%d: Rewrite changed the transaction's tree", sh.Name, n)
			}
			a2, err := normalform.Analyze(tx, cfg)
			if err != nil {
				t.Fatalf("%s n=%d: %v", sh.Name, n, err)
			}
			if s1, s2 := fmt.Sprint(a1.Steps), fmt.Sprint(a2.Steps); s1 != s2 {
				t.Fatalf("%s n=%d: the second analysis logged other steps", sh.Name, n)
			}
			if len(a1.NF.Children) != len(a2.NF.Children) || a1.Verdict != a2.Verdict {
				t.Fatalf("%s n=%d: the second analysis reached another normal form", sh.Name, n)
			}
		}
	}
}
