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
		if n.Leaf.Amount.IsZero() && n.Leaf.Sender == n.Leaf.From {
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
	if len(kids) == 0 {
		return nil
	}
	if raw == 1 && !isRoot {
		return kids[0]
	}
	return n
}
