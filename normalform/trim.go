package normalform

// Trim turns the decoded tree into T0, in place, as §"From Traces to ASTs"
// prescribes:
//
//  1. a call node with exactly one child is collapsed into that child;
//  2. a call node whose subtree holds no leaf is removed (frames whose
//     events are all non-transfer events, and empty subtrees);
//  3. degenerate leaves, transfers of zero amount with σ = s, are dropped.
//
// "Exactly one child" counts the node's children as decoded: its transfer
// leaves and all its child frames, before empty frames are removed. This is
// how the paper's Figure "Reduction of tx_R" (a) keeps the frame SC⇒C/W
// around its single CHAD leaf (the pool's balance checks are child frames
// too) while the token frames holding one Transfer each collapse into their
// leaf: the lift that the paper's step ① needs only exists under this
// reading. The root is never collapsed: it stands for the transaction.
// Trim returns nil when no transfer survives.
func Trim(root *Node) *Node {
	if root == nil {
		return nil
	}
	return trim(root, true)
}

func trim(n *Node, isRoot bool) *Node {
	if n.Leaf != nil {
		if Degenerate(n.Leaf) {
			return nil
		}
		return n
	}
	raw := len(n.Children)
	kids := n.Children[:0]
	for _, c := range n.Children {
		if t := trim(c, false); t != nil {
			kids = append(kids, t)
		}
	}
	for i := len(kids); i < raw; i++ {
		n.Children[i] = nil
	}
	n.Children = kids
	switch FrameFateOf(raw, len(kids), isRoot) {
	case FrameRemoved:
		return nil
	case FrameCollapsed:
		return kids[0]
	}
	return n
}

// Trim's rules, for a decoder that builds T0 as it reads (the trace
// package builds each frame's node only when it survives): the same
// functions decide there and here.

// Degenerate reports whether Trim drops a transfer's leaf (rule 3): a
// zero amount whose σ is its sender.
func Degenerate(t *Transfer) bool { return t.Amount.IsZero() && t.Sender == t.From }

// FrameFate is what Trim makes of a call node.
type FrameFate uint8

const (
	// FrameKept: the node stays, with its children left.
	FrameKept FrameFate = iota
	// FrameRemoved: no child is left under it (rule 2).
	FrameRemoved
	// FrameCollapsed: a node other than the root with exactly one child
	// as decoded is that child (rule 1).
	FrameCollapsed
)

// FrameFateOf is the fate of a call node with raw children as decoded
// (transfer leaves and child frames, before any is removed) of which
// live are left once its children are trimmed.
func FrameFateOf(raw, live int, isRoot bool) FrameFate {
	switch {
	case live == 0:
		return FrameRemoved
	case raw == 1 && !isRoot:
		return FrameCollapsed
	}
	return FrameKept
}
