package normalform

import (
	"bytes"
	"sync"
	"unsafe"
)

// Label records what the reduction has established about a chain.
type Label uint8

const (
	// Chaining: a sequence assembled from adjacent transfers.
	Chaining Label = iota
	// Merging: a sequence assembled from parallel branches.
	Merging
	// TokenBurn: value leaving as a token is destroyed (R2; unwrap).
	TokenBurn
	// TokenMint: value entering as a token is created (R3; wrap).
	TokenMint
	// Cycle: a closed chain that is not an arbitrage (R15, R16).
	Cycle
	// Arbitrage: a closed chain returning in the asset it left in (R14).
	Arbitrage
	// LeftoverCycle: a round trip recovered from leftovers (specular or
	// complementary transfers): LC(α, a).
	LeftoverCycle
)

var labelNames = [...]string{"chaining", "merging", "token_burn", "token_mint", "cycle", "arbitrage", "leftover_cycle"}

func (l Label) String() string {
	if int(l) < len(labelNames) {
		return labelNames[l]
	}
	return "unknown"
}

// Unlabelled reports whether annotation may still label the chain.
func (l Label) Unlabelled() bool { return l == Chaining || l == Merging }

// Rule names a rewriting rule or a step of the kernel.
type Rule uint8

const (
	NoRule Rule = iota
	R1
	R2
	R3
	R4
	R5
	R6
	R7
	R8
	R9
	R10
	R11
	R12
	R13
	R14
	R15
	R16
	Lift
	Connect
	Promote
	Specular
	Complementary
	// Detect records a detection of the stage after the fixpoint
	// (detect.go): it rewrites nothing.
	Detect
)

var ruleNames = [...]string{"", "R1", "R2", "R3", "R4", "R5", "R6", "R7", "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15", "R16",
	"lift", "connect", "promote", "specular", "complementary", "detect"}

func (r Rule) String() string {
	if int(r) < len(ruleNames) {
		return ruleNames[r]
	}
	return "unknown"
}

// Chain is a transfer chain (Definition "Transfer chain"): a binary tree
// whose in-order traversal is the transfer sequence t_1 … t_k. A leaf chain
// wraps one transfer; an inner chain joins Left's sequence and Right's,
// by chaining (∘) or by merging parallel branches (∥). Its endpoints,
// boundary tokens and balance δ are kept as it is assembled.
//
// The pointers come first and the small fields last, packed (104 bytes,
// not 136: the kernel carves thousands of chains per large transaction).
type Chain struct {
	Leaf  *Transfer // a leaf chain's transfer
	Left  *Chain
	Right *Chain

	First, Last *Transfer // t_1 and t_k
	Mid         *Transfer // t_{k-1}; nil for a single transfer
	// δ_C, small or large (balance.go: smallDelta, bigBalance): read it
	// with Balance, BalanceOf and BalanceAt.
	bal unsafe.Pointer

	ID int32
	N  int32 // number of transfers
	// Frame is the frame where the chain was built, and FrameSender its σ:
	// σ(C) falls back to it when the leaves at s(C) disagree.
	Frame       int32
	balLen      int32 // the small δ's length, or -1: bal is a *balance
	FrameSender Address
	Label       Label
	Rule        Rule // the rule that built it
	Merged      bool // built by a merge (∥) rather than by chaining (∘)
	// Promoted is set when the post-fixpoint promotion path made this
	// cycle an arbitrage (outside the mechanized core of the paper).
	Promoted bool
	// Downgraded is set when R16 revoked the arbitrage label.
	Downgraded bool
}

// Origin is s(C), the source of t_1.
func (c *Chain) Origin() Address { return c.First.From }

// Dest is d(C), the destination of t_k.
func (c *Chain) Dest() Address { return c.Last.To }

// Closed reports s(C) = d(C).
func (c *Chain) Closed() bool { return c.First.From == c.Last.To }

// TokIn is τ_in(C), the token of t_1.
func (c *Chain) TokIn() Token { return c.First.Token }

// TokOut is τ_out(C), the token of t_k.
func (c *Chain) TokOut() Token { return c.Last.Token }

// TokMid is τ_mid(C), the token of t_{k-1} (τ_in for a single transfer).
func (c *Chain) TokMid() Token {
	if c.Mid == nil {
		return c.First.Token
	}
	return c.Mid.Token
}

// Transfers appends the chain's transfers, in order, to dst.
func (c *Chain) Transfers(dst []*Transfer) []*Transfer {
	if dst == nil && c.N > 1 {
		dst = make([]*Transfer, 0, c.N) // one allocation, not one per doubling
	}
	c.eachTransfer(func(t *Transfer) bool { dst = append(dst, t); return true })
	return dst
}

// Middlemen returns M(C) = {d(t_1), …, d(t_{k-1})}, deduplicated, in order
// of first appearance.
func (c *Chain) Middlemen() []Address {
	ts := c.Transfers(nil)
	var out []Address
	var seen map[Address]bool // once the list is long enough to need it
	for _, t := range ts[:len(ts)-1] {
		if seen != nil {
			if !seen[t.To] {
				seen[t.To] = true
				out = append(out, t.To)
			}
			continue
		}
		if containsAddr(out, t.To) {
			continue
		}
		out = append(out, t.To)
		if len(out) == 16 {
			seen = make(map[Address]bool, len(ts))
			for _, a := range out {
				seen[a] = true
			}
		}
	}
	return out
}

// InMiddlemen reports a ∈ M(C).
func (c *Chain) InMiddlemen(a Address) bool {
	return c.anyMiddleman(func(m Address) bool { return m == a })
}

// anyMiddleman reports whether some middleman satisfies f.
func (c *Chain) anyMiddleman(f func(Address) bool) bool {
	var prev *Transfer // every transfer's destination but the last's
	return !c.eachTransfer(func(t *Transfer) bool {
		if prev != nil && f(prev.To) {
			return false
		}
		prev = t
		return true
	})
}

// eachTransfer calls f on t_1, …, t_k in order while f returns true, and
// reports whether it reached the end (Transfers without the list).
//
// The chains whose left sequence is still to be walked wait on a stack of
// their own, not the goroutine's: a route built hop by hop is a tree as
// deep as it is long, and recursing on Left grew the goroutine's stack to
// megabytes at 20,000 hops, copied at every doubling and shrunk again by
// the collector (issue 22, session 8). The first levels are on the
// goroutine's stack; a deeper walk borrows a pooled slice.
func (c *Chain) eachTransfer(f func(*Transfer) bool) bool {
	var buf [32]*Chain // the stack while it is shallow
	n := 0
	var deep *[]*Chain // pooled, once deeper: the whole stack, in ds
	var ds []*Chain
	deepest := 0
	ok := true
	for {
		for c.Leaf == nil {
			switch {
			case deep != nil:
				ds = append(ds, c)
				deepest = max(deepest, len(ds))
			case n < len(buf):
				buf[n] = c
				n++
			default:
				if deep, _ = chainStacks.Get().(*[]*Chain); deep == nil {
					deep = new([]*Chain)
				}
				ds = append(append((*deep)[:0], buf[:]...), c)
				deepest = len(ds)
			}
			c = c.Left
		}
		if !f(c.Leaf) {
			ok = false
			break
		}
		if deep != nil {
			if len(ds) == 0 {
				break
			}
			c = ds[len(ds)-1].Right
			ds = ds[:len(ds)-1]
			continue
		}
		if n == 0 {
			break
		}
		n--
		c = buf[n].Right
	}
	if deep != nil {
		clear(ds[:deepest])
		*deep = ds[:0]
		chainStacks.Put(deep)
	}
	return ok
}

// chainStacks keeps the stacks of eachTransfer's deep walks (emptied).
var chainStacks sync.Pool

func containsAddr(l []Address, a Address) bool {
	for _, x := range l {
		if x == a {
			return true
		}
	}
	return false
}

// Sigma returns σ(C): the σ of the leaf at s(C); when the leaves whose
// source is s(C) disagree, the σ of the frame where the chain was built
// (the call frame that authored it).
func (c *Chain) Sigma() Address {
	s := c.First.Sender
	origin := c.Origin()
	if !c.eachTransfer(func(t *Transfer) bool { return t.From != origin || t.Sender == s }) {
		return c.FrameSender
	}
	return s
}

// IsLeaf reports whether the chain wraps a single transfer.
func (c *Chain) IsLeaf() bool { return c.Leaf != nil }

// leafChain wraps a transfer. Its δ is not stored: a leaf chain's δ is
// its transfer's (TransferDelta), which balanceParts derives when it is
// read, and join sums from a buffer on its stack, so that a leaf that
// becomes an operand (every rewrite takes one or two) costs one small
// allocation.
func leafChain(t *Transfer) *Chain {
	return &Chain{ID: -1, Leaf: t, First: t, Last: t, N: 1}
}

// transferDeltaIn is TransferDelta(t) written into buf.
func transferDeltaIn(t *Transfer, buf *[2]DeltaEntry) Delta {
	if t.From == t.To || t.Amount.IsZero() {
		return nil
	}
	*buf = [2]DeltaEntry{{Addr: t.From, Token: t.Token, Amount: Signed{Neg: true, Abs: t.Amount}},
		{Addr: t.To, Token: t.Token, Amount: Signed{Abs: t.Amount}}}
	if bytes.Compare(t.To[:], t.From[:]) < 0 {
		buf[0], buf[1] = buf[1], buf[0]
	}
	return buf[:]
}

// join builds the chain whose sequence is a's then b's.
func join(a, b *Chain, rule Rule, label Label, merged bool) (*Chain, error) {
	c := new(Chain)
	if err := joinInto(c, a, b, rule, label, merged, nil); err != nil {
		return nil, err
	}
	return c, nil
}

// joinInto is join writing the chain into c (zero), which the caller
// allocated, its δ carved from sl when small (nil: allocated on its own).
func joinInto(c, a, b *Chain, rule Rule, label Label, merged bool, sl *deltaSlab) error {
	*c = Chain{Label: label, Rule: rule, Left: a, Right: b, Merged: merged,
		First: a.First, Last: b.Last, N: a.N + b.N}
	if err := c.setBalanceIn(a, b, sl); err != nil {
		return err
	}
	if b.N >= 2 {
		c.Mid = b.Mid
	} else {
		c.Mid = a.Last
	}
	return nil
}
