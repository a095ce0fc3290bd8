package normalform

import (
	"fmt"
	"strings"
)

// Step is one entry of the rewrite log: the rule, where it fired, its
// operands and its result.
type Step struct {
	Rule     Rule
	Frame    int32    // index of the frame node where it fired
	Operands []string // "#3" for transfer 3, "C5" for chain 5, "frame 12" for a lift
	Result   string   // the chain it built or relabelled, or what a lift moved
	Note     string   // a readable gist: endpoints, tokens, label
}

func (s Step) String() string {
	op := strings.Join(s.Operands, ", ")
	if s.Note != "" {
		return fmt.Sprintf("%-8s at frame %d: %s -> %s  %s", s.Rule, s.Frame, op, s.Result, s.Note)
	}
	return fmt.Sprintf("%-8s at frame %d: %s -> %s", s.Rule, s.Frame, op, s.Result)
}

// kernel is the deterministic rewriting kernel. Its policy (the package
// documentation states it in full):
//
//   - leaf stage, bottom-up: a frame's child frames are reduced first and
//     their children lifted into it, in place and in order; then its
//     children are scanned as adjacent pairs, left to right, trying the
//     leaf rules R1–R10 in that priority; each rule is tried on the pair
//     in sibling order, then reversed. A rewrite replaces the pair by its
//     result at the left position and the scan backs up one position.
//   - at the root, after the leaf scan finds nothing, the node rules
//     R11–R13 are tried on all pairs (i, j), i < j, in lexicographic order,
//     same priority and orientation policy; the first that fires is
//     applied and the leaf scan runs again. This is the structural fixpoint.
//   - then annotation (R14, R15) labels every closed unlabelled chain, and
//     connection joins the first eligible pair; repeated until nothing
//     changes; then R16.
type kernel struct {
	cfg       *Config
	principal func(Address) bool
	steps     []Step
	nextID    int32
	err       error
}

func (k *kernel) name(n *Node) string {
	if n.Leaf != nil {
		return fmt.Sprintf("#%d", n.Leaf.Pos)
	}
	return fmt.Sprintf("C%d", n.Chain.ID)
}

func chainName(c *Chain) string {
	if c.Leaf != nil {
		return fmt.Sprintf("#%d", c.Leaf.Pos)
	}
	return fmt.Sprintf("C%d", c.ID)
}

func (k *kernel) log(rule Rule, f *Frame, ops []string, res *Chain) {
	k.steps = append(k.steps, Step{Rule: rule, Frame: f.Index, Operands: ops, Result: chainName(res), Note: k.gist(res)})
}

// gist renders a chain's endpoints and tokens for the step log.
func (k *kernel) gist(c *Chain) string {
	return fmt.Sprintf("%s %s→%s %s→%s", c.Label, ShortAddr(c.Origin()), ShortAddr(c.Dest()), k.cfg.TokenName(c.TokIn()), k.cfg.TokenName(c.TokOut()))
}

// build creates the chain of rule's conclusion from operands a, b (in
// sequence order) at frame f.
func (k *kernel) build(f *Frame, rule Rule, label Label, merged bool, a, b *Node) *Node {
	ca, cb := asChain(a), asChain(b)
	c, err := join(ca, cb, rule, label, merged)
	if err != nil {
		if k.err == nil {
			k.err = err
		}
		return nil
	}
	k.nextID++
	c.ID = k.nextID
	c.Frame, c.FrameSender = f.Index, f.Sender
	k.log(rule, f, []string{k.name(a), k.name(b)}, c)
	return &Node{Chain: c}
}

func asChain(n *Node) *Chain {
	if n.Chain != nil {
		return n.Chain
	}
	return leafChain(n.Leaf)
}

// structural reports whether a chain node may take part in R6–R13:
// unlabelled chains, and token burns and mints (a wrap or an unwrap is a
// step of a route through the wrapped-token contract, wherever it happens).
func structural(n *Node) bool {
	return n.Chain != nil && (n.Chain.Label.Unlabelled() || n.Chain.Label == TokenBurn || n.Chain.Label == TokenMint)
}

// leafRule tries the leaf rules on the pair (x, y), x before y among the
// siblings, and returns the conclusion, or nil.
func (k *kernel) leafRule(f *Frame, x, y *Node) *Node {
	switch {
	case x.Leaf != nil && y.Leaf != nil:
		return k.leafLeaf(f, x, y, false)
	case x.Leaf != nil && structural(y), structural(x) && y.Leaf != nil:
		l, c := x, y
		if x.Chain != nil {
			l, c = y, x
		}
		if c.Chain.Closed() {
			return nil
		}
		// R6: d(C)=s(ℓ) appends ℓ, d(ℓ)=s(C) prepends it; when both hold
		// (ℓ closes the chain either way), see rootAppend.
		app, pre := c.Chain.Dest() == l.Leaf.From, l.Leaf.To == c.Chain.Origin()
		if app && pre {
			app = k.rootAppend(c.Chain.Origin(), l.Leaf.From, l.Leaf.Pos > c.Chain.First.Pos)
		}
		if app {
			return k.build(f, R6, Chaining, false, c, l)
		}
		if pre {
			return k.build(f, R6, Chaining, false, l, c)
		}
	case structural(x) && structural(y):
		c1, c2 := x.Chain, y.Chain
		if r7(c1, c2) {
			return k.build(f, R7, Merging, true, x, y)
		}
		if r8(k.cfg, c1, c2) {
			return k.build(f, R8, Merging, true, x, y)
		}
		if r9(k.cfg, c1, c2) {
			return k.build(f, R9, Merging, true, x, y)
		}
		if r10(k.cfg, c1, c2) {
			return k.build(f, R10, Chaining, false, x, y)
		}
		if r10(k.cfg, c2, c1) {
			return k.build(f, R10, Chaining, false, y, x)
		}
	}
	return nil
}

// rootAppend decides where a loop that a transfer closes either way is
// rooted: appending keeps the chain's origin, prepending makes the
// transfer's source the origin. The loop is rooted at a principal of the
// transaction when exactly one of the two is one (the accounting closes
// there: a flash swap pays the bot before the bot pays the pool back);
// otherwise trace order decides (the transfer goes where it happened).
func (k *kernel) rootAppend(chainOrigin, leafSource Address, leafLater bool) bool {
	if a, b := k.principal(chainOrigin), k.principal(leafSource); a != b {
		return a
	}
	return leafLater
}

// leafLeaf tries R2, R3, R1, R4, R5 (or, when throughClosed is set, only
// the different-token and burn/mint rules R2, R3, R1) on two leaves.
// When a rule holds in both orientations (the pair closes a loop either
// way), the loop is rooted as rootAppend says.
func (k *kernel) leafLeaf(f *Frame, x, y *Node, throughClosed bool) *Node {
	a, b := x.Leaf, y.Leaf
	type lr struct {
		rule  Rule
		label Label
		ok    func(a, b *Transfer) bool
	}
	// R2 and R3 first: a burn or mint flag is evidence R1 does not weigh,
	// and WETH9 emits Withdrawal after the value it sends, so R1 on the
	// reversed pair would chain an unwrap backwards.
	rules := []lr{
		{R2, TokenBurn, r2},
		{R3, TokenMint, r3},
		{R1, Chaining, r1},
		{R4, Chaining, func(a, b *Transfer) bool { return r4(k.cfg, a, b) }},
		{R5, Chaining, func(a, b *Transfer) bool { return r5(k.cfg, a, b) }},
	}
	if throughClosed {
		rules = rules[:3]
	}
	for _, r := range rules {
		ab, ba := r.ok(a, b), r.ok(b, a)
		if ab && ba {
			// (a, b) is rooted at a.From, (b, a) at b.From.
			ab = k.rootPair(a, b)
			ba = !ab
		}
		if ab {
			return k.build(f, r.rule, r.label, false, x, y)
		}
		if ba {
			return k.build(f, r.rule, r.label, false, y, x)
		}
	}
	return nil
}

// rootPair decides where the loop of two transfers a: A→B and b: B→A is
// rooted (true: at A). When one party initiated both legs (σ(a) = σ(b) is
// A or B), it is the venue that pulled one asset and paid out the other
// (CoW's settlement filling a user's order), and the loop belongs to the
// other party. Otherwise rootAppend decides: at a principal of the
// transaction, else in trace order.
func (k *kernel) rootPair(a, b *Transfer) bool {
	if a.Sender == b.Sender {
		switch a.Sender {
		case a.To: // B drove both legs: the loop is A's
			return true
		case a.From: // A drove both legs: the loop is B's
			return false
		}
	}
	return k.rootAppend(a.From, b.From, a.Pos > b.Pos)
}

// nodeRule tries the node rules on (x, y).
func (k *kernel) nodeRule(f *Frame, x, y *Node) *Node {
	switch {
	case x.Leaf != nil && y.Leaf != nil:
		ab, ba := r11(k.cfg, x.Leaf, y.Leaf), r11(k.cfg, y.Leaf, x.Leaf)
		if ab && ba {
			ab = k.rootPair(x.Leaf, y.Leaf)
			ba = !ab
		}
		if ab {
			return k.build(f, R11, Chaining, false, x, y)
		}
		if ba {
			return k.build(f, R11, Chaining, false, y, x)
		}
	case x.Leaf != nil && structural(y), structural(x) && y.Leaf != nil:
		l, c := x, y
		if x.Chain != nil {
			l, c = y, x
		}
		ch, t := c.Chain, l.Leaf
		if ch.Closed() {
			return nil
		}
		app := ch.Dest() == t.From && ch.TokOut() == t.Token
		pre := t.To == ch.Origin() && t.Token == ch.TokIn()
		if app && pre {
			app = k.rootAppend(ch.Origin(), t.From, t.Pos > ch.First.Pos)
		}
		if app {
			return k.build(f, R12, Chaining, false, c, l)
		}
		if pre {
			return k.build(f, R12, Chaining, false, l, c)
		}
	case structural(x) && structural(y):
		if r13(x.Chain, y.Chain) {
			return k.build(f, R13, Merging, true, x, y)
		}
	}
	return nil
}

// leafPass runs the leaf rules over adjacent siblings to a fixpoint. Two
// leaves separated only by closed chains count as adjacent for R1, R2 and
// R3: a loop that closed between the two legs of a swap (a flash swap's
// inner trades) does not separate them. Same-token rules (R4, R5) keep
// strict adjacency: a flash loan's borrow and repay around the borrower's
// callback are not a pair.
func (k *kernel) leafPass(f *Frame, kids []*Node) []*Node {
	i := 0
	for i+1 < len(kids) && k.err == nil {
		if r := k.leafRule(f, kids[i], kids[i+1]); r != nil {
			kids[i] = r
			kids = append(kids[:i+1], kids[i+2:]...)
			if i > 0 {
				i--
			}
			continue
		}
		if kids[i].Leaf != nil && kids[i+1].Chain != nil && kids[i+1].Chain.Closed() {
			j := i + 1
			for j < len(kids) && kids[j].Chain != nil && kids[j].Chain.Closed() {
				j++
			}
			if j < len(kids) && kids[j].Leaf != nil {
				if r := k.leafLeaf(f, kids[i], kids[j], true); r != nil {
					kids[i] = r
					kids = append(kids[:j], kids[j+1:]...)
					if i > 0 {
						i--
					}
					continue
				}
			}
		}
		i++
	}
	return kids
}

// nodeStep fires the first node rule over all pairs, if any.
func (k *kernel) nodeStep(f *Frame, kids []*Node) ([]*Node, bool) {
	for i := 0; i < len(kids); i++ {
		for j := i + 1; j < len(kids); j++ {
			if r := k.nodeRule(f, kids[i], kids[j]); r != nil {
				kids[i] = r
				return append(kids[:j], kids[j+1:]...), true
			}
			if k.err != nil {
				return kids, false
			}
		}
	}
	return kids, false
}

// reduce runs the leaf stage on a frame node and returns its reduced
// children, ready to be lifted into the parent (or kept, at the root).
func (k *kernel) reduce(n *Node) []*Node {
	kids := make([]*Node, 0, len(n.Children))
	for _, c := range n.Children {
		if c.Frame == nil {
			kids = append(kids, c)
			continue
		}
		lifted := k.reduce(c)
		ops := make([]string, len(lifted))
		for i, l := range lifted {
			ops[i] = k.name(l)
		}
		k.steps = append(k.steps, Step{Rule: Lift, Frame: n.Frame.Index, Operands: []string{fmt.Sprintf("frame %d", c.Frame.Index)},
			Result: strings.Join(ops, " ")})
		kids = append(kids, lifted...)
	}
	return k.leafPass(n.Frame, kids)
}

// structuralFixpoint reduces the whole tree: leaf stage bottom-up, then
// leaf and node rules at the root until neither applies.
func (k *kernel) structuralFixpoint(root *Node) []*Node {
	kids := k.reduce(root)
	for k.err == nil {
		var fired bool
		kids, fired = k.nodeStep(root.Frame, kids)
		if !fired {
			break
		}
		kids = k.leafPass(root.Frame, kids)
	}
	return kids
}

// connectable reports whether C1·C2 may be connected (Algorithm 2): both
// labelled cycle, token burn or token mint, both originating at a
// principal of the transaction (recipient or sender), complementary tokens, a closed concatenation,
// and neither reduced to routing (M(C) = {σ(C)}).
func (k *kernel) connectable(c1, c2 *Chain) bool {
	for _, c := range []*Chain{c1, c2} {
		if c.Label != Cycle && c.Label != TokenBurn && c.Label != TokenMint {
			return false
		}
		if !k.principal(c.Origin()) {
			return false
		}
		m := c.Middlemen()
		if len(m) == 1 && m[0] == c.Sigma() {
			return false
		}
	}
	return c1.TokOut() == c2.TokIn() && c1.Origin() == c2.Dest()
}

// annotateAndReduce is Algorithm 2. It returns the number of passes.
func (k *kernel) annotateAndReduce(root *Frame, kids []*Node) ([]*Node, int) {
	passes := 0
	for k.err == nil {
		passes++
		changed := false
		for _, n := range kids {
			c := n.Chain
			if c == nil || !c.Label.Unlabelled() || !c.Closed() {
				continue
			}
			switch {
			case r14(k.cfg, c):
				c.Label = Arbitrage
				k.steps = append(k.steps, Step{Rule: R14, Frame: root.Index, Operands: []string{chainName(c)}, Result: chainName(c), Note: k.gist(c)})
				changed = true
			case r15(c) || c.Rule == Connect:
				c.Label = Cycle
				k.steps = append(k.steps, Step{Rule: R15, Frame: root.Index, Operands: []string{chainName(c)}, Result: chainName(c), Note: k.gist(c)})
				changed = true
			}
		}
	connect:
		for i := 0; i < len(kids); i++ {
			for j := i + 1; j < len(kids); j++ {
				a, b := kids[i].Chain, kids[j].Chain
				if a == nil || b == nil {
					continue
				}
				x, y := kids[i], kids[j]
				if !k.connectable(a, b) {
					if !k.connectable(b, a) {
						continue
					}
					x, y = y, x
				}
				r := k.build(root, Connect, Chaining, false, x, y)
				if r == nil {
					break connect
				}
				kids[i] = r
				kids = append(kids[:j], kids[j+1:]...)
				changed = true
				break connect
			}
		}
		if !changed {
			break
		}
	}
	return kids, passes
}

// validate is R16: an arbitrage whose balance at its origin, in its entry
// token, is not positive becomes a cycle. Skipped for self-calls.
func (k *kernel) validate(root *Frame, kids []*Node) {
	for _, n := range kids {
		c := n.Chain
		if c == nil || c.Label != Arbitrage {
			continue
		}
		if d := c.Delta.At(c.Origin(), c.TokIn()); d.Sign() <= 0 {
			c.Label, c.Downgraded = Cycle, true
			k.steps = append(k.steps, Step{Rule: R16, Frame: root.Index, Operands: []string{chainName(c)}, Result: chainName(c),
				Note: fmt.Sprintf("%s: δ[%s, %s] = %s", k.gist(c), ShortAddr(c.Origin()), k.cfg.TokenName(c.TokIn()), d)})
		}
	}
}
