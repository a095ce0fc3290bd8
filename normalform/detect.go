package normalform

import (
	"slices"
	"sort"
	"sync"

	"github.com/flowq/flowq/normalform/witness"
)

// Path says how an arbitrage was found. The fixpoint is the paper's
// detector; the others read its normal form further, after the fixpoint,
// without changing it (doc.go, "Beyond the fixpoint").
type Path uint8

const (
	PathNone Path = iota
	// PathFixpoint: R14 labelled the cycle at a principal.
	PathFixpoint
	// PathPromotion: a cycle R16 downgraded because it entered in one
	// representation of the native asset and left in the other.
	PathPromotion
	// PathBundle: several closed chains at one origin whose balances there
	// sum to a gain in one token class and to zero in every other; or,
	// when nothing else is found, every transfer a coalition settled
	// (chains, open or closed, and leftovers) summing so (settle.go).
	PathBundle
	// PathRotation: a closed walk the fixpoint read from another address,
	// read from the address where it leaves and returns in one token class
	// with a gain.
	PathRotation
	// PathInner: R14 labelled the cycle at an address other than the
	// principals.
	PathInner
)

// Detection is one arbitrage the analysis reports: where it closes, in
// which token, which closed chains of the normal form it reads, how it was
// found, and the Definition 5 witness the independent checker found for
// it over the decoded transfers. No detection is reported without one.
type Detection struct {
	Path   Path
	Origin Address
	// Token is Definition 5's τ: the token the reading leaves the origin
	// in (the chain's τ_in, or the token at the rotation's start).
	Token  Token
	Chains []*Chain
	// Legs are the root's leftovers a bundle of everything an origin
	// settled reads beside its chains (settle.go); empty on other paths.
	Legs []*Transfer
	// Start is the trace position of the transfer a rotated reading starts
	// with (-1 when the chain is read as the fixpoint built it).
	Start int32
	// Gain is δ at the origin over Chains, summed over Token's =_τ class,
	// in the class's unit (the native asset for native and wrapped native).
	Gain Signed
	// Witness is the checker's Definition 5 witness at Origin.
	Witness *witness.Witness[Token]
}

// Unit is the token a class of =_τ is counted in: the native asset for
// the native asset and the wrapped native contracts, the token itself
// otherwise.
func (c *Config) Unit(t Token) Token {
	if t.Kind == Native || (t.Kind == Fungible && c.IsWrappedNative(t.Addr)) {
		return NativeToken
	}
	return t
}

// InCoalition reports whether addr is one of the accounts profit is
// attributed to: the principals and the origins of the detections.
func (a *Analysis) InCoalition(addr Address) bool {
	if a.Principal(addr) {
		return true
	}
	for i := range a.Detections {
		if a.Detections[i].Origin == addr {
			return true
		}
	}
	return false
}

// coalition is InCoalition with the detections' origins read once, for
// the loops that ask it of every transfer.
func (a *Analysis) coalition() func(Address) bool {
	if len(a.Detections) == 0 {
		return a.Principal
	}
	origins := make(map[Address]bool, len(a.Detections))
	for i := range a.Detections {
		origins[a.Detections[i].Origin] = true
	}
	return func(x Address) bool { return a.Principal(x) || origins[x] }
}

// Coalition lists the principals and the detections' origins: recipient,
// sender, then origins in detection order.
func (a *Analysis) Coalition() []Address { return a.coalitionInto(nil) }

// coalitionInto appends Coalition's list to out (a caller's buffer).
func (a *Analysis) coalitionInto(out []Address) []Address {
	out = append(out, a.Recipient)
	if a.Tx.Meta.HasFrom && a.Sender != a.Recipient {
		out = append(out, a.Sender)
	}
	for i := range a.Detections {
		if o := a.Detections[i].Origin; !containsAddr(out, o) {
			out = append(out, o)
		}
	}
	return out
}

// Path is the transaction's detection path: the first of its detections'
// paths in the order of Paths, PathNone without detections.
func (a *Analysis) Path() Path {
	best := PathNone
	for i := range a.Detections {
		p := a.Detections[i].Path
		if best == PathNone || p < best { // Paths lists them in this order
			best = p
		}
	}
	return best
}

// DetectionOf returns the detection that reads c, or nil.
func (a *Analysis) DetectionOf(c *Chain) *Detection {
	for i := range a.Detections {
		for _, d := range a.Detections[i].Chains {
			if d == c {
				return &a.Detections[i]
			}
		}
	}
	return nil
}

// detector holds what the stage after the fixpoint needs while it runs.
type detector struct {
	a       *Analysis
	cfg     *Config
	depth   map[int32]int32          // frame index → depth, for the frames of T0
	checked *witness.Searcher[Token] // the checker's tables over T0, built at the first witness asked
	senders map[Address]bool         // addresses that send something (settle.go)
	bal     [2]DeltaEntry            // balanceOf's buffer (a large δ's entries held in place)
	sc      *detScratch              // tables kept from one transaction to the next (scratch)
}

// detScratch is the storage of a detector's tables, pooled (issue 22):
// the checker's transfers and search tables (witness.Searcher.Reset
// builds them in the last transaction's) and settled's tables of
// addresses and classes. Nothing a detection keeps refers to it: a
// witness holds positions, and settled's results are copies.
type detScratch struct {
	checkTs []witness.Transfer[Token]
	checker witness.Searcher[Token]
	addrNum map[Address]int32
	classAt map[settleKey]int32
	sums    []settleSum
	heads   []int32
	senders map[Address]bool // sends' set (a bool per address: nothing kept refers to it)
	cd      Delta            // classDelta's storage (its results are read, never kept)
}

var detScratches = sync.Pool{New: func() any {
	return &detScratch{addrNum: map[Address]int32{}, classAt: map[settleKey]int32{}, senders: map[Address]bool{}}
}}

// detScratchMax is the most transfers whose tables go back to the pool:
// a larger transaction's are dropped with it.
const detScratchMax = 4096

// scratch returns the detector's pooled storage, taking it at the first ask.
func (d *detector) scratch() *detScratch {
	if d.sc == nil {
		d.sc = detScratches.Get().(*detScratch)
	}
	return d.sc
}

// release gives the detector's storage back, once the detections are
// made (d is not used after).
func (d *detector) release() {
	sc := d.sc
	if sc == nil {
		return
	}
	d.sc, d.checked, d.senders = nil, nil, nil
	if len(d.a.Tx.Transfers) > detScratchMax || cap(sc.sums) > 2*detScratchMax {
		return
	}
	detScratches.Put(sc)
}

// classDelta sums a balance's entries per =_τ class, in the classes'
// units, dropping zeros (Config.Fold with the addresses left out). The
// result is read before the next call, never kept: its storage is reused.
func (d *detector) classDelta(bal Delta) (Delta, error) {
	sc := d.scratch() // the buffer is pooled with the detector's tables
	out := sc.cd[:0]
	for _, e := range bal {
		out = append(out, DeltaEntry{Token: e.Token, Amount: e.Amount})
	}
	sc.cd = out[:0]
	return d.cfg.foldOwn(out)
}

// balanceOf is c.BalanceOf(addr) read into d's buffer (no allocation
// for a large δ): valid until the next call.
func (d *detector) balanceOf(c *Chain, addr Address) Delta { return c.balanceOfIn(addr, &d.bal) }

// clean reports a class balance with exactly one non-zero entry, positive.
func clean(cd Delta) bool { return len(cd) == 1 && cd[0].Amount.Sign() > 0 }

// detect runs the stage after the fixpoint: the fixpoint's own arbitrages
// (at principals, promoted, or at inner addresses), bundles of cycles at
// one origin, and rotations of closed walks the fixpoint read from an
// address that does not gain. Every detection is checked by the
// independent checker; one without a witness is dropped and said so.
func (d *detector) detect() error {
	a := d.a
	claimed := map[*Chain]bool{} // local: on the stack while small
	var dets []Detection
	// The fixpoint's arbitrages.
	for _, c := range a.Cycles {
		if c.Label != Arbitrage {
			continue
		}
		p := PathFixpoint
		switch {
		case c.Promoted:
			p = PathPromotion
		case !a.Principal(c.Origin()):
			p = PathInner
		}
		det := Detection{Path: p, Origin: c.Origin(), Token: c.TokIn(), Chains: []*Chain{c}, Start: -1}
		if err := d.gain(&det); err != nil {
			return err
		}
		dets = append(dets, det)
	}
	// Bundles: at each origin, the closed chains whose balances there do
	// not make a clean gain alone, summed.
	bundles, err := d.bundles(dets)
	if err != nil {
		return err
	}
	if len(bundles) > 0 {
		in := map[*Chain]bool{}
		for _, b := range bundles {
			for _, c := range b.Chains {
				in[c] = true
			}
		}
		kept := dets[:0]
		for _, x := range dets {
			if !in[x.Chains[0]] {
				kept = append(kept, x)
			}
		}
		dets = append(kept, bundles...)
	}
	// The checker's witness for each: a fixpoint arbitrage without one
	// leaves its walk to the rotation (a pool's transfer to itself can
	// close the walk at the pool, where nothing gains).
	failed := map[*Chain]bool{}
	for i := range dets {
		if d.witness(&dets[i]) {
			a.Detections = append(a.Detections, dets[i])
			for _, c := range dets[i].Chains {
				claimed[c] = true
			}
		} else {
			a.unwitnessed++
			if len(dets[i].Chains) == 1 {
				failed[dets[i].Chains[0]] = true
			}
		}
	}
	// Rotations of the closed walks no detection reads.
	for _, c := range a.Cycles {
		if claimed[c] || (c.Label == Arbitrage && !failed[c]) || c.Label == LeftoverCycle {
			continue
		}
		det, ok, err := d.rotate(c)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if d.witness(&det) {
			claimed[c] = true
			a.Detections = append(a.Detections, det)
			if failed[c] {
				a.unwitnessed-- // read from where it gains, it has one
			}
		} else if !failed[c] {
			a.unwitnessed++
		}
	}
	// Nothing found: a bundle of everything one coalition settled
	// (settle.go).
	if len(a.Detections) == 0 {
		det, ok, err := d.settled()
		if err != nil {
			return err
		}
		if ok {
			if d.witness(&det) {
				a.Detections = append(a.Detections, det)
			} else {
				a.unwitnessed++
			}
		}
	}
	return nil
}

// gain sets det.Gain from its chains' balances at its origin.
func (d *detector) gain(det *Detection) error {
	var sum Delta
	for _, c := range det.Chains {
		var err error
		if sum, err = sum.Sum(d.balanceOf(c, det.Origin)); err != nil {
			return err
		}
	}
	cd, err := d.classDelta(sum)
	if err != nil {
		return err
	}
	det.Gain = cd.At(Address{}, d.cfg.Unit(det.Token))
	return nil
}

// bundles finds, per origin, the closed chains (not leftover cycles, not
// pure conversions) that do not make a clean gain alone, and reports them
// as one arbitrage when their balances at the origin sum, per =_τ class,
// to a gain in one class and zero in every other, and they trade (some
// transfer is in another class). Clean fixpoint arbitrages are left as
// they are.
func (d *detector) bundles(fix []Detection) ([]Detection, error) {
	a := d.a
	cleanFix := map[*Chain]bool{}
	for _, x := range fix {
		if x.Gain.Sign() > 0 {
			cd, err := d.classDelta(d.balanceOf(x.Chains[0], x.Origin))
			if err != nil {
				return nil, err
			}
			if clean(cd) {
				cleanFix[x.Chains[0]] = true
			}
		}
	}
	var origins []Address
	members := map[Address][]*Chain{}
	for _, c := range a.Cycles {
		if c.Label == LeftoverCycle || cleanFix[c] {
			continue
		}
		o := c.Origin()
		cd, err := d.classDelta(d.balanceOf(c, o))
		if err != nil {
			return nil, err
		}
		if len(cd) == 0 {
			continue // a pure conversion (wrap, unwrap) or a wash
		}
		if _, ok := members[o]; !ok {
			origins = append(origins, o)
		}
		members[o] = append(members[o], c)
	}
	var out []Detection
	for _, o := range origins {
		cs := members[o]
		if len(cs) < 2 {
			continue
		}
		// One of them must be an arbitrage the fixpoint labelled (R14),
		// whose balance at the origin is not a clean gain alone: two
		// conversions that sum to a gain (buy X, sell X) are the shape of a
		// liquidation (repay a debt, receive collateral, sell it), which is
		// not reported as an arbitrage.
		anchored := false
		for _, c := range cs {
			anchored = anchored || c.Label == Arbitrage
		}
		if !anchored {
			continue
		}
		var sum Delta
		trades := false
		for _, c := range cs {
			var err error
			if sum, err = sum.Sum(d.balanceOf(c, o)); err != nil {
				return nil, err
			}
		}
		cd, err := d.classDelta(sum)
		if err != nil {
			return nil, err
		}
		if !clean(cd) {
			continue
		}
		unit := cd[0].Token
		for _, c := range cs {
			c.eachTransfer(func(t *Transfer) bool {
				trades = trades || d.cfg.Unit(t.Token) != unit
				return !trades
			})
		}
		if !trades {
			continue
		}
		// Definition 5's τ: the token the first chain (in trace order)
		// leaves the origin in, when it is in the gain's class; else the
		// first member that does.
		tok, found := Token{}, false
		for _, c := range cs {
			if d.cfg.Unit(c.TokIn()) == unit {
				tok, found = c.TokIn(), true
				break
			}
		}
		if !found {
			continue
		}
		det := Detection{Path: PathBundle, Origin: o, Token: tok, Chains: cs, Start: -1, Gain: cd[0].Amount}
		out = append(out, det)
	}
	return out, nil
}

// rotate reads a closed walk from each address on it. At v, a reading
// starts at a transfer out of v whose predecessor in the walk (cyclically)
// came into v; it qualifies when the two are in one =_τ class, v's balance
// over the whole walk summed over that class is positive and zero in every
// other class, the walk trades (some transfer is in another class) and v
// is not a lender (v pays that class to some address that did not pay it
// back). A walk on which a principal other than v pays (a negative class
// balance) is that principal's trade, and is not read from anyone else: a
// fee taken by a router on a user's swap is not an arbitrage.
//
// When several addresses qualify: the recipient, then the sender, then the
// address whose first transfer out sits in the frame nearest the root,
// then the earliest first transfer out in trace order. At v, the reading
// starts at v's earliest qualifying transfer out in trace order.
func (d *detector) rotate(c *Chain) (Detection, bool, error) {
	a := d.a
	ts := c.Transfers(nil)
	k := len(ts)
	if k < 2 {
		return Detection{}, false, nil
	}
	type cand struct {
		v     Address
		start int // index in ts
		gain  Signed
		rank  int
		depth int32
		first int32
	}
	var best *cand
	seen := map[Address]bool{}
	for _, t := range ts {
		seen[t.From], seen[t.To] = true, true
	}
	// A principal that pays on the walk owns it.
	for _, v := range []Address{a.Recipient, a.Sender} {
		if !seen[v] || !a.Principal(v) {
			continue
		}
		cd, err := d.classDelta(d.balanceOf(c, v))
		if err != nil {
			return Detection{}, false, err
		}
		for _, e := range cd {
			if e.Amount.Sign() < 0 {
				return Detection{}, false, nil
			}
		}
	}
	for _, t := range ts {
		v := t.From
		if !seen[v] {
			continue
		}
		seen[v] = false // each address once, in walk order
		cd, err := d.classDelta(d.balanceOf(c, v))
		if err != nil {
			return Detection{}, false, err
		}
		if !clean(cd) {
			continue
		}
		unit := cd[0].Token
		start := -1
		for i, x := range ts {
			prev := ts[(i+k-1)%k]
			if x.From != v || prev.To != v || d.cfg.Unit(x.Token) != unit || d.cfg.Unit(prev.Token) != unit {
				continue
			}
			if start < 0 || x.Pos < ts[start].Pos {
				start = i
			}
		}
		if start < 0 || !d.trades(ts, v, unit) {
			continue
		}
		cn := cand{v: v, start: start, gain: cd[0].Amount, rank: 2, depth: 1 << 30, first: 1 << 30}
		switch {
		case v == a.Recipient:
			cn.rank = 0
		case a.Principal(v):
			cn.rank = 1
		}
		for _, x := range ts {
			if x.From != v {
				continue
			}
			if dp, ok := d.depths()[x.Frame]; ok && dp < cn.depth {
				cn.depth = dp
			}
			if x.Pos < cn.first {
				cn.first = x.Pos
			}
		}
		if best == nil || cn.rank < best.rank || (cn.rank == best.rank && (cn.depth < best.depth ||
			(cn.depth == best.depth && cn.first < best.first))) {
			cc := cn
			best = &cc
		}
	}
	if best == nil {
		return Detection{}, false, nil
	}
	return Detection{Path: PathRotation, Origin: best.v, Token: ts[best.start].Token, Chains: []*Chain{c},
		Start: ts[best.start].Pos, Gain: best.gain}, true, nil
}

// trades: the walk has a transfer outside v's class, and v pays that
// class to some address that did not pay it to v (a lender, paid back by
// its borrower, only deals with the borrower).
func (d *detector) trades(ts []*Transfer, v Address, unit Token) bool {
	other := false
	var from []Address
	for _, t := range ts {
		if d.cfg.Unit(t.Token) != unit {
			other = true
			continue
		}
		if t.To == v && t.From != v {
			from = append(from, t.From)
		}
	}
	if !other {
		return false
	}
	for _, t := range ts {
		if t.From == v && t.To != v && d.cfg.Unit(t.Token) == unit && !containsAddr(from, t.To) {
			return true
		}
	}
	return false
}

// witness asks the independent checker for a Definition 5 witness at the
// detection's origin: in its token first, then in the other tokens of its
// class that leave the origin, in trace order. It reports whether one was
// found.
func (d *detector) witness(det *Detection) bool {
	if d.checked == nil {
		sc := d.scratch()
		sc.checkTs = appendCheckerTransfers(sc.checkTs[:0], d.a.Tx.Transfers)
		sc.checker.Reset(sc.checkTs, d.cfg.TokenEq)
		d.checked = &sc.checker
	}
	toks := []Token{det.Token}
	unit := d.cfg.Unit(det.Token)
	for i := range d.a.Tx.Transfers {
		t := &d.a.Tx.Transfers[i]
		if t.From == det.Origin && d.cfg.Unit(t.Token) == unit && !containsToken(toks, t.Token) {
			toks = append(toks, t.Token)
		}
	}
	for _, tok := range toks {
		w, found, _ := d.checked.FindIn(&det.Origin, &tok, WitnessBudget)
		if found {
			det.Witness = w
			return true
		}
	}
	return false
}

// depths maps the frames of T0 to their depths, built when a rotation's
// tie-break first asks.
func (d *detector) depths() map[int32]int32 {
	if d.depth == nil {
		d.depth = map[int32]int32{}
		frameDepths(d.a.Tx.Root, d.depth)
	}
	return d.depth
}

// frameDepths maps the frames of a tree to their depths.
func frameDepths(n *Node, m map[int32]int32) {
	if n == nil || n.Frame == nil {
		return
	}
	m[n.Frame.Index] = n.Frame.Depth
	for _, c := range n.Children {
		frameDepths(c, m)
	}
}

// distribute sorts what the fixpoint left at the root between the
// coalition's accounts: builder payments by an origin (costs), transfers
// between coalition accounts (internal), and, after a detection closes
// with a gain at its origin, transfers of the gain's class from the origin
// to outsiders up to the gain (payouts). What remains is a leftover.
func (a *Analysis) distribute(cfg *Config) {
	inCo := a.coalition()
	paid := make([]Signed, len(a.Detections))
	last := make([]int32, len(a.Detections))
	for i := range a.Detections {
		last[i] = -1
		for _, c := range a.Detections[i].Chains {
			c.eachTransfer(func(t *Transfer) bool {
				last[i] = max(last[i], t.Pos)
				return true
			})
		}
		for _, t := range a.Detections[i].Legs {
			last[i] = max(last[i], t.Pos)
		}
	}
	leg := map[*Transfer]bool{}
	for i := range a.Detections {
		for _, t := range a.Detections[i].Legs {
			leg[t] = true
		}
	}
	left := a.Leftover[:0]
	for _, t := range a.Leftover {
		switch {
		case leg[t]:
			continue
		case a.Tx.Meta.PaysCoinbase(t) && inCo(t.From):
			a.Builder = append(a.Builder, t)
			continue
		case inCo(t.From) && inCo(t.To):
			a.Internal = append(a.Internal, t)
			continue
		}
		payout := false
		for i := range a.Detections {
			det := &a.Detections[i]
			if t.From != det.Origin || inCo(t.To) || t.Pos <= last[i] || det.Gain.Sign() <= 0 ||
				cfg.Unit(t.Token) != cfg.Unit(det.Token) {
				continue
			}
			p := paid[i]
			if p.Add(&t.Amount, false) || p.Cmp(det.Gain) > 0 {
				continue
			}
			paid[i], payout = p, true
			break
		}
		if payout {
			a.Payouts = append(a.Payouts, t)
			continue
		}
		left = append(left, t)
	}
	a.Leftover = left
	sort.Slice(a.Builder, func(i, j int) bool { return a.Builder[i].Pos < a.Builder[j].Pos })
}

// flat is the coalition's balance over every transfer of the transaction:
// what its accounts received from outside it less what they sent out,
// returned in acc (as made: an empty δ is non-nil).
func (a *Analysis) flat(acc deltaAcc) (deltaAcc, error) {
	inCo := a.coalition()
	// The sums per token, in one slice: found by a scan while the tokens
	// are few (most transactions), by a map from token to index beyond.
	// The slice is acc's buffer while the tokens fit.
	d := acc.bufs[acc.flip][:0]
	var at map[Token]int
	for i := range a.Tx.Transfers {
		t := &a.Tx.Transfers[i]
		in, out := inCo(t.To), inCo(t.From)
		if in == out || t.Amount.IsZero() {
			continue
		}
		k := -1
		if at != nil {
			if x, ok := at[t.Token]; ok {
				k = x
			}
		} else {
			for x := range d {
				if d[x].Token == t.Token {
					k = x
					break
				}
			}
		}
		if k < 0 {
			k = len(d)
			d = append(d, DeltaEntry{Addr: a.Recipient, Token: t.Token})
			if at != nil {
				at[t.Token] = k
			} else if len(d) == 16 {
				at = make(map[Token]int, 32)
				for x := range d {
					at[d[x].Token] = x
				}
			}
		}
		if d[k].Amount.Add(&t.Amount, out) {
			return acc, ErrOverflow
		}
	}
	w := 0
	for _, e := range d {
		if e.Amount.Sign() != 0 {
			d[w] = e
			w++
		}
	}
	d = d[:w]
	slices.SortFunc(d, func(x, y DeltaEntry) int { return compareToken(&x.Token, &y.Token) }) // tokens are distinct
	acc.d, acc.summed, acc.flip = d, true, 1-acc.flip
	return acc, nil
}

// atCoalition returns a chain's balance at the coalition's accounts,
// summed per token and keyed by the recipient, in bufs (the caller's:
// read before its next call, never kept).
func (a *Analysis) atCoalition(c *Chain, bufs *[2][4]DeltaEntry) (Delta, error) {
	out := deltaAcc{bufs: bufs}
	var buf [2]DeltaEntry
	var co [4]Address
	for _, p := range a.coalitionInto(co[:0]) {
		for _, e := range c.balanceOfIn(p, &buf) {
			e.Addr = a.Recipient
			var err error
			if out, err = out.add(Delta{e}); err != nil {
				return nil, err
			}
		}
	}
	return out.d, nil
}

// Role names what an address is to the transaction: "recipient",
// "sender", or "inner" (neither).
func (a *Analysis) Role(addr Address) string {
	switch {
	case addr == a.Recipient && a.Tx.Meta.HasFrom && addr == a.Sender:
		return "sender and recipient"
	case addr == a.Recipient:
		return "recipient"
	case a.Tx.Meta.HasFrom && addr == a.Sender:
		return "sender"
	}
	return "inner"
}

// Kept is the net less the payouts, folded: what the coalition keeps. Nil
// when costs are unknown.
func (a *Analysis) Kept(cfg *Config) (Delta, error) {
	if a.Net == nil {
		return nil, nil
	}
	kept := a.Net
	for _, t := range a.Payouts {
		var err error
		if kept, err = kept.Sum(Delta{{Addr: a.Recipient, Token: cfg.Unit(t.Token), Amount: Signed{Neg: true, Abs: t.Amount}}}); err != nil {
			return nil, err
		}
	}
	return kept, nil
}
