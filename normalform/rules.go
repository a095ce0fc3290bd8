package normalform

// The rules of Table "Rewriting rules". Each function takes its operands in
// rule order and reports whether the premise holds; the kernel builds the
// conclusion. Chains passed to the structural rules (R6–R13) are unlabelled
// (chaining or merging) or token burns and mints: a wrap or an unwrap may be
// a step of a route, also when it happens at a router rather than at the
// transaction's principals, where cycle A closed chain (s = d) is never extended by a single
// transfer (R6, R12): what leaves a closed loop's origin afterwards is a
// payout, not part of the loop. It may still be chained to another chain
// under continuity (R10: the next swap of a bot-mediated route) or merged
// (R8, R9).

func burn(t *Transfer) bool { return t.Flags&Burn != 0 }
func mint(t *Transfer) bool { return t.Flags&Mint != 0 }

// r1: d(ℓ1)=s(ℓ2), τ(ℓ1)≠τ(ℓ2), burn(ℓ1)⇔mint(ℓ2). A swap seen from outside.
func r1(a, b *Transfer) bool {
	return a.To == b.From && a.Token != b.Token && burn(a) == mint(b)
}

// r2: ℓ_b burn, ℓ not mint, d(ℓ_b)=s(ℓ). A token burn (covers unwrap).
func r2(lb, l *Transfer) bool { return burn(lb) && !mint(l) && lb.To == l.From }

// r3: ℓ_m mint, ℓ not burn, d(ℓ)=s(ℓ_m). A token mint (covers wrap).
func r3(l, lm *Transfer) bool { return mint(lm) && !burn(l) && l.To == lm.From }

// r4: a same-token round trip through B = d(ℓ1) that an external contract
// drives: d(ℓ1)=s(ℓ2), d(ℓ2)=s(ℓ1), τ equal, B not a router, σ(ℓi) ≠ B for
// some i.
func r4(cfg *Config, a, b *Transfer) bool {
	B := a.To
	return B == b.From && b.To == a.From && a.Token == b.Token && !cfg.IsRouter(B) &&
		(a.Sender != B || b.Sender != B)
}

// r5: same token through a declared router, burn(ℓ1)⇔mint(ℓ2).
func r5(cfg *Config, a, b *Transfer) bool {
	return a.To == b.From && a.Token == b.Token && cfg.IsRouter(a.To) && burn(a) == mint(b)
}

// balCont is BalCont(j): the junction is left short in no token.
//
// It is Delta.Sum's merge without building the sum (the rewrite path
// allocates nothing for a check): an entry on one side alone is its own
// sum, a pair is added, a zero sum is dropped, and an overflow fails the
// check as Sum's error did.
func balCont(c1, c2 *Chain, j Address) bool {
	var bufA, bufB [2]DeltaEntry
	a, b := c1.balanceOfIn(j, &bufA), c2.balanceOfIn(j, &bufB)
	i, k := 0, 0
	for i < len(a) || k < len(b) {
		switch {
		case k == len(b) || (i < len(a) && compareKey(&a[i], &b[k].Addr, &b[k].Token) < 0):
			if a[i].Amount.Neg {
				return false
			}
			i++
		case i == len(a) || compareKey(&a[i], &b[k].Addr, &b[k].Token) > 0:
			if b[k].Amount.Neg {
				return false
			}
			k++
		default:
			sum := a[i].Amount
			if sum.AddSigned(&b[k].Amount) {
				return false
			}
			if !sum.Abs.IsZero() && sum.Neg {
				return false
			}
			i++
			k++
		}
	}
	return true
}

// r7: parallel chains with the same endpoints (s ≠ d) that give back the
// same asset through different intermediaries.
func r7(c1, c2 *Chain) bool {
	return !c1.Closed() && !c2.Closed() && c1.Origin() == c2.Origin() && c1.Dest() == c2.Dest() &&
		c1.TokOut() == c2.TokOut() && c1.TokMid() != c2.TokMid()
}

// r8: closed chains at the same address, agreeing in all three boundary
// tokens (merging is summation), or balance-continuous there.
func r8(cfg *Config, c1, c2 *Chain) bool {
	s := c1.Origin()
	if !c1.Closed() || !c2.Closed() || c2.Origin() != s || complete(cfg, c1) != complete(cfg, c2) {
		return false
	}
	return (c1.TokIn() == c2.TokIn() && c1.TokMid() == c2.TokMid() && c1.TokOut() == c2.TokOut()) || balCont(c1, c2, s)
}

// r9: closed chains at the same address with the same entry and exit tokens.
func r9(cfg *Config, c1, c2 *Chain) bool {
	return c1.Closed() && c2.Closed() && c1.Origin() == c2.Origin() &&
		c1.TokIn() == c2.TokIn() && c1.TokOut() == c2.TokOut() && complete(cfg, c1) == complete(cfg, c2)
}

// complete reports a closed chain that returns in a token-equivalent asset
// and is not a pure wrap/unwrap: a round trip, a unit for extension.
func complete(cfg *Config, c *Chain) bool {
	return c.Closed() && cfg.TokenEq(c.TokIn(), c.TokOut()) && !wrapUnwrap(cfg, c)
}

// r10: two chains meeting at d(C1)=s(C2), under token continuity or
// balance continuity at the junction; a complete round trip only chains
// with another complete round trip.
func r10(cfg *Config, c1, c2 *Chain) bool {
	if c1.Dest() != c2.Origin() {
		return false
	}
	if complete(cfg, c1) != complete(cfg, c2) {
		return false
	}
	return c1.TokOut() == c2.TokIn() || balCont(c1, c2, c1.Dest())
}

// r11: the same asset across frames: d(ℓ1)=s(ℓ2), τ equal, not a round
// trip, d(ℓ1) not a router, and ℓ1 not pulled by its own recipient.
func r11(cfg *Config, a, b *Transfer) bool {
	return a.To == b.From && a.Token == b.Token && b.To != a.From && !cfg.IsRouter(a.To) && a.Sender != a.To
}

// r13: R7's premises with the entry tokens pinned as well.
func r13(c1, c2 *Chain) bool { return r7(c1, c2) && c1.TokIn() == c2.TokIn() }

// wrapUnwrap holds when M(C) contains the contract of τ_in or τ_out and
// both sub-chains are leaves or both satisfy it: a pure native/wrapped
// round trip, which R14 must not call an arbitrage.
//
// The contracts of the native asset are the configured wrapped-native
// contracts (the native asset has no contract of its own, and =_τ makes
// them its representations).
func wrapUnwrap(cfg *Config, c *Chain) bool {
	if c.Leaf != nil {
		return false
	}
	if !hasContractOf(cfg, c, c.TokIn()) && !hasContractOf(cfg, c, c.TokOut()) {
		return false
	}
	return (c.Left.Leaf != nil && c.Right.Leaf != nil) || (wrapUnwrap(cfg, c.Left) && wrapUnwrap(cfg, c.Right))
}

// hasContractOf reports whether M(C) contains a contract of t.
func hasContractOf(cfg *Config, c *Chain, t Token) bool {
	if t.Kind != Native {
		return c.InMiddlemen(t.Addr)
	}
	return c.anyMiddleman(cfg.IsWrappedNative)
}

// r14: a closed chain leaving and returning in token-equivalent assets,
// orchestrated from outside its middlemen (or by its origin), that is not a
// pure wrap/unwrap: an arbitrage (structurally; R16 checks the amounts).
func r14(cfg *Config, c *Chain) bool {
	if !c.Closed() || !cfg.TokenEq(c.TokIn(), c.TokOut()) {
		return false
	}
	sigma := c.Sigma()
	return (!c.InMiddlemen(sigma) || c.Origin() == sigma) && !wrapUnwrap(cfg, c)
}

// r15: a closed chain whose σ is one of its middlemen: routing, a cycle.
func r15(c *Chain) bool { return c.Closed() && c.InMiddlemen(c.Sigma()) }

// r6: a single transfer extends an open structural chain: appended when
// d(C)=s(ℓ), prepended when d(ℓ)=s(C) (both: ℓ closes the chain either
// way, and the kernel roots the loop).
func r6(c *Chain, t *Transfer) (app, pre bool) {
	return c.Dest() == t.From, t.To == c.Origin()
}

// r12: R6 across frames, at the root, in one token: appended when
// d(C)=s(ℓ) and τ_out(C)=τ(ℓ), prepended when d(ℓ)=s(C) and τ(ℓ)=τ_in(C).
func r12(c *Chain, t *Transfer) (app, pre bool) {
	return c.Dest() == t.From && c.TokOut() == t.Token, t.To == c.Origin() && t.Token == c.TokIn()
}

// r16: an arbitrage whose balance at its origin, in its entry token, is
// not positive (the kernel downgrades it to a cycle).
func r16(c *Chain) bool {
	if c.Label != Arbitrage {
		return false
	}
	d := c.BalanceAt(c.Origin(), c.TokIn())
	return d.Sign() <= 0
}

// --- the table -----------------------------------------------------------------

// stage is where in the kernel's policy a rule is tried.
type stage uint8

const (
	leafStage  stage = iota // adjacent siblings of every frame, bottom-up
	nodeStage               // any two of the root's kids, when the leaf stage is done
	annotation              // each closed unlabelled kid of the root (Algorithm 2)
	validation              // each arbitrage of the root, last (R16)
)

// operands are the kinds of node a rule rewrites.
type operands uint8

const (
	twoLeaves    operands = iota // two transfers
	leafAndChain                 // a transfer and an open structural chain
	twoChains                    // two structural chains
	oneChain                     // one chain, relabelled
)

// orientation says in which orders a binary rule is tried on a pair (x, y),
// x before y.
type orientation uint8

const (
	// eitherRooted: (x, y) and (y, x); when the premise holds both ways
	// (the pair closes a loop either way) the kernel decides where the
	// loop is rooted (rootPair for two leaves, rootAppend for a leaf and a
	// chain).
	eitherRooted orientation = iota
	// forwardFirst: (x, y), else (y, x).
	forwardFirst
	// symmetric: the premise is symmetric; (x, y) only.
	symmetric
)

// meet is a junction at which a node rule's operands meet: the first
// operand is listed in the root tracker's partner lists of kind a, the
// second in those of kind b, under the same (address, token).
type meet struct{ a, b int }

// ruleSpec is one rule of Table "Rewriting rules" as the kernel applies
// it: where it is tried, on what, in which orders, its premise, the
// junctions its operands meet at (node rules) and the conclusion's label.
// Exactly one premise function is set, the one of its operands' kind.
type ruleSpec struct {
	rule   Rule
	stage  stage
	ops    operands
	orient orientation
	label  Label // the conclusion's label (binary) or the label given (oneChain)
	merged bool  // the conclusion merges (∥) rather than chains (∘)
	// acrossClosed: two leaves separated only by closed chains count as
	// adjacent (a loop that closed between the two legs of a swap does
	// not separate them).
	acrossClosed bool
	// parallel: the conclusion's branches share both endpoints (an open
	// merge of parallel routes); the algebra and the drawings show it as
	// one par(…) of arms.
	parallel bool

	leaves func(cfg *Config, a, b *Transfer) bool
	attach func(c *Chain, t *Transfer) (app, pre bool)
	chains func(cfg *Config, c1, c2 *Chain) bool
	one    func(cfg *Config, c *Chain) bool

	meets []meet // nodeStage: the junctions the operands meet at
}

// ruleTable is the rewriting system: the 16 rules, in the kernel's
// priority order within each stage. The leaf stage tries a pair of
// siblings against the rules of its operands' kind in this order; so does
// the node stage at the root; annotation labels a chain by the first rule
// that holds.
var ruleTable = [...]ruleSpec{
	// R2 and R3 first: a burn or mint flag is evidence R1 does not weigh,
	// and WETH9 emits Withdrawal after the value it sends, so R1 on the
	// reversed pair would chain an unwrap backwards.
	{rule: R2, stage: leafStage, ops: twoLeaves, label: TokenBurn, acrossClosed: true,
		leaves: func(_ *Config, a, b *Transfer) bool { return r2(a, b) }},
	{rule: R3, stage: leafStage, ops: twoLeaves, label: TokenMint, acrossClosed: true,
		leaves: func(_ *Config, a, b *Transfer) bool { return r3(a, b) }},
	{rule: R1, stage: leafStage, ops: twoLeaves, label: Chaining, acrossClosed: true,
		leaves: func(_ *Config, a, b *Transfer) bool { return r1(a, b) }},
	// Same-token rules keep strict adjacency: a flash loan's borrow and
	// repay around the borrower's callback are not a pair.
	{rule: R4, stage: leafStage, ops: twoLeaves, label: Chaining, leaves: r4},
	{rule: R5, stage: leafStage, ops: twoLeaves, label: Chaining, leaves: r5},
	{rule: R6, stage: leafStage, ops: leafAndChain, label: Chaining, attach: r6},
	{rule: R7, stage: leafStage, ops: twoChains, orient: symmetric, label: Merging, merged: true, parallel: true,
		chains: func(_ *Config, c1, c2 *Chain) bool { return r7(c1, c2) }},
	{rule: R8, stage: leafStage, ops: twoChains, orient: symmetric, label: Merging, merged: true, chains: r8},
	{rule: R9, stage: leafStage, ops: twoChains, orient: symmetric, label: Merging, merged: true, chains: r9},
	{rule: R10, stage: leafStage, ops: twoChains, orient: forwardFirst, label: Chaining, chains: r10},

	{rule: R11, stage: nodeStage, ops: twoLeaves, label: Chaining, leaves: r11,
		meets: []meet{{leafTo, leafFrom}}}, // d(ℓ1) = s(ℓ2), one token
	{rule: R12, stage: nodeStage, ops: leafAndChain, label: Chaining, attach: r12,
		meets: []meet{
			{chainDest, leafFrom}, // append: d(C) = s(ℓ), τ_out(C) = τ(ℓ)
			{leafTo, chainOrig},   // prepend: d(ℓ) = s(C), τ(ℓ) = τ_in(C)
		}},
	{rule: R13, stage: nodeStage, ops: twoChains, orient: symmetric, label: Merging, merged: true, parallel: true,
		chains: func(_ *Config, c1, c2 *Chain) bool { return r13(c1, c2) },
		meets:  []meet{{chainOrig, chainOrig}}}, // same origin and τ_in

	{rule: R14, stage: annotation, ops: oneChain, label: Arbitrage, one: r14},
	// A chain Connect built is a cycle too.
	{rule: R15, stage: annotation, ops: oneChain, label: Cycle,
		one: func(_ *Config, c *Chain) bool { return r15(c) || c.Rule == Connect }},

	{rule: R16, stage: validation, ops: oneChain, label: Cycle,
		one: func(_ *Config, c *Chain) bool { return r16(c) }},
}

// The table read by stage and operands, in priority order, and by rule.
var (
	stageRules  [validation + 1][oneChain + 1][]*ruleSpec
	ruleSpecs   [Detect + 1]*ruleSpec
	acrossRules []*ruleSpec // leaf-stage rules on two leaves that reach across closed chains
	// partnerLists[k] lists, for a node listed under kinds k[0] (slot 0)
	// and k[1] (slot 1) of the root tracker, the partner lists to search:
	// the slot of its own junction and the kind of list there.
	partnerLists [2][]partnerList
)

// maxPartnerLists is the number of partner lists a node's candidates are
// drawn from, at most (the buffer candidates fills; more would allocate).
const maxPartnerLists = 4

// partnerList is one list of the root tracker's candidates for a node: the
// list of kind kind at the node's junction in slot slot (0 its source or
// origin, 1 its destination).
type partnerList struct{ slot, kind int }

// nodeSlots are the kinds under which the root tracker lists a leaf and an
// open structural chain, by slot.
var nodeSlots = [2][2]int{{leafFrom, leafTo}, {chainOrig, chainDest}}

func init() {
	for i := range ruleTable {
		r := &ruleTable[i]
		stageRules[r.stage][r.ops] = append(stageRules[r.stage][r.ops], r)
		ruleSpecs[r.rule] = r
		if r.stage == leafStage && r.ops == twoLeaves && r.acrossClosed {
			acrossRules = append(acrossRules, r)
		}
	}
	partnerLists = derivePartnerLists(ruleTable[:])
}

// derivePartnerLists reads the node rules' junctions: a node listed under
// kind a at some junction meets, through a node rule, the nodes listed
// under kind b at the same junction, and the other way round.
func derivePartnerLists(table []ruleSpec) [2][]partnerList {
	var out [2][]partnerList
	for kind, slots := range nodeSlots {
		add := func(p partnerList) {
			for _, q := range out[kind] {
				if q == p {
					return
				}
			}
			out[kind] = append(out[kind], p)
		}
		for i := range table {
			for _, m := range table[i].meets {
				for slot, k := range slots {
					if m.a == k {
						add(partnerList{slot, m.b})
					}
					if m.b == k {
						add(partnerList{slot, m.a})
					}
				}
			}
		}
	}
	return out
}

// Parallel reports whether the rule concludes an open merge of parallel
// branches with the same endpoints (R7, R13): a par(…) of arms.
func (r Rule) Parallel() bool {
	return int(r) < len(ruleSpecs) && ruleSpecs[r] != nil && ruleSpecs[r].parallel
}
