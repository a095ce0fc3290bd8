package normalform

import (
	"fmt"
	"slices"
	"strconv"
	"unsafe"

	"github.com/holiman/uint256"
)

// Verdict is the classification of a transaction.
type Verdict uint8

const (
	VerdictNone Verdict = iota
	VerdictWarning
	VerdictArbitrage
)

// Tier grades a verdict: confirmed (clean cycles, positive net, no
// leftovers), probable (a cycle with positive gross whose confirmation is
// blocked by leftovers or by unknown costs), attempted (the cycle closed but
// costs exceed its profit), uncertain (mixed-sign balances, or cycles only
// at inner addresses). Empty for VerdictNone.
type Tier uint8

const (
	TierNone Tier = iota
	TierConfirmed
	TierProbable
	TierAttempted
	TierUncertain
)

// Reason is a diagnostic label of the classification.
type Reason string

// The reasons. The first four decide the verdict (with costs_unknown and
// inner_cycle, flowq's additions); the others explain it.
const (
	ReasonNoCycles     Reason = "no_cycles"     // no arbitrage cycle at the recipient
	ReasonLeftovers    Reason = "leftovers"     // transfers the reduction could not place
	ReasonFinalNeg     Reason = "final_neg"     // every component of the net balance ≤ 0
	ReasonFinalMixed   Reason = "final_mixed"   // the net balance has opposite-sign components
	ReasonCostsUnknown Reason = "costs_unknown" // no receipt: gas cannot be charged, net unknown
	ReasonInnerCycle   Reason = "inner_cycle"   // an arbitrage cycle closes at an address other than the recipient
	ReasonBalanceMixed Reason = "balance_mixed" // the gross balance has opposite-sign components
	ReasonNegProfit    Reason = "neg_profit"    // the net native component (the one costs are charged to) ≤ 0
	ReasonPromoted     Reason = "promoted"      // an arbitrage reached by the post-fixpoint promotion path
	ReasonSelfCall     Reason = "self_call"     // sender = recipient: R16 skipped
	ReasonBuilder      Reason = "builder_payment"
	ReasonPayout       Reason = "payout"      // part of a gain was paid out from its origin (not a cost, not a leftover)
	ReasonUnexplained  Reason = "unexplained" // the coalition's gross differs from what the detections explain (the amount is shown)
	ReasonUnwitnessed  Reason = "unwitnessed" // a candidate arbitrage had no Definition 5 witness and was dropped
	// ReasonReceiptsOnly: the analysis was made from receipts alone
	// (ModeReceipts) and found an arbitrage, which what receipts do not
	// show could change: native value sent by internal calls (a builder
	// payment lowers the net, an ETH leg out of the coalition the gross),
	// and the senders σ the rules read (R11's pull, R14's and R15's
	// routing test, the settled bundle's seizure test).
	ReasonReceiptsOnly Reason = "receipts_only"
	// ReasonV4Netted: a transfer of the transaction has a configured Uniswap
	// V4 PoolManager at one end. Swaps inside the manager are netted (flash
	// accounting): a route through several V4 pools shows only its ends (the
	// settle into the manager and the take out of it), and an arbitrage
	// entirely inside V4 may show only its profit. The verdict reads the
	// transfers as they are; this says that legs may be missing from them.
	ReasonV4Netted Reason = "v4_netted"
)

// Reasons lists every reason, in the order above.
var Reasons = []Reason{ReasonNoCycles, ReasonLeftovers, ReasonFinalNeg, ReasonFinalMixed, ReasonCostsUnknown, ReasonInnerCycle,
	ReasonBalanceMixed, ReasonNegProfit, ReasonPromoted, ReasonSelfCall, ReasonBuilder, ReasonPayout, ReasonUnexplained, ReasonUnwitnessed, ReasonReceiptsOnly, ReasonV4Netted}

// Costs are the transaction's costs, in the native asset.
type Costs struct {
	Known    bool
	GasUsed  uint64
	BaseFee  uint256.Int // gas_used × base fee (burned)
	Priority uint256.Int // gas_used × (effective price − base fee) (tip)
	Builder  uint256.Int // direct payments to the block's coinbase
	Total    uint256.Int
}

// Analysis is what the engine says of a transaction.
type Analysis struct {
	cfg       *Config
	Tx        *Tx
	Recipient Address // the transaction's to (the created contract for a creation)
	Sender    Address // the transaction's from (who pays the gas)
	// NF is the normal form: the root frame with the reduced children
	// (chains, leftover cycles, leftover and cost leaves) in order.
	NF       *Node
	Steps    []Step
	Passes   int // passes of the annotation-and-connection loop
	Cycles   []*Chain
	Leftover []*Transfer // transfers left unplaced after recovery
	Builder  []*Transfer // payments to the coinbase, set aside as costs
	// Detections are the arbitrages found, each with its path and witness
	// (detect.go); Payouts the transfers of their gains to outsiders;
	// Internal the transfers between coalition accounts left at the root.
	Detections []Detection
	Payouts    []*Transfer
	Internal   []*Transfer
	Verdict    Verdict
	Tier       Tier
	Reasons    []Reason
	// Gross is the coalition's balance (principals and origins) over every
	// transfer, builder payments charged as costs and payouts added back,
	// per token (not folded), keyed by the recipient.
	Gross Delta
	// Explained is what the detections (with complementary leftover cycles
	// and leftovers received) account for at the coalition; the verdict
	// reads it. Unexplained is Gross − Explained, folded: empty when the
	// detections account for the whole gross.
	Explained   Delta
	Unexplained Delta
	Net         Delta // Gross folded, less costs; nil when costs are unknown
	Costs       Costs
	unwitnessed int
	// terms memoizes Terms for the NF it was computed from (an
	// atomic pointer, so that goroutines sharing an analysis may each
	// call Terms: at worst two build the same terms, and one's are kept).
	// A plain pointer read and written with sync/atomic, not an
	// atomic.Pointer: analyses are copied by value, and a copy keeps the
	// memo, which holds for the NF it names.
	terms unsafe.Pointer // *termsMemo
}

// Principal reports whether addr is one of the transaction's principals:
// its recipient or its sender. Profit is attributed to them, together: the
// sender pays the gas, so the accounting closes there as well as at the
// contract it calls (a router arbitrage closes at the sender's EOA).
func (a *Analysis) Principal(addr Address) bool {
	return addr == a.Recipient || (a.Tx.Meta.HasFrom && addr == a.Sender)
}

// Counted reports whether a chain counts towards the verdict: some
// detection reads it.
func (a *Analysis) Counted(c *Chain) bool { return a.DetectionOf(c) != nil }

// Analyze rewrites a transaction's T0 to its normal form and classifies it
// (Algorithm 3). T0 itself is left untouched.
func Analyze(tx *Tx, cfg *Config) (*Analysis, error) {
	a := &Analysis{Tx: tx, cfg: cfg}
	if tx.Meta.HasTo {
		a.Recipient = tx.Meta.To
	} else if tx.Root != nil {
		a.Recipient = tx.Root.Frame.To
	}
	a.Sender = tx.Meta.From
	if tx.Root == nil {
		a.Verdict = VerdictNone
		a.Reasons = []Reason{ReasonNoCycles}
		a.costs(cfg, nil)
		return a, nil
	}
	k := newKernel(cfg, a)
	root := tx.Root // read only: the kernel copies the leaves it rewrites
	kids := k.structuralFixpoint(root)
	kids, a.Passes = k.annotateAndReduce(root.Frame, kids)
	selfCall := tx.Meta.HasFrom && tx.Meta.From == a.Recipient
	if !selfCall {
		k.validate(root.Frame, kids)
	}
	if k.err != nil {
		return nil, fmt.Errorf("tx %s: %w", tx.Meta.Hash.Hex(), k.err)
	}
	kids = a.recover(k, cfg, root.Frame, kids)
	a.NF = &Node{Frame: root.Frame, Children: kids}
	a.Steps = k.steps
	for _, n := range kids {
		if n.Chain != nil && n.Chain.Closed() {
			a.Cycles = append(a.Cycles, n.Chain)
		}
	}
	if err := a.classify(k, cfg, root.Frame, selfCall); err != nil {
		return nil, fmt.Errorf("tx %s: %w", tx.Meta.Hash.Hex(), err)
	}
	a.Steps = k.keepSteps(a.Steps)
	releaseKernel(k)
	return a, nil
}

// PaysCoinbase reports whether t moves native value to the block's
// coinbase (known only with the block header): the test under every
// reading of a builder payment.
func (m *Meta) PaysCoinbase(t *Transfer) bool {
	return m.HasHeader && t.Token.Kind == Native && t.To == m.Miner
}

// isBuilderPayment: native value from a coalition account to the block's
// coinbase.
func (a *Analysis) isBuilderPayment(t *Transfer) bool {
	return a.Tx.Meta.PaysCoinbase(t) && a.InCoalition(t.From)
}

// isPrincipalBuilderPayment is the fixpoint's own reading: native value
// from a principal to the coinbase. The terms, and so the structural
// hashes, use it: the stage after the fixpoint does not change them.
func (a *Analysis) isPrincipalBuilderPayment(t *Transfer) bool {
	return a.Tx.Meta.PaysCoinbase(t) && a.Principal(t.From)
}

// negateInto appends −d to out.
func negateInto(out, d Delta) Delta {
	for _, e := range d {
		e.Amount.Neg = !e.Amount.Neg && !e.Amount.Abs.IsZero()
		out = append(out, e)
	}
	return out
}

// deltaAcc is a balance summed term by term (add), as a chain of
// Delta.Sum would sum it, in two buffers used in turn (the caller's, on
// its stack: a sum past their room moves to the heap), and kept at its
// length (keep). Passed by value: a method storing into it through a
// pointer would move the buffers to the heap.
type deltaAcc struct {
	d      Delta
	summed bool // some add was made (or flat set it)
	flip   int
	bufs   *[2][4]DeltaEntry
}

// add returns the balance with x summed into it.
func (s deltaAcc) add(x Delta) (deltaAcc, error) {
	out, err := sumInto(s.bufs[s.flip][:0], s.d, x)
	if err != nil {
		return s, err
	}
	s.d, s.summed, s.flip = out, true, 1-s.flip
	return s, nil
}

// keep returns the balance as Delta.Sum would have returned it: nil when
// nothing was summed, an empty non-nil δ when the sum is empty, else its
// entries in a slice of their own.
func (s deltaAcc) keep() Delta {
	switch {
	case !s.summed:
		return nil
	case len(s.d) == 0:
		return Delta{}
	}
	return append(make(Delta, 0, len(s.d)), s.d...)
}

// recoverKey is what a leftover's partner must carry, for one pass of
// recover.
type recoverKey struct {
	kind   uint8
	tok    Token
	a, b   Address
	amount uint256.Int
}

// recover is Extract-and-Recover: leaves left after the fixpoint are
// leftovers, except payments to the coinbase (set aside as costs); specular
// pairs (same token and amount, reversed endpoints) and then complementary
// transfers (same token, an endpoint in common) become leftover cycles.
func (a *Analysis) recover(k *kernel, cfg *Config, root *Frame, kids []*Node) []*Node {
	var leftBuf [16]int
	left := leftBuf[:0] // indices in kids of leftover leaves (on the stack while few)
	for i, n := range kids {
		if n.Leaf == nil {
			continue
		}
		if a.isBuilderPayment(n.Leaf) {
			a.Builder = append(a.Builder, n.Leaf)
			continue
		}
		left = append(left, i)
	}
	// Each pass pairs every leftover, in order, with the first later one
	// that is still a leaf and fits. Candidates are indexed by the key a
	// partner must have, and each key's list is consumed from its head (a
	// candidate before the current leftover, or already used, never fits
	// again), so a pass is linear rather than all pairs.
	if len(left) < 2 {
		// Nothing to pair (most transactions): the leftovers as they are.
		for _, i := range left {
			a.Leftover = append(a.Leftover, kids[i].Leaf)
		}
		return kids
	}
	removed := make([]bool, len(kids))
	avail := func(p int) bool { j := left[p]; return !removed[j] && kids[j].Leaf != nil }
	pair := func(rule Rule, keysOf, partners func(t *Transfer) ([2]recoverKey, int)) {
		// The lists, one per key, laid out in one slice (a counting sort
		// by key): list c is at[start[c]:start[c+1]], positions in left,
		// increasing; head[c] is its first candidate not yet ruled out.
		ids := make(map[recoverKey]int32, 2*len(left)) // at most two keys a leftover
		keyed := make([]int32, 0, 2*len(left))         // (list, position) pairs
		for p, j := range left {
			if !avail(p) {
				continue
			}
			ks, n := keysOf(kids[j].Leaf)
			for _, key := range ks[:n] {
				c, ok := ids[key]
				if !ok {
					c = int32(len(ids))
					ids[key] = c
				}
				keyed = append(keyed, c, int32(p))
			}
		}
		start := make([]int32, len(ids)+1)
		for x := 0; x < len(keyed); x += 2 {
			start[keyed[x]+1]++
		}
		for c := 1; c < len(start); c++ {
			start[c] += start[c-1]
		}
		head := make([]int32, len(ids))
		copy(head, start)
		at := make([]int32, len(keyed)/2)
		for x := 0; x < len(keyed); x += 2 {
			c := keyed[x]
			at[head[c]] = keyed[x+1]
			head[c]++
		}
		copy(head, start)
		for p, i := range left {
			if !avail(p) {
				continue
			}
			best := int32(-1)
			ks, n := partners(kids[i].Leaf)
			for _, key := range ks[:n] {
				c, ok := ids[key]
				if !ok {
					continue
				}
				for head[c] < start[c+1] && (at[head[c]] <= int32(p) || !avail(int(at[head[c]]))) {
					head[c]++
				}
				if head[c] < start[c+1] && (best < 0 || at[head[c]] < best) {
					best = at[head[c]]
				}
			}
			if best < 0 {
				continue
			}
			j := left[best]
			r := k.build(root, rule, LeftoverCycle, false, kids[i], kids[j])
			if r == nil {
				return
			}
			kids[i] = r
			removed[j] = true
		}
	}
	// Specular: y gives back exactly what x took (same token and amount,
	// endpoints swapped).
	pair(Specular, func(y *Transfer) ([2]recoverKey, int) {
		return [2]recoverKey{{tok: y.Token, a: y.From, b: y.To, amount: y.Amount}}, 1
	}, func(x *Transfer) ([2]recoverKey, int) {
		return [2]recoverKey{{tok: x.Token, a: x.To, b: x.From, amount: x.Amount}}, 1
	})
	// Complementary: same token, y ends where x starts or starts where x
	// ends.
	pair(Complementary, func(y *Transfer) ([2]recoverKey, int) {
		return [2]recoverKey{{kind: 1, tok: y.Token, a: y.To}, {kind: 2, tok: y.Token, a: y.From}}, 2
	}, func(x *Transfer) ([2]recoverKey, int) {
		return [2]recoverKey{{kind: 1, tok: x.Token, a: x.From}, {kind: 2, tok: x.Token, a: x.To}}, 2
	})
	out := kids[:0]
	for i, n := range kids {
		if removed[i] {
			continue
		}
		out = append(out, n)
		if n.Leaf != nil && !a.isBuilderPayment(n.Leaf) {
			a.Leftover = append(a.Leftover, n.Leaf)
		}
	}
	return out
}

// costs computes gas and builder costs; builder payments inside a counted
// cycle are already in its balance and are not charged twice.
func (a *Analysis) costs(cfg *Config, inCycle map[int32]bool) {
	m := &a.Tx.Meta
	c := &a.Costs
	for i := range a.Tx.Transfers {
		t := &a.Tx.Transfers[i]
		if a.isBuilderPayment(t) && !inCycle[t.Pos] {
			c.Builder.Add(&c.Builder, &t.Amount)
		}
	}
	if !m.HasReceipt {
		return
	}
	c.Known, c.GasUsed = true, m.GasUsed
	gas := uint256.NewInt(m.GasUsed)
	var total uint256.Int
	total.Mul(gas, &m.EffectiveGasPrice)
	if m.HasHeader && m.HasBaseFee {
		base := m.BaseFee
		if base.Cmp(&m.EffectiveGasPrice) > 0 {
			base = m.EffectiveGasPrice
		}
		c.BaseFee.Mul(gas, &base)
	}
	c.Priority.Sub(&total, &c.BaseFee)
	c.Total.Add(&total, &c.Builder)
}

// Fold sums native and wrapped-native components into the native asset.
// It sorts once and merges neighbours: linear after the sort, however many
// tokens the balance holds.
func (cfg *Config) Fold(d Delta) (Delta, error) {
	out := make(Delta, len(d))
	copy(out, d)
	return cfg.foldOwn(out)
}

// FoldInto is Fold with the result in buf's array when it is large
// enough (a caller folding balance after balance allocates once).
func (cfg *Config) FoldInto(buf, d Delta) (Delta, error) {
	return cfg.foldOwn(append(buf[:0], d...))
}

// foldOwn is Fold on a balance the caller owns: out is rewritten in place
// and its storage is the result's.
func (cfg *Config) foldOwn(out Delta) (Delta, error) {
	for i := range out {
		out[i].Token = cfg.Unit(out[i].Token)
	}
	slices.SortStableFunc(out, func(x, y DeltaEntry) int { return compareKey(&x, &y.Addr, &y.Token) })
	merged := out[:0]
	for _, e := range out {
		if n := len(merged); n > 0 && merged[n-1].Addr == e.Addr && merged[n-1].Token == e.Token {
			if merged[n-1].Amount.AddSigned(&e.Amount) {
				return nil, ErrOverflow
			}
			continue
		}
		merged = append(merged, e)
	}
	kept := merged[:0]
	for _, e := range merged {
		if !e.Amount.Abs.IsZero() {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return nil, nil
	}
	return kept, nil
}

func mixed(d Delta) bool {
	pos, neg := false, false
	for _, e := range d {
		switch e.Amount.Sign() {
		case 1:
			pos = true
		case -1:
			neg = true
		}
	}
	return pos && neg
}

// negative: empty, or no component positive.
func negative(d Delta) bool {
	for _, e := range d {
		if e.Amount.Sign() > 0 {
			return false
		}
	}
	return true
}

// classify runs promotion, profit and Algorithm 4.
func (a *Analysis) classify(k *kernel, cfg *Config, root *Frame, selfCall bool) error {
	// Post-fixpoint promotion: a cycle that R16 downgraded because it
	// entered in one representation of the native asset and left in the
	// other, whose =_τ-summed balance is positive, with no leftovers.
	if len(a.Leftover) == 0 {
		for _, c := range a.Cycles {
			if !c.Downgraded || c.TokIn() == c.TokOut() || !cfg.TokenEq(c.TokIn(), c.TokOut()) {
				continue
			}
			in, out := c.BalanceAt(c.Origin(), c.TokIn()), c.BalanceAt(c.Origin(), c.TokOut())
			if in.AddSigned(&out) {
				return ErrOverflow
			}
			if in.Sign() > 0 {
				c.Label, c.Promoted = Arbitrage, true
				k.steps = append(k.steps, Step{Rule: Promote, Frame: root.Index, Operands: []string{chainName(c)}, Result: chainName(c),
					Note: fmt.Sprintf("%s: δ[%s] + δ[%s] = %s", k.gist(c), cfg.TokenName(c.TokIn()), cfg.TokenName(c.TokOut()), in)})
			}
		}
		a.Steps = k.steps
	}
	// Beyond the fixpoint: the detections, each with its witness, then
	// what the root's leftovers are to the coalition.
	d := &detector{a: a, cfg: cfg}
	derr := d.detect()
	d.release()
	if derr != nil {
		return derr
	}
	// The step log says how each detection was found, after the
	// fixpoint's own steps.
	for i := range a.Detections {
		det := &a.Detections[i]
		var ops []string
		for _, c := range det.Chains {
			ops = append(ops, chainName(c))
		}
		for _, t := range det.Legs {
			ops = append(ops, "#"+strconv.Itoa(int(t.Pos)))
		}
		// The detection line of the report says where and how much; the
		// step names what it reads and its path, and stores no text.
		a.Steps = append(a.Steps, Step{Rule: Detect, Frame: root.Index, Operands: ops, Result: det.Path.String()})
	}
	a.distribute(cfg)
	inCo := a.coalition() // the detections are final
	// What the detections explain at the coalition (with the paper's
	// complementary leftover cycles and leftovers received), and costs.
	inCycle := map[int32]bool{}
	// explained and gross are summed on the stack (deltaAcc) and kept at
	// their length: each Sum's own result was garbage but the last.
	var eBufs, gBufs, xBufs [2][4]DeltaEntry
	explained := deltaAcc{bufs: &eBufs}
	var err error
	inner, promoted := 0, false
	for i := range a.Detections {
		det := &a.Detections[i]
		if !a.Principal(det.Origin) {
			inner++
		}
		promoted = promoted || det.Path == PathPromotion
		for _, c := range det.Chains {
			c.eachTransfer(func(t *Transfer) bool { inCycle[t.Pos] = true; return true })
			x, err := a.atCoalition(c, &xBufs)
			if err != nil {
				return err
			}
			if explained, err = explained.add(x); err != nil {
				return err
			}
		}
		for _, t := range det.Legs {
			inCycle[t.Pos] = true
			fi, ti := inCo(t.From), inCo(t.To)
			if fi == ti {
				continue
			}
			if explained, err = explained.add(Delta{{Addr: a.Recipient, Token: t.Token, Amount: Signed{Neg: fi, Abs: t.Amount}}}); err != nil {
				return err
			}
		}
	}
	for _, n := range a.NF.Children {
		if n.Chain != nil && n.Chain.Rule == Complementary {
			x, err := a.atCoalition(n.Chain, &xBufs)
			if err != nil {
				return err
			}
			if explained, err = explained.add(x); err != nil {
				return err
			}
		}
	}
	for _, t := range a.Leftover {
		if inCo(t.To) && !inCo(t.From) {
			if explained, err = explained.add(Delta{{Addr: a.Recipient, Token: t.Token, Amount: Signed{Abs: t.Amount}}}); err != nil {
				return err
			}
		}
	}
	a.Explained = explained.keep()
	a.costs(cfg, inCycle)
	// Gross: the coalition's balance over every transfer, with the
	// builder payments charged as costs and the payouts added back.
	gross, err := a.flat(deltaAcc{bufs: &gBufs})
	if err != nil {
		return err
	}
	if !a.Costs.Builder.IsZero() {
		if gross, err = gross.add(Delta{{Addr: a.Recipient, Token: NativeToken, Amount: Signed{Abs: a.Costs.Builder}}}); err != nil {
			return err
		}
	}
	for _, t := range a.Payouts {
		if gross, err = gross.add(Delta{{Addr: a.Recipient, Token: t.Token, Amount: Signed{Abs: t.Amount}}}); err != nil {
			return err
		}
	}
	a.Gross = gross.keep()
	// The folded balances, the negation and final are read here only:
	// made in stack buffers (an append past one moves to the heap).
	var gBuf, eBuf, nBuf, fBuf [4]DeltaEntry
	grossF, err := cfg.FoldInto(gBuf[:0], a.Gross)
	if err != nil {
		return err
	}
	explainedF, err := cfg.FoldInto(eBuf[:0], a.Explained)
	if err != nil {
		return err
	}
	a.Unexplained, err = grossF.Sum(negateInto(nBuf[:0], explainedF))
	if err != nil {
		return err
	}
	final := explainedF
	costsD := Delta{{Addr: a.Recipient, Token: NativeToken, Amount: Signed{Neg: true, Abs: a.Costs.Total}}}
	if a.Costs.Known {
		if a.Net, err = grossF.Sum(costsD); err != nil {
			return err
		}
		if final, err = sumInto(fBuf[:0], explainedF, costsD); err != nil {
			return err
		}
	}
	counted := len(a.Detections)
	// Reasons, in the order of Algorithm 4, then flowq's: gathered on the
	// stack, kept at their length.
	var rBuf [16]Reason
	r := rBuf[:0]
	add := func(x Reason) { r = append(r, x) }
	if counted == 0 {
		add(ReasonNoCycles)
	}
	if mixed(explainedF) {
		add(ReasonBalanceMixed)
	}
	if a.Costs.Known {
		if nat := final.At(a.Recipient, NativeToken); nat.Sign() <= 0 {
			add(ReasonNegProfit)
		}
	}
	if mixed(final) {
		add(ReasonFinalMixed)
	}
	if negative(final) {
		add(ReasonFinalNeg)
	}
	if len(a.Leftover) > 0 {
		add(ReasonLeftovers)
	}
	if !a.Costs.Known {
		add(ReasonCostsUnknown)
	}
	if inner > 0 {
		add(ReasonInnerCycle)
	}
	if promoted {
		add(ReasonPromoted)
	}
	if selfCall {
		add(ReasonSelfCall)
	}
	if !a.Costs.Builder.IsZero() {
		add(ReasonBuilder)
	}
	if len(a.Payouts) > 0 {
		add(ReasonPayout)
	}
	if len(a.Unexplained) > 0 && len(a.Detections) > 0 {
		add(ReasonUnexplained)
	}
	if a.unwitnessed > 0 {
		add(ReasonUnwitnessed)
	}
	if counted > 0 && a.Tx.Mode() == ModeReceipts {
		add(ReasonReceiptsOnly)
	}
	if cfg.touchesPoolManager(a.Tx) {
		add(ReasonV4Netted)
	}
	if len(r) > 0 {
		a.Reasons = append([]Reason(nil), r...)
	}
	has := func(x Reason) bool {
		for _, y := range r {
			if y == x {
				return true
			}
		}
		return false
	}
	// Verdict, strict priority.
	switch {
	case has(ReasonNoCycles) && has(ReasonUnwitnessed):
		// A candidate without a Definition 5 witness (a promoted cycle
		// that gains only when ETH and WETH are summed, say) is never an
		// arbitrage; it is not nothing either.
		a.Verdict, a.Tier = VerdictWarning, TierUncertain
	case has(ReasonNoCycles):
		a.Verdict, a.Tier = VerdictNone, TierNone
	case has(ReasonLeftovers):
		a.Verdict, a.Tier = VerdictWarning, TierProbable
	case has(ReasonFinalNeg):
		a.Verdict, a.Tier = VerdictWarning, TierAttempted
	case has(ReasonFinalMixed):
		a.Verdict, a.Tier = VerdictWarning, TierUncertain
	case has(ReasonCostsUnknown):
		a.Verdict, a.Tier = VerdictWarning, TierProbable
	default:
		a.Verdict, a.Tier = VerdictArbitrage, TierConfirmed
	}
	return nil
}
