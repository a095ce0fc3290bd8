package normalform_test

// The trees of the detection property test (detect_property_test.go), what
// the paper's fixpoint alone would say of them, and a digest of the
// fixpoint's normal forms. This file uses only what commit e08599a (before
// the stage after the fixpoint) already had, so that it compiles there
// unchanged: that is how fixpointDigests were recorded, and how
// paperVerdict was checked against the engine of e08599a, tree by tree
// (see fixpointDigests).

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"math/big"
	"math/rand"
	"sort"
	"strings"

	. "github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
)

// propertySeed seeds the generated trees; fixpointDigests depend on it.
const propertySeed = 14

// propertyKinds are the kinds of generated trees and their weights (out
// of 100): the package's random trees and routes, and shapes of issue 14
// with random sizes, amounts, unwind orders, entries and tails.
var propertyKinds = []struct {
	name   string
	weight int
	build  func(r *rand.Rand) *Tx
}{
	{"random", 28, func(r *rand.Rand) *Tx { return gen.RandomTx(r, false) }},
	{"route", 10, func(r *rand.Rand) *Tx { tx, _ := gen.RandomRoute(r); return tx }},
	{"cascade", 22, cascadeTx},
	{"txR", 4, txRTx},
	{"poolFirst", 10, poolFirstTx},
	{"wrapBot", 10, wrapBotTx},
	{"cycleBot", 10, cycleBotTx},
	{"lender", 3, lenderTx},
	{"feeRouter", 3, feeRouterTx},
}

// propertyTree draws one tree and names its kind.
func propertyTree(r *rand.Rand) (string, *Tx) {
	x := r.Intn(100)
	for _, k := range propertyKinds {
		if x < k.weight {
			return k.name, k.build(r)
		}
		x -= k.weight
	}
	panic("weights do not sum to 100")
}

// micro renders an amount in millionths of a unit (18 decimals in T0).
func micro(m int64) string {
	if m < 0 {
		panic(fmt.Sprintf("negative amount %d", m))
	}
	return fmt.Sprintf("%d.%06d", m/1e6, m%1e6)
}

// between draws an amount in [lo, hi] millionths.
func between(r *rand.Rand, lo, hi int64) int64 { return lo + r.Int63n(hi-lo+1) }

// split draws n positive parts of total (total ≥ n).
func split(r *rand.Rand, total int64, n int) []int64 {
	cuts := []int64{0, total}
	for i := 1; i < n; i++ {
		cuts = append(cuts, 1+r.Int63n(total-1))
	}
	sort.Slice(cuts, func(i, j int) bool { return cuts[i] < cuts[j] })
	out := make([]int64, n)
	for i := range out {
		out[i] = cuts[i+1] - cuts[i]
		if out[i] == 0 { // two equal cuts: the sum is then off by a millionth
			out[i] = 1
		}
	}
	return out
}

// gasUsed: no receipt one time in five, else 21,000–300,000 gas (at 1
// gwei: at most 0.0003 ETH).
func gasUsed(r *rand.Rand) uint64 {
	if r.Intn(5) == 0 {
		return 0
	}
	return uint64(between(r, 21000, 300000))
}

// gainOf draws the bot's gain on a cycle of size w: mostly positive, at
// times tiny (below the gas), zero or a loss.
func gainOf(r *rand.Rand, w int64) int64 {
	switch r.Intn(8) {
	case 0:
		return -between(r, 1, w/10)
	case 1:
		return 0
	case 2:
		return between(r, 1, 400) // at most 0.0004: about the gas
	}
	return between(r, 1, w/5)
}

// entry is how the EOA reaches the bot: it calls the bot (the recipient),
// or a controller that calls it (the bot is then an inner address), or
// two controllers. It returns the root frame and the recipient.
func entry(b *gen.Builder, r *rand.Rand, bot string, kids ...*Node) (*Node, string) {
	switch r.Intn(6) {
	case 4:
		return b.F("EOA", "Ctl", b.F("Ctl", bot, kids...)), "Ctl"
	case 5:
		return b.F("EOA", "Ctl", b.F("Ctl", "Ctl2", b.F("Ctl2", bot, kids...))), "Ctl"
	}
	return b.F("EOA", bot, kids...), bot
}

// tail is what a bot does with a gain g (in WETH) after its cycle: unwrap
// part of it, tip the builder, pay its owner (in ETH or WETH) or the EOA;
// each at random, at times more than the gain.
func tail(b *gen.Builder, r *rand.Rand, bot string, g int64) []*Node {
	if g < 1000 {
		g = 1000
	}
	var out []*Node
	eth := int64(0)
	if r.Intn(2) == 0 {
		eth = between(r, 1, g)
		out = append(out, b.F(bot, "WETH", b.T(bot, "WETH", micro(eth), "WETH", bot, "burn"),
			b.F("WETH", bot, b.T("WETH", bot, micro(eth), "ETH", "WETH"))))
	}
	if eth > 0 && r.Intn(2) == 0 {
		tip := between(r, 1, eth)
		eth -= tip
		out = append(out, b.F(bot, "builder", b.T(bot, "builder", micro(tip), "ETH", bot)))
	}
	if r.Intn(2) == 0 {
		to := "Owner"
		if r.Intn(4) == 0 {
			to = "EOA"
		}
		tok, amt := "WETH", between(r, 1, g)
		if eth > 0 && r.Intn(2) == 0 {
			tok, amt = "ETH", between(r, 1, eth)
		}
		out = append(out, b.F(bot, to, b.T(bot, to, micro(amt), tok, bot)))
	}
	return out
}

// pay is a transfer by the bot from its own frame on the token.
func pay(b *gen.Builder, bot, to, tok string, amt int64) *Node {
	return b.F(bot, tok, b.T(bot, to, micro(amt), tok, bot))
}

// noise inserts one or two stray transfers, among the shape's addresses
// and tokens, into random call frames of root, one tree in five.
func noise(b *gen.Builder, r *rand.Rand, root *Node, names, toks []string) {
	if r.Intn(5) != 0 {
		return
	}
	var frames []*Node
	var walk func(n *Node)
	walk = func(n *Node) {
		if n.Frame != nil && n.Frame.Type == Call {
			frames = append(frames, n)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(root)
	for i := 1 + r.Intn(2); i > 0; i-- {
		f := frames[r.Intn(len(frames))]
		from, to := names[r.Intn(len(names))], names[r.Intn(len(names))]
		leaf := b.T(from, to, micro(between(r, 1, 2e6)), toks[r.Intn(len(toks))], names[r.Intn(len(names))])
		at := r.Intn(len(f.Children) + 1)
		f.Children = append(f.Children[:at], append([]*Node{leaf}, f.Children[at:]...)...)
	}
}

// cascadeTx: V2 flash-swap cascades converging on one Z/WETH pool (the
// hub), after tx_R and the scenarios' FlashCascade. Loan 0: the hub pays
// the bot W WETH first; then, per arm i, X_i/Z pays Z and X_i/WETH pays X_i,
// each loan taken in the previous loan's callback. Repayments: the hub in
// Z (in one payment or one per arm), X_i/Z in X_i, X_i/WETH in WETH; each
// inside its own loan's callback once the bot holds what it owes, at the
// end of its own callback (first lent, last repaid), as early as it can
// (first lent, first repaid), or anywhere in between. The bot keeps W less
// what it paid the X_i/WETH pools.
func cascadeTx(r *rand.Rand) *Tx {
	b := &gen.Builder{}
	bot := "Bot"
	k := 1 + r.Intn(5)
	w := between(r, 100000, 2000000)
	g := gainOf(r, w)
	ws := split(r, w-g, k)
	type loan struct {
		pair, tok string
		amt       int64
	}
	type payment struct {
		to, tok  string
		amt      int64
		loan     int // the loan it repays
		earliest int // the first callback in which the bot holds it
	}
	loans := []loan{{"Z/WETH", "WETH", w}}
	var pays []payment
	var zsum int64
	oneHubPayment := r.Intn(2) == 0
	for i := 0; i < k; i++ {
		x := fmt.Sprintf("X%d", i)
		z, xa := between(r, 1e6, 500e6), between(r, 1e6, 500e6)
		zsum += z
		loans = append(loans, loan{x + "/Z", "Z", z}, loan{x + "/WETH", x, xa})
		if !oneHubPayment {
			pays = append(pays, payment{"Z/WETH", "Z", z, 0, 1 + 2*i})
		}
		pays = append(pays, payment{x + "/Z", x, xa, 1 + 2*i, 2 + 2*i}, payment{x + "/WETH", "WETH", ws[i], 2 + 2*i, 2 + 2*i})
	}
	if oneHubPayment {
		pays = append(pays, payment{"Z/WETH", "Z", zsum, 0, 2*k - 1})
	}
	pre := make([][]*Node, len(loans))
	post := make([][]*Node, len(loans))
	mode := r.Intn(3)
	if mode == 2 {
		r.Shuffle(len(pays), func(i, j int) { pays[i], pays[j] = pays[j], pays[i] })
	}
	for _, p := range pays {
		n := pay(b, bot, p.to, p.tok, p.amt)
		first := max(p.loan, p.earliest)
		switch mode {
		case 0: // first lent, last repaid
			post[p.loan] = append(post[p.loan], n)
		case 1: // first lent, first repaid
			pre[first] = append(pre[first], n)
		default:
			m := first + r.Intn(len(loans)-first)
			if r.Intn(2) == 0 {
				pre[m] = append(pre[m], n)
			} else {
				post[m] = append(post[m], n)
			}
		}
	}
	var build func(j int) *Node
	build = func(j int) *Node {
		l := loans[j]
		cb := append([]*Node{}, pre[j]...)
		if j+1 < len(loans) {
			cb = append(cb, build(j+1))
		}
		cb = append(cb, post[j]...)
		return b.F(bot, l.pair, b.T(l.pair, bot, micro(l.amt), l.tok, l.pair), b.F(l.pair, bot, cb...), b.Static(l.pair, l.tok))
	}
	kids := append([]*Node{build(0)}, tail(b, r, bot, g)...)
	root, to := entry(b, r, bot, kids...)
	noise(b, r, root, []string{"EOA", bot, "Z/WETH", "X0/Z", "X0/WETH", "Owner"}, []string{"WETH", "ETH", "Z", "X0"})
	return b.Tx("EOA", to, gasUsed(r), root)
}

// txRTx: the paper's tx_R with 1–5 random arms; the hub lends 0.0598 WETH.
func txRTx(r *rand.Rand) *Tx {
	b := &gen.Builder{}
	var arms [][2]string
	for i := r.Intn(5); i >= 0; i-- {
		arms = append(arms, [2]string{fmt.Sprintf("ARM%d", i), micro(between(r, 1000, 30000))})
	}
	return b.Tx("EOA", "SC", gasUsed(r), gen.TxR(b, arms, "BEAN", "BEAN/WETH"))
}

// hops runs a token from the bot through 1–3 pools, starting with a
// payment of amt tok to the first pool; the last pool pays last (in
// lastTok, lastAmt). Each pool pays from its own frame, to the next pool
// or back through the bot.
func hops(b *gen.Builder, r *rand.Rand, bot, tok string, amt int64, last, lastTok string, lastAmt int64) []*Node {
	n := 1 + r.Intn(3)
	kids := []*Node{pay(b, bot, "P1", tok, amt)}
	for h := 1; h <= n; h++ {
		pool, next := fmt.Sprintf("P%d", h), fmt.Sprintf("P%d", h+1)
		t, a := fmt.Sprintf("T%d", h), between(r, 1e6, 900e6)
		if h == n {
			next, t, a = last, lastTok, lastAmt
		}
		if h < n && r.Intn(3) == 0 { // through the bot
			kids = append(kids, b.F(bot, pool, b.T(pool, bot, micro(a), t, pool), b.Static(pool, t)), pay(b, bot, next, t, a))
			continue
		}
		kids = append(kids, b.F(bot, pool, b.T(pool, next, micro(a), t, pool), b.Static(pool, t)))
	}
	return kids
}

// poolFirstTx: a pool lends the executor WETH first; the executor sells
// part of it through other pools, the last of which repays the lender in
// USDC (or the executor does, with USDC it received); then the tail.
func poolFirstTx(r *rand.Rand) *Tx {
	b := &gen.Builder{}
	bot := "Exec"
	lent := between(r, 100000, 5e6)
	g := gainOf(r, lent)
	sold := lent - g
	usdc := between(r, 100e6, 9000e6)
	var inner []*Node
	if r.Intn(3) == 0 {
		inner = append(hops(b, r, bot, "WETH", sold, bot, "USDC", usdc), pay(b, bot, "Pool1", "USDC", usdc))
	} else {
		inner = hops(b, r, bot, "WETH", sold, "Pool1", "USDC", usdc)
	}
	kids := []*Node{b.F(bot, "Pool1", b.T("Pool1", bot, micro(lent), "WETH", "Pool1"), b.F("Pool1", bot, inner...), b.Static("Pool1", "USDC"))}
	kids = append(kids, tail(b, r, bot, g)...)
	root, to := entry(b, r, bot, kids...)
	noise(b, r, root, []string{"EOA", bot, "Pool1", "P1", "P2", "Owner"}, []string{"WETH", "ETH", "USDC", "T1"})
	return b.Tx("EOA", to, gasUsed(r), root)
}

// wrapBotTx: the sender's ETH in, wrapped, cycled through pools, unwrapped,
// the principal returned (all, part or none), the builder tipped (or not).
func wrapBotTx(r *rand.Rand) *Tx {
	b := &gen.Builder{}
	bot := "Bot"
	p := between(r, 100000, 5e6)
	g := gainOf(r, p)
	back := p + g
	kids := []*Node{
		b.T("EOA", bot, micro(p), "ETH", "EOA"),
		b.F(bot, "WETH", b.T(bot, "WETH", micro(p), "ETH", bot), b.T("WETH", bot, micro(p), "WETH", bot, "mint")),
	}
	kids = append(kids, hops(b, r, bot, "WETH", p, bot, "WETH", back)...)
	kids = append(kids, b.F(bot, "WETH", b.T(bot, "WETH", micro(back), "WETH", bot, "burn"), b.F("WETH", bot, b.T("WETH", bot, micro(back), "ETH", "WETH"))))
	switch r.Intn(4) {
	case 0:
	case 1:
		kids = append(kids, b.F(bot, "EOA", b.T(bot, "EOA", micro(between(r, 1, p)), "ETH", bot)))
	default:
		kids = append(kids, b.F(bot, "EOA", b.T(bot, "EOA", micro(p), "ETH", bot)))
	}
	if r.Intn(2) == 0 {
		kids = append(kids, b.F(bot, "builder", b.T(bot, "builder", micro(between(r, 1, max(g, 1000))), "ETH", bot)))
	}
	root := b.F("EOA", bot, kids...)
	noise(b, r, root, []string{"EOA", bot, "P1", "P2", "builder"}, []string{"WETH", "ETH", "T1"})
	return b.Tx("EOA", bot, gasUsed(r), root)
}

// cycleBotTx: a bot (or an executor behind controllers) cycles WETH of its
// own through pools and keeps the gain; then the tail.
func cycleBotTx(r *rand.Rand) *Tx {
	b := &gen.Builder{}
	bot := "Exec"
	w := between(r, 100000, 5e6)
	g := gainOf(r, w)
	kids := hops(b, r, bot, "WETH", w, bot, "WETH", w+g)
	kids = append(kids, tail(b, r, bot, g)...)
	root, to := entry(b, r, bot, kids...)
	noise(b, r, root, []string{"EOA", bot, "Ctl", "P1", "P2", "Owner"}, []string{"WETH", "ETH", "T1"})
	return b.Tx("EOA", to, gasUsed(r), root)
}

// lenderTx: a lender sends WETH to a borrower, which swaps it through pools
// and repays the lender with a fee.
func lenderTx(r *rand.Rand) *Tx {
	b := &gen.Builder{}
	l := between(r, 100000, 5e6)
	fee := between(r, 1, l/100+1)
	back := l - between(r, 0, l/10)
	inner := append(hops(b, r, "Borrower", "WETH", l, "Borrower", "WETH", back), pay(b, "Borrower", "Lender", "WETH", l+fee))
	root := b.F("EOA", "Borrower", b.F("Borrower", "Lender",
		b.F("Lender", "WETH", b.T("Lender", "Borrower", micro(l), "WETH", "Lender")),
		b.F("Lender", "Borrower", inner...), b.Static("Lender", "WETH")))
	noise(b, r, root, []string{"EOA", "Borrower", "Lender", "P1"}, []string{"WETH", "ETH", "T1"})
	return b.Tx("EOA", "Borrower", gasUsed(r), root)
}

// feeRouterTx: a user swaps USDC for WETH through a router that keeps part
// of the USDC.
func feeRouterTx(r *rand.Rand) *Tx {
	b := &gen.Builder{}
	in := between(r, 100e6, 9000e6)
	kept := between(r, 1, in/100)
	root := b.F("User", "Router",
		b.F("Router", "USDC", b.T("User", "Router", micro(in), "USDC", "Router")),
		b.F("Router", "USDC", b.T("Router", "Pool", micro(in-kept), "USDC", "Router")),
		b.F("Router", "Pool", b.T("Pool", "User", micro(between(r, 1e4, 4e6)), "WETH", "Pool"), b.Static("Pool", "WETH")))
	noise(b, r, root, []string{"User", "Router", "Pool"}, []string{"WETH", "USDC"})
	return b.Tx("User", "Router", gasUsed(r), root)
}

// --- what the paper's fixpoint alone says ------------------------------------

// paperVerdict is the verdict of the engine before the stage after the
// fixpoint (commit e08599a: Algorithm 4 over the fixpoint's labels and
// the promotion path), computed from the normal form: the cycles R14 (or
// the promotion) labelled arbitrage at a principal are counted; gross at
// the principals is their balance there, with the complementary leftover
// cycles and the leftovers received; every leaf left at the root other
// than a principal's native payment to the coinbase is a leftover; costs
// are gas and those payments outside counted cycles. Arbitrage when a
// cycle is counted, nothing is left over, costs are known and the net
// has a positive component and no negative one; none when no cycle is
// labelled arbitrage anywhere; else warning.
func paperVerdict(a *Analysis, cfg *Config) Verdict {
	tx := a.Tx
	m := &tx.Meta
	if tx.Root == nil || a.NF == nil {
		return VerdictNone
	}
	principal := func(x Address) bool { return x == a.Recipient || (m.HasFrom && x == m.From) }
	builder := func(t *Transfer) bool {
		return m.HasHeader && t.Token.Kind == Native && t.To == m.Miner && principal(t.From)
	}
	net := map[Token]*big.Int{}
	add := func(tok Token, amt *big.Int, neg bool) {
		if tok.Kind == Fungible && cfg.IsWrappedNative(tok.Addr) {
			tok = NativeToken
		}
		if net[tok] == nil {
			net[tok] = new(big.Int)
		}
		if neg {
			net[tok].Sub(net[tok], amt)
		} else {
			net[tok].Add(net[tok], amt)
		}
	}
	atPrincipals := func(c *Chain) {
		for _, t := range c.Transfers(nil) {
			in, out := principal(t.To), principal(t.From)
			if in != out {
				add(t.Token, t.Amount.ToBig(), out)
			}
		}
	}
	counted, inner := 0, 0
	inCycle := map[int32]bool{}
	for _, c := range a.Cycles {
		if c.Label != Arbitrage {
			continue
		}
		if !principal(c.Origin()) {
			inner++
			continue
		}
		counted++
		for _, t := range c.Transfers(nil) {
			inCycle[t.Pos] = true
		}
		atPrincipals(c)
	}
	leftovers := 0
	for _, n := range a.NF.Children {
		if n.Chain != nil && n.Chain.Rule == Complementary {
			atPrincipals(n.Chain)
		}
		if n.Leaf != nil && !builder(n.Leaf) {
			leftovers++
			if principal(n.Leaf.To) && !principal(n.Leaf.From) {
				add(n.Leaf.Token, n.Leaf.Amount.ToBig(), false)
			}
		}
	}
	if counted == 0 && inner == 0 {
		return VerdictNone
	}
	if counted == 0 || leftovers > 0 || !m.HasReceipt {
		return VerdictWarning
	}
	costs := new(big.Int).Mul(new(big.Int).SetUint64(m.GasUsed), m.EffectiveGasPrice.ToBig())
	for i := range tx.Transfers {
		if t := &tx.Transfers[i]; builder(t) && !inCycle[t.Pos] {
			costs.Add(costs, t.Amount.ToBig())
		}
	}
	add(NativeToken, costs, true)
	pos, neg := false, false
	for _, v := range net {
		pos = pos || v.Sign() > 0
		neg = neg || v.Sign() < 0
	}
	if pos && !neg {
		return VerdictArbitrage
	}
	return VerdictWarning
}

// fixpointRecord writes what the fixpoint says of one tree into h: the
// normal form's exact canonical text, its four hashes, the passes, the
// step log, each cycle's label and promotion, and the paper's verdict.
func fixpointRecord(h hash.Hash, a *Analysis, v Verdict) {
	var b strings.Builder
	b.WriteString(a.Canonical(Exact))
	hs := a.Hashes()
	fmt.Fprintf(&b, "\x00%x %x %x %x\x00%d\x00", hs.Exact, hs.Shape, hs.Tokens, hs.Family, a.Passes)
	for _, s := range a.Steps {
		if s.Rule == Detect {
			continue // the stage's own steps, after the fixpoint's
		}
		b.WriteString(s.String())
		b.WriteByte('\n')
	}
	for _, c := range a.Cycles {
		fmt.Fprintf(&b, "C%d %s %v;", c.ID, c.Label, c.Promoted)
	}
	fmt.Fprintf(&b, "\x00%s\x01", v)
	h.Write([]byte(b.String()))
}

// newDigest starts the digest of fixpointRecords.
func newDigest() hash.Hash { return sha256.New() }
