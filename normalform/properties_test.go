package normalform_test

import (
	"math/rand"
	"strings"
	"testing"

	. "github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
	"github.com/flowq/flowq/normalform/show"
)

func TestPropertiesOnRandomTrees(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	cfg := DefaultConfig()
	counts := map[Verdict]int{}
	for i := 0; i < 3000; i++ {
		tx := gen.RandomTx(r, false)
		if err := CheckProperties(tx, cfg); err != nil {
			var b strings.Builder
			show.WriteTree(cfg, &b, tx.Root)
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
		tx := gen.RandomTx(r, true)
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

func TestRandomRoutes(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	cfg := DefaultConfig()
	found, gains := 0, 0
	for i := 0; i < 2000; i++ {
		tx, gross := gen.RandomRoute(r)
		if err := CheckProperties(tx, cfg); err != nil {
			t.Fatalf("route %d: %v", i, err)
		}
		a, _ := Analyze(tx, cfg)
		g, _ := cfg.Fold(a.Gross)
		got := g.At(a.Recipient, NativeToken)
		if gross > 0 {
			gains++
			if a.Verdict == VerdictNone || got.Neg || got.Abs.Uint64() != uint64(gross)*1e18 {
				var b strings.Builder
				show.WriteTree(cfg, &b, tx.Root)
				show.WriteAnalysis(cfg, &b, a, true)
				t.Fatalf("route %d gains %d WETH: verdict %s, gross %s\n%s", i, gross, a.Verdict, got, b.String())
			}
			found++
		} else if a.Verdict != VerdictNone && len(a.Leftover) == 0 {
			var b strings.Builder
			show.WriteAnalysis(cfg, &b, a, true)
			t.Fatalf("route %d loses %d WETH but verdict is %s\n%s", i, -gross, a.Verdict, b.String())
		}
	}
	t.Logf("%d of %d gaining routes found with their exact gross", found, gains)
}
