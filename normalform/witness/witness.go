package witness

import (
	"cmp"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
)

// Token is what the checker needs of a token type τ: comparable values
// (identity is equality) with a canonical text form for messages.
type Token interface {
	comparable
	Key() string
}

// Transfer is what the checker reads of a transfer: s, d, a, τ and the
// trace position. Nothing else of a transfer (σ, frames, flags) plays a
// part in Definitions 4 and 5.
type Transfer[T Token] struct {
	From, To common.Address
	Amount   uint256.Int
	Token    T
	Pos      int32
}

// Signed is an exact signed amount (a sign and a 256-bit magnitude).
type Signed struct {
	Neg bool
	Abs uint256.Int
}

// Sign returns -1, 0 or +1.
func (s *Signed) Sign() int {
	switch {
	case s.Abs.IsZero():
		return 0
	case s.Neg:
		return -1
	}
	return 1
}

// Add adds v (negated when neg) to s and reports whether the magnitude
// left 256 bits.
func (s *Signed) Add(v *uint256.Int, neg bool) bool {
	switch {
	case v.IsZero():
		return false
	case s.Abs.IsZero():
		s.Abs, s.Neg = *v, neg
		return false
	case s.Neg == neg:
		_, over := s.Abs.AddOverflow(&s.Abs, v)
		return over
	case s.Abs.Cmp(v) >= 0:
		s.Abs.Sub(&s.Abs, v)
	default:
		var d uint256.Int
		d.Sub(v, &s.Abs)
		s.Abs, s.Neg = d, neg
	}
	if s.Abs.IsZero() {
		s.Neg = false
	}
	return false
}

// String is the signed decimal.
func (s Signed) String() string {
	if s.Neg && !s.Abs.IsZero() {
		return "-" + s.Abs.Dec()
	}
	return s.Abs.Dec()
}

func addrKey(a common.Address) string { return strings.ToLower(a.Hex()) }

// Witness is a Definition 5 arbitrage: a cycle C at V (Definition 4),
// given as its maximal connected runs, whose first transfer is in Token and
// whose balance δ_C[V, Token] is Gain > 0.
type Witness[T Token] struct {
	V     common.Address
	Token T
	// Pieces are the runs C1..Cm of C, in order, each a list of transfer
	// positions (Transfer.Pos). Consecutive positions inside a piece are
	// connected transfers; consecutive pieces are not joinable.
	Pieces [][]int32
	// Gain is δ_C[V, Token], computed over C's transfers only, in Token
	// exactly (not folded by =_τ).
	Gain Signed
}

// String renders the witness for test failures and logs.
func (w *Witness[T]) String() string {
	if w == nil {
		return "<no witness>"
	}
	var b strings.Builder
	n := 0
	for _, p := range w.Pieces {
		n += len(p)
	}
	fmt.Fprintf(&b, "arbitrage at %s in %s, gain %s, %d transfer(s) in %d piece(s):",
		addrKey(w.V), w.Token.Key(), w.Gain.String(), n, len(w.Pieces))
	for i, p := range w.Pieces {
		if i > 0 {
			b.WriteString(" |")
		}
		fmt.Fprintf(&b, " %v", p)
	}
	return b.String()
}

// Len returns the number of transfers of the witness, all pieces together.
func (w *Witness[T]) Len() int {
	if w == nil {
		return 0
	}
	n := 0
	for _, p := range w.Pieces {
		n += len(p)
	}
	return n
}

// Find searches ts for a Definition 5 witness: at *at when at is non-nil,
// at any address otherwise. See FindIn.
func Find[T Token](ts []Transfer[T], eq func(a, b T) bool, at *common.Address, budget int) (w *Witness[T], found bool, exhausted bool) {
	return FindIn(ts, eq, at, nil, budget)
}

// FindIn is Find restricted, when tok is non-nil, to witnesses in token
// *tok (the token of the cycle's first transfer, Definition 5 (1)): the form
// needed to check one verdict "arbitrage at v in τ".
//
// eq is =_τ; nil means identity. budget bounds the number of search steps
// (a step is one candidate first transfer, one inflow tried by the
// junction phase, or one extension tried by the single-run search).
//
// The results read:
//
//   - found: w is a witness that Verify accepted. When exhausted is false
//     too, the single-run search was complete, so len(w.Pieces) > 1 means no
//     one-piece witness exists (under the restrictions at and tok; see the
//     package documentation for amounts near 2^256). When exhausted is true,
//     the single-run search ran out of budget and a one-piece witness may
//     exist.
//   - !found && !exhausted: definitely no witness, for any number of pieces.
//   - !found && exhausted: no definite answer (budget spent before the
//     decision, or malformed input: two transfers share a Pos).
//
// Find never panics; it is deterministic and does not depend on the order
// of ts (transfers are taken in Pos order).
func FindIn[T Token](ts []Transfer[T], eq func(a, b T) bool, at *common.Address, tok *T, budget int) (w *Witness[T], found bool, exhausted bool) {
	return NewSearcher(ts, eq).FindIn(at, tok, budget)
}

// Searcher is FindIn over one transfer set, its search tables (transfers
// in Pos order, outflows by source, inflows and their sums by address and
// token, reachability) built once for any number of searches: a detector
// asks for a witness per detection and token (issue 22). Each FindIn
// starts with the whole budget and gives what the function FindIn gives
// on the same transfers. A Searcher is not safe for concurrent use.
//
// A Searcher may be Reset to other transfers: its tables' storage is then
// reused (a detector's for one transaction after another, issue 22).
type Searcher[T Token] struct {
	s  *search[T] // the tables (nil: none built yet)
	ok bool       // false: two transfers share a Pos, no search is made
}

// NewSearcher prepares FindIn's tables for ts (copied) under eq (nil:
// identity).
func NewSearcher[T Token](ts []Transfer[T], eq func(a, b T) bool) *Searcher[T] {
	return NewSearcherOwning(append([]Transfer[T](nil), ts...), eq)
}

// NewSearcherOwning is NewSearcher taking ts itself, not a copy: the
// Searcher reorders it (by Pos) and the caller must not use it after.
func NewSearcherOwning[T Token](ts []Transfer[T], eq func(a, b T) bool) *Searcher[T] {
	p := new(Searcher[T])
	p.Reset(ts, eq)
	return p
}

// Reset makes p NewSearcherOwning(ts, eq), building its tables in the
// storage of its earlier ones. The witnesses p gave before hold nothing
// of it; ts is p's after, as with NewSearcherOwning.
func (p *Searcher[T]) Reset(ts []Transfer[T], eq func(a, b T) bool) {
	if p.s == nil {
		p.s = new(search[T])
	}
	p.ok = p.s.init(ts, eq, 0)
}

// FindIn is the function FindIn on the Searcher's transfers.
func (p *Searcher[T]) FindIn(at *common.Address, tok *T, budget int) (w *Witness[T], found bool, exhausted bool) {
	s := p.s
	if s == nil || !p.ok {
		return nil, false, true
	}
	if budget < 0 {
		budget = 0
	}
	s.budget, s.steps, s.inconsistent = budget, 0, false
	best, feasible, complete := s.decide(at, tok)
	if best == nil {
		return nil, false, !complete || s.inconsistent
	}
	run, runComplete := s.runs(feasible)
	if run != nil {
		return run, true, false
	}
	return best, true, !complete || !runComplete || s.inconsistent
}

// findSingle is the single-run (m = 1) search alone. With prune, roots are
// restricted to the first transfers the junction phase found feasible, as
// in Find; without, every transfer out of at (or out of anywhere) is a root.
// It reports whether the answer is definite (not exhausted).
func findSingle[T Token](ts []Transfer[T], eq func(a, b T) bool, at *common.Address, budget int, prune bool) (*Witness[T], bool) {
	s, ok := newSearch(ts, eq, budget)
	if !ok {
		return nil, false
	}
	var feasible []bool
	if prune {
		var complete bool
		if _, feasible, complete = s.decide(at, nil); !complete {
			return nil, false
		}
	} else {
		feasible = make([]bool, len(s.ts))
		for i := range s.ts {
			feasible[i] = at == nil || s.ts[i].From == *at
		}
	}
	w, complete := s.runs(feasible)
	return w, w != nil || (complete && !s.inconsistent)
}

// findJunction is the junction phase alone: its best witness (any m).
func findJunction[T Token](ts []Transfer[T], eq func(a, b T) bool, at *common.Address, budget int) (*Witness[T], bool) {
	s, ok := newSearch(ts, eq, budget)
	if !ok {
		return nil, false
	}
	best, _, complete := s.decide(at, nil)
	return best, complete && !s.inconsistent
}

type vtKey[T Token] struct {
	v   common.Address
	tok T
}

// inflow is In(v, τ): the transfers into v from elsewhere in τ exactly,
// with a non-zero amount, largest amount first (ties: Pos order); their
// sum, and whether it leaves 256 bits.
type inflow struct {
	idx   []int
	total uint256.Int
	over  bool
}

// inflows returns In(k) (nil: none).
func (s *search[T]) inflows(k vtKey[T]) *inflow {
	if i, ok := s.in[k]; ok {
		return &s.flows[i]
	}
	return nil
}

type search[T Token] struct {
	ts     []Transfer[T] // sorted by Pos
	eq     func(a, b T) bool
	budget int
	steps  int
	// in[(v, τ)]: the inflows of v in τ (flows' index).
	in    map[vtKey[T]]int32
	flows []inflow
	// Addresses are numbered (id) for the walks: to[i] is s.ts[i].To's
	// number, outs[a] the transfers out of a (Pos order), into[a] the
	// sources of the transfers into a, reach[v] (built when first asked)
	// whether each address reaches v.
	id    map[common.Address]int32
	to    []int32
	outs  [][]int
	into  [][]int32
	reach map[int32][]bool
	// inconsistent: a candidate passed the search's own checks but Verify
	// rejected it (a bug); a "no" is then not definite.
	inconsistent bool
	// per-walk state of the single-run search
	used []bool
	path []int
	// decide's feasible first transfers, reused from call to call
	feasible []bool
}

func newSearch[T Token](ts []Transfer[T], eq func(a, b T) bool, budget int) (*search[T], bool) {
	return newSearchOwning(append([]Transfer[T](nil), ts...), eq, budget)
}

// newSearchOwning is newSearch on ts itself (reordered by Pos).
func newSearchOwning[T Token](ts []Transfer[T], eq func(a, b T) bool, budget int) (*search[T], bool) {
	s := new(search[T])
	if !s.init(ts, eq, budget) {
		return nil, false
	}
	return s, true
}

// init builds s's tables for ts (reordered by Pos), in the storage of the
// tables it held before (emptied): maps cleared, lists cut to nothing,
// each address's and each inflow's list keeping its room. It reports
// false when two transfers share a Pos.
func (s *search[T]) init(ts []Transfer[T], eq func(a, b T) bool, budget int) bool {
	if eq == nil {
		eq = func(a, b T) bool { return a == b }
	}
	if budget < 0 {
		budget = 0
	}
	s.ts, s.eq, s.budget, s.steps, s.inconsistent = ts, eq, budget, 0, false
	if s.id == nil {
		s.id = make(map[common.Address]int32, len(ts))
		s.in = make(map[vtKey[T]]int32, len(ts))
		s.reach = map[int32][]bool{}
	} else {
		clear(s.id)
		clear(s.in)
		clear(s.reach)
	}
	s.to = slices.Grow(s.to[:0], len(ts))[:len(ts)]
	s.flows = slices.Grow(s.flows[:0], len(ts))
	s.outs, s.into, s.path = s.outs[:0], s.into[:0], s.path[:0]
	byPos := func(a, b Transfer[T]) int { return cmp.Compare(a.Pos, b.Pos) }
	if !slices.IsSortedFunc(s.ts, byPos) {
		slices.SortStableFunc(s.ts, byPos)
	}
	for i := 1; i < len(s.ts); i++ {
		if s.ts[i].Pos == s.ts[i-1].Pos {
			return false
		}
	}
	for i := range s.ts {
		t := &s.ts[i]
		f, d := s.number(t.From), s.number(t.To)
		s.to[i] = d
		s.outs[f] = append(s.outs[f], i)
		s.into[d] = append(s.into[d], f)
		if t.From != t.To && !t.Amount.IsZero() {
			k := vtKey[T]{t.To, t.Token}
			n, ok := s.in[k]
			if !ok {
				n = int32(len(s.flows))
				s.in[k] = n
				s.flows = s.flows[:n+1] // room for len(ts)
				s.flows[n] = inflow{idx: s.flows[n].idx[:0]}
			}
			f := &s.flows[n]
			f.idx = append(f.idx, i)
			if _, over := f.total.AddOverflow(&f.total, &t.Amount); over {
				f.over = true
			}
		}
	}
	for n := range s.flows {
		slices.SortStableFunc(s.flows[n].idx, func(i, j int) int { return s.ts[j].Amount.Cmp(&s.ts[i].Amount) })
	}
	return true
}

// step spends one unit of budget; false when none is left.
func (s *search[T]) step() bool {
	if s.steps >= s.budget {
		return false
	}
	s.steps++
	return true
}

// decide is the junction phase. It relies on this characterization, which
// follows from Definition 4 read literally (pieces need only be the maximal
// connected runs of C; nothing links one run to the next):
//
//	a witness at v in τ exists iff some transfer t1 with s(t1) = v and
//	τ(t1) = τ has need(t1) < Σ a(t) over In(v, τ),
//
// where need(t1) = a(t1) unless d(t1) = v (then 0) and In(v, τ) are the
// transfers into v from another address in τ exactly. (If: the sequence
// t1, then enough of In(v, τ), is closed at v, its last transfer is in τ,
// and its decomposition into maximal runs is a cycle. Only if: in any
// witness, every transfer other than t1 adds to δ[v, τ] at most what it
// would if it belonged to In(v, τ).)
//
// For every such t1 it builds the witness t1, h1..hj with j minimal (the
// largest inflows first), placing first, if there is one, an inflow whose
// source is d(t1) so that t1 and it form one run; it keeps the one with the
// fewest pieces, then the fewest transfers, then the earliest t1. It
// returns it, the feasible first transfers (indices into s.ts), and whether
// it completed within budget.
func (s *search[T]) decide(at *common.Address, tok *T) (best *Witness[T], feasible []bool, complete bool) {
	s.feasible = slices.Grow(s.feasible[:0], len(s.ts))[:len(s.ts)]
	feasible = s.feasible
	clear(feasible)
	for i := range s.ts {
		t1 := &s.ts[i]
		if (at != nil && t1.From != *at) || (tok != nil && t1.Token != *tok) {
			continue
		}
		if !s.step() {
			return best, feasible, false
		}
		k := vtKey[T]{t1.From, t1.Token}
		var need uint256.Int
		if t1.To != t1.From {
			need = t1.Amount
		}
		f := s.inflows(k)
		if f == nil || (!f.over && f.total.Cmp(&need) <= 0) {
			continue
		}
		// Greedy: δ starts at -need and only grows; while δ ≤ 0 adding an
		// amount cannot leave 256 bits.
		delta := Signed{Neg: true, Abs: need}
		var chosen []int
		for _, j := range f.idx {
			if !s.step() {
				return best, feasible, false
			}
			chosen = append(chosen, j)
			if delta.Add(&s.ts[j].Amount, false) {
				break // unreachable; see above
			}
			if delta.Sign() > 0 {
				break
			}
		}
		if delta.Sign() <= 0 {
			continue
		}
		feasible[i] = true
		w := s.arrange(i, chosen, delta)
		if best != nil && (len(w.Pieces) > len(best.Pieces) ||
			(len(w.Pieces) == len(best.Pieces) && w.Len() >= best.Len())) {
			continue
		}
		if Verify(s.ts, s.eq, w) != nil {
			s.inconsistent = true
			continue
		}
		best = w
	}
	return best, feasible, true
}

// arrange orders t1 and its inflows into a cycle and cuts it into maximal
// runs.
func (s *search[T]) arrange(i int, chosen []int, gain Signed) *Witness[T] {
	sort.Ints(chosen) // Pos order
	seq := []int{i}
	lead := -1
	for n, j := range chosen {
		if s.ts[j].From == s.ts[i].To {
			lead = n
			seq = append(seq, j)
			break
		}
	}
	for n, j := range chosen {
		if n != lead {
			seq = append(seq, j)
		}
	}
	return s.witness(seq, gain)
}

// witness cuts seq (indices into s.ts) into its maximal connected runs.
func (s *search[T]) witness(seq []int, gain Signed) *Witness[T] {
	first := &s.ts[seq[0]]
	w := &Witness[T]{V: first.From, Token: first.Token, Gain: gain}
	var piece []int32
	for n, j := range seq {
		if n > 0 && s.ts[seq[n-1]].To != s.ts[j].From {
			w.Pieces = append(w.Pieces, piece)
			piece = nil
		}
		piece = append(piece, s.ts[j].Pos)
	}
	w.Pieces = append(w.Pieces, piece)
	return w
}

// number returns a's number, numbering it when new.
func (s *search[T]) number(a common.Address) int32 {
	if n, ok := s.id[a]; ok {
		return n
	}
	n := int32(len(s.outs))
	s.id[a] = n
	// A list of an earlier transaction's tables keeps its room.
	if int(n) < cap(s.outs) {
		s.outs = s.outs[:n+1]
		s.outs[n] = s.outs[n][:0]
	} else {
		s.outs = append(s.outs, nil)
	}
	if int(n) < cap(s.into) {
		s.into = s.into[:n+1]
		s.into[n] = s.into[n][:0]
	} else {
		s.into = append(s.into, nil)
	}
	return n
}

// reachers returns, by address number, whether v can be reached from the
// address by a (possibly empty) connected chain of transfers of ts.
func (s *search[T]) reachers(v common.Address) []bool {
	n := s.id[v] // v is a transfer's source: numbered
	if r, ok := s.reach[n]; ok {
		return r
	}
	r := make([]bool, len(s.outs))
	r[n] = true
	queue := []int32{n}
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, y := range s.into[x] {
			if !r[y] {
				r[y] = true
				queue = append(queue, y)
			}
		}
	}
	s.reach[n] = r
	return r
}

// runs is the single-run (m = 1) phase: a depth-first search, from each
// feasible first transfer in Pos order, of connected walks that use each
// transfer at most once, trying extensions in Pos order. It returns the
// first walk found that ends at v in a token =_τ the first one with
// δ[v, τ] > 0, and whether the search completed within budget.
//
// Prunes, both sound: a walk is abandoned when its current end cannot reach
// v through ts at all, or when its balance plus every unused inflow into v
// in τ is ≤ 0. A walk whose running balance leaves 256 bits is abandoned
// (treated as no witness).
func (s *search[T]) runs(feasible []bool) (*Witness[T], bool) {
	s.used = slices.Grow(s.used[:0], len(s.ts))[:len(s.ts)]
	clear(s.used)
	complete := true
	for i := range s.ts {
		if !feasible[i] {
			continue
		}
		t1 := &s.ts[i]
		v, tau := t1.From, t1.Token
		k := vtKey[T]{v, tau}
		var delta Signed
		if t1.To != v {
			delta.Add(&t1.Amount, true)
		}
		var rest uint256.Int
		bounded := true
		if f := s.inflows(k); f != nil {
			rest, bounded = f.total, !f.over
		}
		s.used[i] = true
		s.path = append(s.path[:0], i)
		w, ok := s.walk(v, tau, delta, rest, bounded, s.reachers(v))
		s.used[i] = false
		if w != nil {
			return w, true
		}
		if !ok {
			complete = false
			break
		}
	}
	return nil, complete
}

// walk extends s.path. rest is the sum of the unused transfers of
// In(v, τ) when bounded.
func (s *search[T]) walk(v common.Address, tau T, delta Signed, rest uint256.Int, bounded bool, reach []bool) (*Witness[T], bool) {
	end := s.to[s.path[len(s.path)-1]]
	for _, j := range s.outs[end] {
		if s.used[j] {
			continue
		}
		if !s.step() {
			return nil, false
		}
		t := &s.ts[j]
		if !reach[s.to[j]] {
			continue
		}
		d, r := delta, rest
		if t.Token == tau && t.From != t.To {
			if t.To == v {
				if d.Add(&t.Amount, false) {
					continue
				}
				if bounded && !t.Amount.IsZero() {
					r.Sub(&r, &t.Amount)
				}
			} else if t.From == v {
				if d.Add(&t.Amount, true) {
					continue
				}
			}
		}
		if bounded {
			b := d
			if !b.Add(&r, false) && b.Sign() <= 0 {
				continue
			}
		}
		s.used[j] = true
		s.path = append(s.path, j)
		if t.To == v && d.Sign() > 0 && s.eq(t.Token, tau) {
			w := s.witness(s.path, d)
			if Verify(s.ts, s.eq, w) == nil {
				s.used[j] = false
				s.path = s.path[:len(s.path)-1]
				return w, true
			}
			s.inconsistent = true
		}
		w, ok := s.walk(v, tau, d, r, bounded, reach)
		s.used[j] = false
		s.path = s.path[:len(s.path)-1]
		if w != nil || !ok {
			return w, ok
		}
	}
	return nil, true
}

// Verify re-checks, from scratch and independently of the search, every
// clause of Definitions 4 and 5 for w over ts (with =_τ eq; nil means
// identity): the positions name transfers of ts (whose positions must be
// unique) and none is used twice; every piece is non-empty and connected;
// consecutive pieces are not joinable (maximality); C originates and
// terminates at w.V; its first transfer is in w.Token; its first and last
// transfers' tokens are =_τ; and δ_C[w.V, w.Token], recomputed exactly with
// math/big, is > 0 and equals w.Gain.
func Verify[T Token](ts []Transfer[T], eq func(a, b T) bool, w *Witness[T]) error {
	if w == nil {
		return errors.New("no witness")
	}
	if eq == nil {
		eq = func(a, b T) bool { return a == b }
	}
	byPos := make(map[int32]*Transfer[T], len(ts))
	for i := range ts {
		if _, dup := byPos[ts[i].Pos]; dup {
			return fmt.Errorf("two transfers of the list share position %d", ts[i].Pos)
		}
		byPos[ts[i].Pos] = &ts[i]
	}
	if len(w.Pieces) == 0 {
		return errors.New("the cycle has no piece")
	}
	used := map[int32]bool{}
	var seq []*Transfer[T]
	for pi, piece := range w.Pieces {
		if len(piece) == 0 {
			return fmt.Errorf("piece %d is empty", pi)
		}
		for n, pos := range piece {
			t, ok := byPos[pos]
			if !ok {
				return fmt.Errorf("piece %d: no transfer at position %d", pi, pos)
			}
			if used[pos] {
				return fmt.Errorf("piece %d: transfer %d used twice", pi, pos)
			}
			used[pos] = true
			if n > 0 && byPos[piece[n-1]].To != t.From {
				return fmt.Errorf("piece %d is not connected between positions %d and %d", pi, piece[n-1], pos)
			}
			seq = append(seq, t)
		}
		if pi > 0 {
			prev := w.Pieces[pi-1]
			if byPos[prev[len(prev)-1]].To == byPos[piece[0]].From {
				return fmt.Errorf("pieces %d and %d are not maximal: they join at %s", pi-1, pi, addrKey(byPos[piece[0]].From))
			}
		}
	}
	first, last := seq[0], seq[len(seq)-1]
	if first.From != w.V {
		return fmt.Errorf("the cycle originates at %s, not at %s", addrKey(first.From), addrKey(w.V))
	}
	if last.To != w.V {
		return fmt.Errorf("the cycle terminates at %s, not at %s", addrKey(last.To), addrKey(w.V))
	}
	if first.Token != w.Token {
		return fmt.Errorf("the first transfer is in %s, not in %s", first.Token.Key(), w.Token.Key())
	}
	if !eq(first.Token, last.Token) {
		return fmt.Errorf("the first and last tokens %s and %s are not equivalent", first.Token.Key(), last.Token.Key())
	}
	delta := new(big.Int)
	var amt *big.Int // each amount in turn, its words reused
	for _, t := range seq {
		if t.Token != w.Token {
			continue
		}
		if t.To == w.V {
			t.Amount.IntoBig(&amt)
			delta.Add(delta, amt)
		}
		if t.From == w.V {
			t.Amount.IntoBig(&amt)
			delta.Sub(delta, amt)
		}
	}
	if delta.Sign() <= 0 {
		return fmt.Errorf("δ[v, τ] = %s is not positive", delta)
	}
	gain := w.Gain.Abs.ToBig()
	if w.Gain.Neg {
		gain.Neg(gain)
	}
	if delta.Cmp(gain) != 0 {
		return fmt.Errorf("δ[v, τ] = %s, but the witness claims %s", delta, gain)
	}
	return nil
}
