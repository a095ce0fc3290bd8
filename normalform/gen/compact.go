package gen

import "github.com/flowq/flowq/normalform"

// compact lays tx's tree out as the trace decoder lays out a decoded
// transaction (normalform/trace's builder): its nodes in one slice, its
// frames in another and every children list carved from a third, the
// leaves pointing into tx.Transfers as before. The tree is the same tree
// (same nodes in the same order, same frames, same transfers); only where
// it lives changes.
//
// The Builder makes a node, a frame and a children list per call (four or
// five objects a transfer in the scale shapes, some 150,000 for the growth
// benchmarks' six sizes of a shape), where a decoded transaction of the
// same size is a handful of objects: every collection cycle a benchmark
// run starts marks the inputs it holds, and marking that many small
// objects cost the growth benchmarks a collection several times what a
// caller holding decoded transactions pays (issue 22).
func compact(tx *normalform.Tx) *normalform.Tx {
	if tx.Root == nil {
		return tx
	}
	var nodes, frames, kids int
	var count func(n *normalform.Node)
	count = func(n *normalform.Node) {
		nodes++
		if n.Frame != nil {
			frames++
		}
		kids += len(n.Children)
		for _, c := range n.Children {
			count(c)
		}
	}
	count(tx.Root)
	ns := make([]normalform.Node, nodes)
	fs := make([]normalform.Frame, frames)
	ks := make([]*normalform.Node, kids)
	var place func(n *normalform.Node) *normalform.Node
	place = func(n *normalform.Node) *normalform.Node {
		m := &ns[0]
		ns = ns[1:]
		m.Leaf, m.Chain = n.Leaf, n.Chain
		if n.Frame != nil {
			fs[0] = *n.Frame
			m.Frame = &fs[0]
			fs = fs[1:]
		}
		if len(n.Children) > 0 {
			c := ks[:len(n.Children):len(n.Children)]
			ks = ks[len(n.Children):]
			for i, k := range n.Children {
				c[i] = place(k)
			}
			m.Children = c
		}
		return m
	}
	tx.Root = place(tx.Root)
	return tx
}
