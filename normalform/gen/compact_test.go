package gen

import (
	"testing"
	"unsafe"

	"github.com/flowq/flowq/normalform"
)

// TestScaleShapesCompact checks that the scale shapes' trees are laid out
// as the trace decoder lays out a decoded transaction (compact): the nodes
// in one slice in pre-order, the frames in another, the leaves in
// tx.Transfers, and that compacting changed no part of the tree.
func TestScaleShapesCompact(t *testing.T) {
	raw := map[string]func(int, int64) *normalform.Tx{"star": starTx, "chain": chainTx, "random": scaleRandomTx}
	for _, sh := range Shapes {
		for _, n := range []int{50, 2000} {
			tx := sh.Build(n, 3)
			var nodes []*normalform.Node
			var frames []*normalform.Frame
			var walk func(x *normalform.Node)
			walk = func(x *normalform.Node) {
				nodes = append(nodes, x)
				if x.Frame != nil {
					frames = append(frames, x.Frame)
				}
				for _, c := range x.Children {
					walk(c)
				}
			}
			walk(tx.Root)
			nodeSize := unsafe.Sizeof(normalform.Node{})
			for i, x := range nodes {
				if got, want := uintptr(unsafe.Pointer(x)), uintptr(unsafe.Pointer(nodes[0]))+uintptr(i)*nodeSize; got != want {
					t.Fatalf("%s n=%d: node %d of %d is not beside the one before it in one slice (%#x, want %#x)", sh.Name, n, i, len(nodes), got, want)
				}
			}
			frameSize := unsafe.Sizeof(normalform.Frame{})
			for i, f := range frames {
				if got, want := uintptr(unsafe.Pointer(f)), uintptr(unsafe.Pointer(frames[0]))+uintptr(i)*frameSize; got != want {
					t.Fatalf("%s n=%d: frame %d of %d is not beside the one before it in one slice", sh.Name, n, i, len(frames))
				}
			}

			// The same tree as the builder's, before compacting.
			old := raw[sh.Name](n, 3)
			var oldNodes []*normalform.Node
			var oldWalk func(x *normalform.Node)
			oldWalk = func(x *normalform.Node) {
				oldNodes = append(oldNodes, x)
				for _, c := range x.Children {
					oldWalk(c)
				}
			}
			oldWalk(old.Root)
			if len(oldNodes) != len(nodes) || len(old.Transfers) != len(tx.Transfers) {
				t.Fatalf("%s n=%d: %d nodes and %d transfers, rebuilt %d and %d", sh.Name, n, len(nodes), len(tx.Transfers), len(oldNodes), len(old.Transfers))
			}
			leaves := 0
			for i, x := range nodes {
				o := oldNodes[i]
				if (x.Leaf == nil) != (o.Leaf == nil) || (x.Frame == nil) != (o.Frame == nil) || len(x.Children) != len(o.Children) {
					t.Fatalf("%s n=%d: node %d differs in kind or children (%d, rebuilt %d)", sh.Name, n, i, len(x.Children), len(o.Children))
				}
				if x.Frame != nil && *x.Frame != *o.Frame {
					t.Fatalf("%s n=%d: node %d's frame %+v, rebuilt %+v", sh.Name, n, i, *x.Frame, *o.Frame)
				}
				if x.Leaf != nil {
					p := x.Leaf.Pos
					if x.Leaf != &tx.Transfers[p] || *x.Leaf != *o.Leaf {
						t.Fatalf("%s n=%d: leaf %d (position %d) is not tx.Transfers[%d] or differs from the rebuilt one", sh.Name, n, i, p, p)
					}
					leaves++
				}
			}
			if leaves == 0 {
				t.Fatalf("%s n=%d: no leaves", sh.Name, n)
			}
		}
	}
}
