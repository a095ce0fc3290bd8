package normalform

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/holiman/uint256"
)

// randomTx builds a random T0: nested frames, transfers among a few
// addresses in a few tokens (WETH and ETH among them), some mints, burns
// and zero amounts.
func randomTx(r *rand.Rand, huge bool) *Tx {
	names := []string{"EOA", "SC", "P1", "P2", "P3", "WETH"}
	tokens := []string{"WETH", "ETH", "USDC", "DAI"}
	b := &tb{}
	var frame func(depth int, from, to string) *Node
	frame = func(depth int, from, to string) *Node {
		var kids []*Node
		for i := r.Intn(5); i >= 0; i-- {
			if depth < 4 && r.Intn(3) == 0 {
				kids = append(kids, frame(depth+1, to, names[r.Intn(len(names))]))
				continue
			}
			s, d := names[r.Intn(len(names))], names[r.Intn(len(names))]
			amount := fmt.Sprint(r.Intn(4))
			if r.Intn(3) == 0 {
				amount += ".5"
			}
			var flags []string
			switch r.Intn(8) {
			case 0:
				flags = append(flags, "mint")
			case 1:
				flags = append(flags, "burn")
			}
			n := b.t(s, d, amount, tokens[r.Intn(len(tokens))], names[r.Intn(len(names))], flags...)
			if huge {
				n.Leaf.Amount = *new(uint256.Int).SetAllOne()
			}
			kids = append(kids, n)
		}
		return b.f(from, to, kids...)
	}
	gas := uint64(0)
	if r.Intn(2) == 0 {
		gas = 21000
	}
	return b.tx("EOA", "SC", gas, frame(0, "EOA", "SC"))
}

func TestPropertiesOnRandomTrees(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	cfg := DefaultConfig()
	counts := map[Verdict]int{}
	for i := 0; i < 3000; i++ {
		tx := randomTx(r, false)
		if err := CheckProperties(tx, cfg); err != nil {
			var b strings.Builder
			cfg.WriteTree(&b, tx.Root)
			t.Fatalf("random tree %d: %v\n%s", i, err, b.String())
		}
		a, _ := Analyze(tx, cfg)
		counts[a.Verdict]++
	}
	t.Logf("verdicts over 3000 random trees: %v", counts)
	if counts[VerdictArbitrage]+counts[VerdictWarning] == 0 {
		t.Error("random trees never produced a cycle: the generator is too weak to test anything")
	}
}

// Amounts at 2^256-1 overflow balances: Analyze must report it, never
// panic nor wrap around.
func TestAdversarialAmounts(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	overflowed := 0
	for i := 0; i < 300; i++ {
		tx := randomTx(r, true)
		_, err := Analyze(tx, DefaultConfig())
		if err != nil {
			if !strings.Contains(err.Error(), "exceeds 256 bits") {
				t.Fatalf("unexpected error: %v", err)
			}
			overflowed++
		}
	}
	if overflowed == 0 {
		t.Error("no random tree with maximal amounts overflowed: the test exercises nothing")
	}
}

// randomRoute builds a random arbitrage-shaped transaction: the bot SC
// sends WETH through 2–4 pools (each hop pool-to-pool or back through SC),
// each pool's payout in its own frame, optionally wrapped in a flash loan,
// optionally funded by a wrap of ETH; the last pool returns WETH to SC. It
// returns the transaction and the route's gross (out − in, in WETH).
func randomRoute(r *rand.Rand) (*Tx, int64) {
	b := &tb{}
	hops := 2 + r.Intn(3)
	tokens := []string{"WETH", "T1", "T2", "T3", "T4"}
	in := int64(100 + r.Intn(50))
	out := in + int64(r.Intn(21)-5) // gain or loss
	var kids []*Node
	if r.Intn(3) == 0 { // fund by wrapping ETH
		kids = append(kids, b.f("SC", "WETH", b.t("SC", "WETH", fmt.Sprint(in), "ETH", "SC"), b.t("WETH", "SC", fmt.Sprint(in), "WETH", "SC", "mint")))
	}
	kids = append(kids, b.t("SC", "Pool0", fmt.Sprint(in), "WETH", "SC"))
	for h := 0; h < hops; h++ {
		pool := fmt.Sprintf("Pool%d", h)
		next := fmt.Sprintf("Pool%d", h+1)
		tokOut, amt := tokens[h+1], fmt.Sprint(1000*(h+1))
		if h == hops-1 {
			tokOut, amt = "WETH", fmt.Sprint(out)
			next = "SC"
		}
		viaSC := h < hops-1 && r.Intn(2) == 0
		dst := next
		if viaSC {
			dst = "SC"
		}
		frameKids := []*Node{b.t(pool, dst, amt, tokOut, pool)}
		if r.Intn(2) == 0 {
			frameKids = append(frameKids, b.static(pool, tokOut))
		}
		kids = append(kids, b.f("SC", pool, frameKids...))
		if viaSC {
			kids = append(kids, b.t("SC", next, amt, tokOut, "SC"))
		}
	}
	if r.Intn(3) == 0 { // flash loan around the route
		loan := []*Node{b.t("Lender", "SC", "500", "WETH", "Lender"), b.f("Lender", "SC", kids...), b.t("SC", "Lender", "500", "WETH", "Lender")}
		kids = []*Node{b.f("SC", "Lender", loan...)}
	}
	return b.tx("EOA", "SC", 0, b.f("EOA", "SC", kids...)), out - in
}

func TestRandomRoutes(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	cfg := DefaultConfig()
	found, gains := 0, 0
	for i := 0; i < 2000; i++ {
		tx, gross := randomRoute(r)
		if err := CheckProperties(tx, cfg); err != nil {
			t.Fatalf("route %d: %v", i, err)
		}
		a, _ := Analyze(tx, cfg)
		g, _ := fold(cfg, a.Gross)
		got := g.At(a.Recipient, NativeToken)
		if gross > 0 {
			gains++
			if a.Verdict == VerdictNone || got.Neg || got.Abs.Uint64() != uint64(gross)*1e18 {
				var b strings.Builder
				cfg.WriteTree(&b, tx.Root)
				cfg.WriteAnalysis(&b, a, true)
				t.Fatalf("route %d gains %d WETH: verdict %s, gross %s\n%s", i, gross, a.Verdict, got, b.String())
			}
			found++
		} else if a.Verdict != VerdictNone && len(a.Leftover) == 0 {
			var b strings.Builder
			cfg.WriteAnalysis(&b, a, true)
			t.Fatalf("route %d loses %d WETH but verdict is %s\n%s", i, -gross, a.Verdict, b.String())
		}
	}
	t.Logf("%d of %d gaining routes found with their exact gross", found, gains)
}
