package normalform

// Bundles of everything an origin settled. A bot that takes flash swaps
// from several pools and pays each back while the callbacks unwind may
// leave the fixpoint with no closed chain at all: when the pools are paid
// in the order they lent (first paid first), each pool's walk runs
// through the bot into the next pool, and what reaches the bot is open
// chains and leftovers. The pieces still join, by balance continuity, at
// the bot: summed over every transfer into and out of it they are a gain
// in one token class and zero in every other. settled reads that sum.
//
// It runs only when the paths before it found nothing, and asks more of a
// transaction than the other bundles do, since no R14 label anchors it:
//   - the coalition (the principals, and one other address as origin when
//     the principals alone do not settle) ends, over every transfer that
//     crosses its boundary, with a positive balance in one =_τ class and
//     zero in every other; builder payments (native value to the
//     coinbase) and transfers in the gain's class to addresses that never
//     send anything in the transaction (a cold wallet, a payout address)
//     are set aside, as costs and payouts;
//   - it trades: at least two addresses outside it exchange tokens of
//     another class with it;
//   - no token outside the native class is minted or burned in the
//     transaction, and the coalition receives no token its own contract
//     moved out of a third party's balance (σ is the token, the sender
//     someone else: Compound's seize): a liquidation (a debt repaid, the
//     borrower's receipt or debt token burned or seized, the collateral
//     sold) settles the same way, and is not an arbitrage;
//   - the independent checker finds a Definition 5 witness at the origin.

// maxSettleCandidates bounds the non-principal origins tried, so the
// stage stays linear in the transfers.
const maxSettleCandidates = 32

// settled returns the bundle of everything one coalition settled, or
// false.
func (d *detector) settled() (Detection, bool, error) {
	a := d.a
	ts := a.Tx.Transfers
	if len(ts) < 2 {
		return Detection{}, false, nil
	}
	m := &a.Tx.Meta
	for i := range ts {
		t := &ts[i]
		if t.Flags&(Mint|Burn) != 0 && d.cfg.Unit(t.Token) != NativeToken {
			return Detection{}, false, nil
		}
	}
	// Each address's balance per class, builder payments apart: a
	// coalition's balance is the sum of its members' (transfers between
	// members cancel), so a coalition with more than one class that does not
	// sum to zero is no candidate, and is not checked further.
	//
	// The balances are one slice, each address's classes found through
	// its number (one map lookup per transfer end and one per class,
	// nothing allocated per address or per class).
	sc := d.scratch()
	addrNum, classAt := sc.addrNum, sc.classAt
	clear(addrNum)
	clear(classAt)
	sums := sc.sums[:0]
	heads := sc.heads[:0] // by address number: its first class
	defer func() { sc.sums, sc.heads = sums[:0], heads[:0] }()
	var order []Address
	for i := range ts {
		t := &ts[i]
		if t.Amount.IsZero() || t.From == t.To || m.PaysCoinbase(t) {
			continue
		}
		u := d.cfg.Unit(t.Token)
		for _, e := range [2]struct {
			addr Address
			neg  bool
		}{{t.From, true}, {t.To, false}} {
			an, ok := addrNum[e.addr]
			if !ok {
				an = int32(len(heads))
				addrNum[e.addr] = an
				heads = append(heads, -1)
				if !e.neg {
					order = append(order, e.addr)
				}
			}
			x, ok := classAt[settleKey{an, u}]
			if !ok {
				x = int32(len(sums))
				classAt[settleKey{an, u}] = x
				sums = append(sums, settleSum{next: heads[an], u: u})
				heads[an] = x
			}
			if sums[x].v.Add(&t.Amount, e.neg) {
				return Detection{}, false, ErrOverflow
			}
		}
	}
	// eachClass calls f on each class balance of x (in no set order: the
	// callers only sum and count).
	eachClass := func(x Address, f func(u Token, v *Signed) bool) bool {
		an, ok := addrNum[x]
		if !ok {
			return true
		}
		for c := heads[an]; c >= 0; c = sums[c].next {
			if !f(sums[c].u, &sums[c].v) {
				return false
			}
		}
		return true
	}
	principals := a.Coalition()
	base := map[Token]Signed{}
	for _, p := range principals {
		if !eachClass(p, func(u Token, v *Signed) bool {
			x := base[u]
			if x.AddSigned(v) {
				return false
			}
			base[u] = x
			return true
		}) {
			return Detection{}, false, ErrOverflow
		}
	}
	nzBase := 0
	for _, x := range base {
		if x.Sign() != 0 {
			nzBase++
		}
	}
	// candidate reports whether the coalition of the principals and o (nil:
	// the principals alone) has at most one class with a non-zero balance:
	// transfers to sinks (payouts) may have taken the gain's class to zero
	// or below. It costs the number of o's classes.
	candidate := func(o *Address) bool {
		nonzero := nzBase
		if o != nil {
			if !eachClass(*o, func(u Token, v *Signed) bool {
				x := base[u]
				was := x.Sign() != 0
				if x.AddSigned(v) {
					return false
				}
				switch is := x.Sign() != 0; {
				case was && !is:
					nonzero--
				case !was && is:
					nonzero++
				}
				return true
			}) {
				return true // let settle report the overflow
			}
		}
		return nonzero <= 1
	}
	if candidate(nil) {
		if det, ok, err := d.settle(principals); ok || err != nil {
			return det, ok, err
		}
	}
	// Other origins: addresses that receive and send, in trace order of
	// what they receive first, each with a positive balance in some class.
	n := 0
	for _, o := range order {
		if a.Principal(o) || o == m.Miner || !d.sends(o) {
			continue
		}
		positive := false
		eachClass(o, func(_ Token, v *Signed) bool {
			positive = positive || v.Sign() > 0
			return true
		})
		if !positive || !candidate(&o) {
			continue
		}
		if n++; n > maxSettleCandidates {
			break
		}
		if det, ok, err := d.settle(append(principals[:len(principals):len(principals)], o)); ok || err != nil {
			return det, ok, err
		}
	}
	return Detection{}, false, nil
}

// settleKey is a class of an address (its number) in settled's tables,
// settleSum its balance, in a list of the address's classes.
type settleKey struct {
	a int32
	u Token
}

type settleSum struct {
	next int32 // the address's next class (-1: none)
	u    Token
	v    Signed
}

// settle checks one coalition k (its last member the origin when it is
// not a principal).
func (d *detector) settle(k []Address) (Detection, bool, error) {
	a := d.a
	m := &a.Tx.Meta
	in := func(x Address) bool {
		for _, y := range k {
			if x == y {
				return true
			}
		}
		return false
	}
	// The coalition's balance per class over the transfers that cross its
	// boundary, builder payments apart, and what it sent to sinks.
	bal := map[Token]*Signed{}
	toSink := map[Token]*Signed{}
	acc := func(mp map[Token]*Signed, u Token, v *Signed) bool {
		s := mp[u]
		if s == nil {
			s = &Signed{}
			mp[u] = s
		}
		return s.AddSigned(v)
	}
	for i := range a.Tx.Transfers {
		t := &a.Tx.Transfers[i]
		fi, ti := in(t.From), in(t.To)
		if fi == ti || t.Amount.IsZero() {
			continue
		}
		if fi && m.PaysCoinbase(t) {
			continue
		}
		u := d.cfg.Unit(t.Token)
		if ti && t.Token.Kind != Native && t.Sender == t.Token.Addr && t.From != t.Sender && u != NativeToken {
			return Detection{}, false, nil // seized from a third party
		}
		v := Signed{Neg: fi, Abs: t.Amount}
		if acc(bal, u, &v) {
			return Detection{}, false, ErrOverflow
		}
		if fi && !d.sends(t.To) {
			if acc(toSink, u, &Signed{Abs: t.Amount}) {
				return Detection{}, false, ErrOverflow
			}
		}
	}
	// One class positive once its sinks are added back (they are payouts),
	// every other zero as it is.
	var gain Signed
	var unit Token
	found := false
	for u, s := range bal {
		v := *s
		if x := toSink[u]; x != nil && v.AddSigned(x) {
			return Detection{}, false, ErrOverflow
		}
		if v.Sign() > 0 {
			if found {
				return Detection{}, false, nil
			}
			gain, unit, found = v, u, true
		}
	}
	if !found {
		return Detection{}, false, nil
	}
	for u, s := range bal {
		if u != unit && s.Sign() != 0 {
			return Detection{}, false, nil
		}
	}
	// It trades with at least two outsiders in another class; the legs are
	// the transfers across the boundary but the builder payments and those
	// to sinks in the gain's class.
	traders := map[Address]bool{}
	var legs []*Transfer
	first := -1
	for i := range a.Tx.Transfers {
		t := &a.Tx.Transfers[i]
		fi, ti := in(t.From), in(t.To)
		if fi == ti || t.Amount.IsZero() {
			continue
		}
		u := d.cfg.Unit(t.Token)
		if fi && m.PaysCoinbase(t) {
			continue
		}
		if fi && u == unit && !d.sends(t.To) {
			continue // a payout, when it comes after the gain
		}
		if u != unit {
			if fi {
				traders[t.To] = true
			} else {
				traders[t.From] = true
			}
		} else if fi && first < 0 {
			first = i
		}
		legs = append(legs, t)
	}
	if len(traders) < 2 || first < 0 {
		return Detection{}, false, nil
	}
	// The origin: the non-principal member when there is one, else the
	// principal that sends the gain's class first.
	origin := k[len(k)-1]
	if a.Principal(origin) {
		origin = a.Tx.Transfers[first].From
	}
	tok := a.Tx.Transfers[first].Token
	// The pieces of the normal form it reads: the chains at the root with a
	// transfer across the coalition's boundary (complementary cycles are
	// counted on their own); the rest are leftovers at the root.
	var chains []*Chain
	inChain := map[int32]bool{}
	for _, n := range a.NF.Children {
		c := n.Chain
		if c == nil || c.Rule == Complementary {
			continue
		}
		touches := false
		c.eachTransfer(func(t *Transfer) bool { touches = in(t.From) != in(t.To); return !touches })
		if touches {
			chains = append(chains, c)
			c.eachTransfer(func(t *Transfer) bool { inChain[t.Pos] = true; return true })
		}
	}
	var left []*Transfer
	for _, t := range legs {
		if !inChain[t.Pos] {
			left = append(left, t)
		}
	}
	return Detection{Path: PathBundle, Origin: origin, Token: tok, Chains: chains, Legs: left, Start: -1, Gain: gain}, true, nil
}

// sends reports whether addr sends anything in the transaction.
func (d *detector) sends(addr Address) bool {
	if d.senders == nil {
		d.senders = d.scratch().senders // pooled: read only until release
		clear(d.senders)
		for i := range d.a.Tx.Transfers {
			d.senders[d.a.Tx.Transfers[i].From] = true
		}
	}
	return d.senders[addr]
}
