package normalform

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/bits"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/holiman/uint256"
)

// AlgebraVersion versions the canonical forms and their hashes: a hash is
// stable across runs, machines and releases while this number is unchanged,
// and every change to a canonical form must bump it.
const AlgebraVersion = 1

// Level is an equivalence level of normal forms (NOTES.md "Equivalence
// levels"), from the finest to the coarsest.
type Level uint8

const (
	// Exact: the normal form with its concrete addresses, tokens and amounts.
	Exact Level = iota
	// Shape: labels, composition, arity and path lengths; addresses and
	// tokens renamed to variables by first occurrence; amounts erased.
	Shape
	// Tokens: as Shape, with token identities kept.
	Tokens
	// Family: the skeleton map sk: path lengths, arities and tokens erased.
	Family
)

// Structural hashes are Hash values (32 bytes, Hex renders 0x and 64
// digits): SHA-256 of a versioned canonical form.

// ParseHash reads 64 hex digits, with or without 0x.
func ParseHash(s string) (Hash, error) {
	var h Hash
	b, err := hex.DecodeString(strings.TrimPrefix(s, "0x"))
	if err != nil || len(b) != len(h) {
		return h, fmt.Errorf("%q is not a 32-byte hex hash", s)
	}
	copy(h[:], b)
	return h, nil
}

// Hashes are a normal form's hashes at the four levels.
type Hashes struct{ Exact, Shape, Tokens, Family Hash }

// Of returns the hash of a level.
func (h Hashes) Of(l Level) Hash { return [...]Hash{h.Exact, h.Shape, h.Tokens, h.Family}[l] }

// --- terms ----------------------------------------------------------------

// TermKind is the constructor of a term.
type TermKind uint8

const (
	TStar  TermKind = iota // an arbitrage cycle: Star(α, L, α')
	TCycle                 // a closed chain that is not an arbitrage (cycle, burn, mint, closed swap)
	TPath                  // an open chain
	TLC                    // a leftover cycle LC(α, a)
	TLeft                  // a leftover transfer
	TCost                  // a payment to the block's coinbase
	TSwap                  // Swap(τ, τ') at a pool
	TSeq                   // sequential composition ∘
	TPar                   // parallel composition ∥ (κ-flattened, in trace order)
)

// Term is the paper's algebraic rendering of a normal form's parts:
// Star(α, L, α), Swap(τ, τ'), ∘, ∥, LC(α, a). Atoms are kept concrete
// (addresses, tokens, amounts); the canonical forms abstract them per level.
type Term struct {
	Kind   TermKind
	Label  Label   // for TStar, TCycle, TPath
	At     Address // origin (cycles, paths, LC), pool (swaps), source (leftovers)
	In     Token   // α, τ
	Out    Token   // α', τ'
	Amount string  // LC, leftovers, costs: the amount in base units
	Parts  []*Term // the body (TStar, TCycle, TPath: one part, possibly empty); operands (TSeq, TPar)
}

// Terms renders a normal form as terms, one per root element, in order.
// They are computed once per normal form (an analysis is complete when
// Analyze or decoding returns it) and shared: callers must not change them.
// The first call records them in the analysis (atomically: goroutines
// sharing one analysis may call it at once, and first callers at once may
// each build equal terms, one of which is kept).
func (a *Analysis) Terms() []*Term {
	if a.NF == nil {
		return nil
	}
	if m := (*termsMemo)(atomic.LoadPointer(&a.terms)); m != nil && m.of == a.NF {
		return m.terms
	}
	out := a.buildTerms()
	atomic.StorePointer(&a.terms, unsafe.Pointer(&termsMemo{terms: out, of: a.NF}))
	return out
}

// termsMemo is Terms' memo: the terms of the normal form of.
type termsMemo struct {
	terms []*Term
	of    *Node
}

func (a *Analysis) buildTerms() []*Term {
	var out []*Term
	if n := len(a.NF.Children); n > 0 {
		out = make([]*Term, 0, n)
	}
	for _, n := range a.NF.Children {
		switch {
		case n.Leaf != nil:
			kind := TLeft
			if a.isPrincipalBuilderPayment(n.Leaf) {
				kind = TCost
			}
			out = append(out, &Term{Kind: kind, At: n.Leaf.From, In: n.Leaf.Token, Out: n.Leaf.Token, Amount: decString(&n.Leaf.Amount)})
		case n.Chain.Label == LeftoverCycle:
			c := n.Chain
			out = append(out, &Term{Kind: TLC, At: c.Origin(), In: c.TokIn(), Out: c.TokIn(), Amount: decString(&c.First.Amount)})
		default:
			out = append(out, chainTerm(n.Chain))
		}
	}
	return out
}

// chainTerm renders a chain. Its body is the sequence of swaps at the
// junctions where the token changes (a same-token junction is a relay and
// leaves no trace), with parallel merges (R7, R13) as ∥ of their arms. For
// an arbitrage, the closing swap is the cycle's return, recorded by the
// Star and left out of the body (the paper's grammar).
func chainTerm(c *Chain) *Term {
	var prev *Token
	body := bodyTerm(c, &prev)
	t := &Term{Kind: TPath, Label: c.Label, At: c.Origin(), In: c.TokIn(), Out: c.TokOut()}
	if c.Closed() {
		t.Kind = TCycle
		if c.Label == Arbitrage {
			t.Kind = TStar
			if n := len(body); n > 0 && body[n-1].Kind == TSwap && body[n-1].Out == c.TokOut() {
				body = body[:n-1]
			}
		}
	}
	t.Parts = []*Term{seq(body)}
	return t
}

func seq(parts []*Term) *Term {
	if len(parts) == 1 {
		return parts[0]
	}
	return &Term{Kind: TSeq, Parts: parts}
}

// bodyTerm walks a chain's pieces in order; prev is the token of the
// transfer before, across pieces (nil before the first).
func bodyTerm(c *Chain, prev **Token) []*Term {
	var p Token
	has := *prev != nil
	if has {
		p = **prev
	}
	out := bodyInto(c, &p, &has, nil)
	if has {
		*prev = &p
	}
	return out
}

// bodyInto is bodyTerm appending to dst, the token before kept by value
// (has: there is one): no token allocated per transfer, no slice per
// piece.
func bodyInto(c *Chain, prev *Token, has *bool, dst []*Term) []*Term {
	for c.Leaf == nil && !(c.Merged && c.Rule.Parallel()) {
		dst = bodyInto(c.Left, prev, has, dst)
		c = c.Right
	}
	if c.Leaf != nil {
		t := c.Leaf
		if *has && *prev != t.Token {
			dst = append(dst, &Term{Kind: TSwap, At: t.From, In: *prev, Out: t.Token})
		}
		*prev, *has = t.Token, true
		return dst
	}
	arms := flattenPar(c, nil)
	sort.SliceStable(arms, func(i, j int) bool { return arms[i].First.Pos < arms[j].First.Pos })
	par := &Term{Kind: TPar}
	start, startHas := *prev, *has
	for _, arm := range arms {
		p, h := start, startHas
		par.Parts = append(par.Parts, seq(bodyInto(arm, &p, &h, nil)))
	}
	*prev, *has = c.TokOut(), true
	return append(dst, par)
}

// flattenPar is κ's flattening of nested parallel merges.
func flattenPar(c *Chain, dst []*Chain) []*Chain {
	if c.Leaf == nil && c.Merged && c.Rule.Parallel() {
		return flattenPar(c.Right, flattenPar(c.Left, dst))
	}
	return append(dst, c)
}

// --- rendering and canonical forms ------------------------------------------

// namer abstracts atoms for one level.
type namer struct {
	level   Level
	display bool // for people: short concrete addresses
	cfg     *Config
	// the variables: addresses (and tokens) by first occurrence
	addrs  table[Address]
	tokens table[Token]
}

func (n *namer) addr(a Address) string {
	if n.display {
		return n.cfg.Short(a)
	}
	switch n.level {
	case Exact:
		return AddrKey(a)
	case Family:
		return "⋆"
	}
	return "a" + strconv.Itoa(n.addrs.add(a)+1)
}

func (n *namer) token(t Token) string {
	switch n.level {
	case Exact, Tokens:
		if n.cfg != nil {
			return n.cfg.TokenName(t)
		}
		return t.Key()
	case Family:
		return "⋆"
	}
	return "τ" + strconv.Itoa(n.tokens.add(t)+1)
}

// putAddr writes addr(a) to b (the exact level's hex without a string).
func (n *namer) putAddr(b *textBuf, a Address) {
	if !n.display {
		switch n.level {
		case Exact:
			b.b = appendHex(b.b, a)
			return
		case Shape, Tokens:
			b.byte1('a')
			b.b = strconv.AppendInt(b.b, int64(n.addrs.add(a)+1), 10)
			return
		}
	}
	b.str(n.addr(a))
}

// putToken writes token(t) to b (a token's key without a string).
func (n *namer) putToken(b *textBuf, t Token) {
	if n.cfg == nil && (n.level == Exact || n.level == Tokens) {
		b.b = appendHex(b.b, t.Addr)
		if t.HasID() {
			b.byte1('/')
			b.str(t.ID.Dec())
		}
		return
	}
	if n.level == Shape {
		b.str("τ")
		b.b = strconv.AppendInt(b.b, int64(n.tokens.add(t)+1), 10)
		return
	}
	b.str(n.token(t))
}

var termNames = [...]string{TStar: "Star", TCycle: "Cycle", TPath: "Path", TLeft: "Left", TCost: "Cost"}

// head writes a term's NAME@AT(IN, without its place at the family level.
func (n *namer) head(b *textBuf, name string, t *Term) {
	b.str(name)
	if n.level != Family {
		b.byte1('@')
		n.putAddr(b, t.At)
	}
	b.byte1('(')
	n.putToken(b, t.In)
}

// render writes a term; amounts only at the exact level.
func (n *namer) render(b *textBuf, t *Term) {
	switch t.Kind {
	case TStar, TCycle, TPath:
		if t.Kind == TCycle && t.Label != Cycle {
			b.str("Cycle:")
			n.head(b, t.Label.String(), t)
		} else {
			n.head(b, termNames[t.Kind], t)
		}
		b.str(", ")
		if len(t.Parts) == 1 && !(t.Parts[0].Kind == TSeq && len(t.Parts[0].Parts) == 0) {
			n.render(b, t.Parts[0])
		} else {
			b.str("ε")
		}
		b.str(", ")
		n.putToken(b, t.Out)
		b.byte1(')')
	case TSwap:
		n.head(b, "Swap", t)
		b.byte1(',')
		n.putToken(b, t.Out)
		b.byte1(')')
	case TSeq:
		for i, p := range t.Parts {
			if i > 0 {
				b.str(" ∘ ")
			}
			n.render(b, p)
		}
		if len(t.Parts) == 0 {
			b.str("ε")
		}
	case TPar:
		for i, p := range t.Parts {
			if i > 0 {
				b.str(" ∥ ")
			}
			b.byte1('(')
			n.render(b, p)
			b.byte1(')')
		}
	case TLC:
		b.str("LC@")
		n.putAddr(b, t.At)
		b.byte1('(')
		n.putToken(b, t.In)
		if n.level == Exact {
			b.str(", ")
			b.str(t.Amount)
		}
		b.byte1(')')
	case TLeft, TCost:
		b.str(termNames[t.Kind])
		b.byte1('@')
		n.putAddr(b, t.At)
		b.byte1('(')
		n.putToken(b, t.In)
		if n.level == Exact {
			b.str(", ")
			b.str(t.Amount)
		}
		b.byte1(')')
	}
}

// RenderTerms renders a normal form as the paper's terms, for people:
// concrete pools and tokens (symbols where known), one element per line.
func (a *Analysis) RenderTerms(cfg *Config) []string {
	cfg = cfg.ForAnalysis(a)
	n := &namer{level: Tokens, display: true, cfg: cfg}
	var out []string
	for _, t := range a.Terms() {
		var b textBuf
		n.render(&b, t)
		out = append(out, string(b.b))
	}
	return out
}

// sk is the skeleton map: a sequence of swaps becomes one swap (path length
// erased), identical arms of a parallel merge collapse to one (arity
// erased), and the canonical text erases tokens.
func sk(t *Term) *Term {
	switch t.Kind {
	case TStar, TCycle, TPath:
		c := *t
		c.Parts = nil
		for _, p := range t.Parts {
			c.Parts = append(c.Parts, sk(p))
		}
		return &c
	case TSeq:
		var parts []*Term
		for _, p := range t.Parts {
			s := sk(p)
			// consecutive swaps fold into one
			if s.Kind == TSwap && len(parts) > 0 && parts[len(parts)-1].Kind == TSwap {
				continue
			}
			parts = append(parts, s)
		}
		return seq(parts)
	case TPar:
		seen := map[string]bool{}
		var parts []*Term
		for _, p := range t.Parts {
			s := sk(p)
			key := canonicalText(Family, []*Term{s})
			if !seen[key] {
				seen[key] = true
				parts = append(parts, s)
			}
		}
		if len(parts) == 1 {
			return parts[0]
		}
		return &Term{Kind: TPar, Parts: parts}
	}
	return t
}

func canonicalText(l Level, ts []*Term) string {
	// Written into a pooled buffer (Hashes'), not one grown from nothing
	// for each text: the family's keys make one a star or cycle.
	b := hashBufs.Get().(*textBuf)
	defer putHashBuf(b)
	b.b = b.b[:0]
	writeCanonical(b, l, ts)
	return string(b.b)
}

// writeCanonical writes the canonical text of ts at level l to b.
func writeCanonical(b *textBuf, l Level, ts []*Term) {
	n := namers.Get().(*namer)
	n.level = l
	for i, t := range ts {
		if i > 0 {
			b.str(" ; ")
		}
		n.render(b, t)
	}
	n.addrs.reset()
	n.tokens.reset()
	namers.Put(n)
}

// namers are writeCanonical's namers, their variable tables reused (reset:
// emptied, dropped when grown large).
var namers = sync.Pool{New: func() any { return &namer{} }}

// Canonical returns the canonical form of a level, as text. Exact is the
// normal form itself (every chain's composition, label and rule, every
// transfer's endpoints, token and amount; κ applied); Shape and Tokens are
// the terms of every element, with variables for addresses (and tokens)
// by first occurrence; Family is the skeleton of the strategy: the
// arbitrage cycles and the leftover cycles in their hub's asset (the
// flash-loan extension G^F), or, with no arbitrage, the closed chains.
func (a *Analysis) Canonical(l Level) string {
	switch l {
	case Exact:
		return a.exactText()
	case Family:
		return a.familyText(a.Terms())
	}
	return canonicalText(l, a.Terms())
}

func (a *Analysis) familyText(terms []*Term) string {
	return strings.Join(a.familyKeys(terms), " ; ")
}

// writeFamily writes familyText to b.
func (a *Analysis) writeFamily(b *textBuf, terms []*Term) {
	for i, k := range a.familyKeys(terms) {
		if i > 0 {
			b.str(" ; ")
		}
		b.str(k)
	}
}

// familyKeys are the family level's parts, sorted.
func (a *Analysis) familyKeys(terms []*Term) []string {
	var stars, closed, lcs []*Term
	for _, t := range terms {
		switch t.Kind {
		case TStar:
			stars = append(stars, sk(t))
		case TCycle:
			closed = append(closed, sk(t))
		case TLC:
			lcs = append(lcs, t)
		}
	}
	parts := stars
	if len(parts) == 0 {
		parts = closed
	}
	var keys []string
	for _, p := range parts {
		keys = append(keys, canonicalText(Family, []*Term{p}))
	}
	for _, lc := range lcs {
		for _, s := range stars {
			if a.cfg.TokenEq(lc.In, s.In) {
				keys = append(keys, "LC(⋆)")
				break
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// exactText serialises the normal form with κ applied: parallel merges
// flattened and their arms in trace order; trace positions themselves are
// left out (they locate, they do not define).
func (a *Analysis) exactText() string {
	var b textBuf
	a.writeExact(&b)
	return string(b.b)
}

// writeExact writes exactText to b.
func (a *Analysis) writeExact(b *textBuf) {
	if a.NF == nil {
		b.str("∅")
		return
	}
	for i, n := range a.NF.Children {
		if i > 0 {
			b.str(" ; ")
		}
		if n.Leaf != nil {
			writeTransfer(b, n.Leaf)
			continue
		}
		b.str(n.Chain.Label.String())
		b.byte1(':')
		writeChain(b, n.Chain)
	}
}

func writeTransfer(b *textBuf, t *Transfer) {
	var buf [42]byte
	b.raw(appendHex(buf[:0], t.From))
	b.byte1('>')
	b.raw(appendHex(buf[:0], t.To))
	b.byte1(':')
	b.dec(&t.Amount)
	b.byte1(':')
	b.raw(appendHex(buf[:0], t.Token.Addr))
	if t.Token.HasID() {
		b.byte1('/')
		b.dec(&t.Token.ID)
	}
	if t.Flags&(Mint|Burn) != 0 {
		b.byte1(':')
		b.str((t.Flags & (Mint | Burn)).String())
	}
}

func writeChain(b *textBuf, c *Chain) {
	if c.Leaf != nil {
		writeTransfer(b, c.Leaf)
		return
	}
	if c.Merged && c.Rule.Parallel() {
		arms := flattenPar(c, nil)
		sort.SliceStable(arms, func(i, j int) bool { return arms[i].First.Pos < arms[j].First.Pos })
		b.str("par(")
		for i, arm := range arms {
			if i > 0 {
				b.str(" | ")
			}
			writeChain(b, arm)
		}
		b.byte1(')')
		return
	}
	b.str(c.Rule.String())
	b.byte1('(')
	writeChain(b, c.Left)
	b.str(", ")
	writeChain(b, c.Right)
	b.byte1(')')
}

// Hashes returns the normal form's hashes at the four levels: SHA-256 of
// "flowq/nf/v<AlgebraVersion>/<level>\x00" and the level's canonical form.
func (a *Analysis) Hashes() Hashes {
	terms := a.Terms() // once for the three levels built on them
	// The four texts are written, each after its prefix, into one
	// buffer (pooled: issue 22) and hashed in place: no text is kept as
	// a string.
	b := hashBufs.Get().(*textBuf)
	defer putHashBuf(b)
	start := func(l Level) {
		b.b = append(b.b[:0], "flowq/nf/v"...)
		b.b = strconv.AppendInt(b.b, int64(AlgebraVersion), 10)
		b.byte1('/')
		b.str(l.String())
		b.byte1(0)
	}
	var h Hashes
	start(Exact)
	a.writeExact(b)
	h.Exact = sha256.Sum256(b.b)
	start(Shape)
	writeCanonical(b, Shape, terms)
	h.Shape = sha256.Sum256(b.b)
	start(Tokens)
	writeCanonical(b, Tokens, terms)
	h.Tokens = sha256.Sum256(b.b)
	start(Family)
	a.writeFamily(b, terms)
	h.Family = sha256.Sum256(b.b)
	return h
}

// textBuf is the buffer canonical texts are written into.
type textBuf struct{ b []byte }

// hashBufs are Hashes' buffers; one grown past 64 KB is dropped.
var hashBufs = sync.Pool{New: func() any { return &textBuf{b: make([]byte, 0, 512)} }}

func putHashBuf(b *textBuf) {
	if cap(b.b) <= 64<<10 {
		b.b = b.b[:0]
		hashBufs.Put(b)
	}
}

func (t *textBuf) str(s string) { t.b = append(t.b, s...) }
func (t *textBuf) byte1(c byte) { t.b = append(t.b, c) }
func (t *textBuf) raw(p []byte) { t.b = append(t.b, p...) }

// dec writes v in decimal (Int.Dec's text, written in place).
func (t *textBuf) dec(v *uint256.Int) { t.b = AppendDec(t.b, v) }

// decString is v.Dec(), its text written on the stack (AppendDec) and
// made a string once.
func decString(v *uint256.Int) string {
	var b [80]byte
	return string(AppendDec(b[:0], v))
}

// digitPairs are the two digits of 00 to 99.
const digitPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// AppendDec appends v in decimal, Int.Dec's text, without its string
// (and its working buffers; the planner's rows use it too): above 2^64
// nineteen digits at a time, the remainders by 10^19 from the right (a
// long division of v's words, one bits.Div64 a word: uint256's DivMod
// took about 60% longer, BenchmarkAppendDec), then the quotient
// left (at least 1: v is at least 2^64 there).
func AppendDec(dst []byte, v *uint256.Int) []byte {
	if v.IsUint64() {
		return strconv.AppendUint(dst, v[0], 10)
	}
	const ten19 = 10_000_000_000_000_000_000
	var digits [80]byte // 4 groups of 19 below the head: 2^256 has 78 digits
	pos := len(digits)
	q := *v // little-endian words
	n := len(q)
	for q[n-1] == 0 {
		n--
	}
	for n > 1 {
		var r uint64
		for i := n - 1; i >= 0; i-- {
			q[i], r = bits.Div64(r, q[i], ten19)
		}
		if q[n-1] == 0 {
			n--
		}
		pos -= 19
		i := pos + 19
		for range 9 { // the group, leading zeros included, two digits a step
			i -= 2
			d := r % 100 * 2
			r /= 100
			digits[i], digits[i+1] = digitPairs[d], digitPairs[d+1]
		}
		digits[pos] = byte('0' + r)
	}
	dst = strconv.AppendUint(dst, q[0], 10)
	return append(dst, digits[pos:]...)
}

// --- families ---------------------------------------------------------------

// StarFamily reports whether the normal form is a word of the star grammar
// G_{α,τ'} (Appendix "A Context-Free Grammar for Strategy Families"): one
// arbitrage cycle Star(α, L, α) whose every arm starts with a swap out of
// α and ends with a swap into the same convergence token τ', and no other
// arbitrage. flash reports the extension G^F: at least one leftover cycle
// LC in the hub's asset. It returns α and τ'.
func (a *Analysis) StarFamily(cfg *Config) (alpha, conv Token, ok, flash bool) {
	var star *Term
	for _, t := range a.Terms() {
		switch t.Kind {
		case TStar:
			if star != nil {
				return alpha, conv, false, false
			}
			star = t
		}
	}
	if star == nil || len(star.Parts) != 1 {
		return alpha, conv, false, false
	}
	alpha = star.In
	arms := []*Term{star.Parts[0]}
	if star.Parts[0].Kind == TPar {
		arms = star.Parts[0].Parts
	}
	for i, arm := range arms {
		swaps := arm.Parts
		if arm.Kind != TSeq {
			swaps = []*Term{arm}
		}
		if len(swaps) == 0 {
			return alpha, conv, false, false
		}
		for _, s := range swaps {
			if s.Kind != TSwap {
				return alpha, conv, false, false
			}
		}
		if !cfg.TokenEq(swaps[0].In, alpha) {
			return alpha, conv, false, false
		}
		last := swaps[len(swaps)-1].Out
		if i == 0 {
			conv = last
		} else if last != conv {
			return alpha, conv, false, false
		}
	}
	for _, t := range a.Terms() {
		if t.Kind == TLC && cfg.TokenEq(t.In, alpha) {
			flash = true
		}
	}
	return alpha, conv, true, flash
}

// Counts are the sizes the index and the queries use.
type Counts struct {
	Cycles    int // arbitrage cycles at the principals
	Pools     int // distinct pools (swap junctions) in them
	Hops      int // transfers in them
	Leftovers int
}

// Counts measures the counted arbitrage cycles.
func (a *Analysis) Counts() Counts {
	inCo := a.coalition()
	c := Counts{Leftovers: len(a.Leftover)}
	pools := map[Address]bool{}
	closed := map[*Chain]bool{}
	for _, ch := range a.Cycles {
		closed[ch] = true
		if !a.Counted(ch) {
			continue
		}
		c.Cycles++
		c.Hops += int(ch.N)
		var prev *Token
		var walk func(t *Term)
		walk = func(t *Term) {
			if t.Kind == TSwap {
				pools[t.At] = true
			}
			for _, p := range t.Parts {
				walk(p)
			}
		}
		for _, t := range bodyTerm(ch, &prev) {
			walk(t)
		}
	}
	// A bundle of everything a coalition settled reads open chains and
	// leftovers too: one cycle when it reads no closed chain, a hop per
	// transfer, and as pools the outsiders it exchanges tokens with.
	for i := range a.Detections {
		det := &a.Detections[i]
		var ts []*Transfer
		nclosed := 0
		for _, ch := range det.Chains {
			if closed[ch] {
				nclosed++
				continue
			}
			ts = ch.Transfers(ts)
		}
		ts = append(ts, det.Legs...)
		if len(ts) == 0 {
			continue
		}
		if nclosed == 0 {
			c.Cycles++
		}
		c.Hops += len(ts)
		for _, t := range ts {
			if fi, ti := inCo(t.From), inCo(t.To); fi && !ti {
				pools[t.To] = true
			} else if ti && !fi {
				pools[t.From] = true
			}
		}
	}
	c.Pools = len(pools)
	return c
}
