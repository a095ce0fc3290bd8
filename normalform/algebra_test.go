package normalform_test

import (
	"strings"
	"testing"

	. "github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
)

func star(t *testing.T, arms [][2]string, conv, hub string) *Analysis {
	t.Helper()
	b := &gen.Builder{}
	return analyze(t, b.Tx("EOA", "SC", 0, gen.TxR(b, arms, conv, hub)))
}

var (
	txRArms = [][2]string{{"CHAD", "0.0125"}, {"DUCK", "0.0333"}, {"MOON", "0.0117"}}
	txSArms = [][2]string{{"PUPPIES", "0.009"}, {"TERMINUS", "0.009"}, {"TOMOE", "0.009"}, {"YFI", "0.009"}, {"CPOOL", "0.009"}, {"ZETA", "0.009"}}
)

func TestTermsOfTxR(t *testing.T) {
	a := star(t, txRArms, "BEAN", "BEAN/WETH")
	terms := a.RenderTerms(DefaultConfig())
	if len(terms) != 1 || !strings.HasPrefix(terms[0], "Star@") {
		t.Fatalf("terms %v", terms)
	}
	// Star(WETH, (Swap∘Swap) ∥ (Swap∘Swap) ∥ (Swap∘Swap), WETH)
	if got := a.Canonical(Family); got != "Star(⋆, Swap(⋆,⋆), ⋆)" {
		t.Errorf("sk(tx_R) = %q, want the paper's Star(⋆, Swap(⋆,⋆), ⋆)", got)
	}
	shape := a.Canonical(Shape)
	if strings.Count(shape, "∥") != 2 || strings.Count(shape, "Swap@") != 6 {
		t.Errorf("shape of tx_R should have three arms of two swaps: %s", shape)
	}
	t.Logf("tx_R: %s\nshape: %s", terms[0], shape)
}

func TestEquivalenceLevels(t *testing.T) {
	r := star(t, txRArms, "BEAN", "BEAN/WETH")
	s := star(t, txSArms, "KABOSU", "KABOSU/WETH")
	r2 := star(t, [][2]string{{"AAA", "0.02"}, {"BBB", "0.02"}, {"CCC", "0.01"}}, "DDD", "DDD/WETH")
	hr, hs, hr2 := r.Hashes(), s.Hashes(), r2.Hashes()
	if hr.Shape == hs.Shape {
		t.Error("tx_R (3 arms) and tx_S (6 arms) must differ in shape")
	}
	if hr.Family != hs.Family {
		t.Errorf("tx_R and tx_S must share one family:\n%s\n%s", r.Canonical(Family), s.Canonical(Family))
	}
	if hr.Shape != hr2.Shape {
		t.Errorf("two three-arm stars through other tokens and pools must share one shape:\n%s\n%s", r.Canonical(Shape), r2.Canonical(Shape))
	}
	if hr.Tokens == hr2.Tokens || hr.Exact == hr2.Exact {
		t.Error("other tokens must change the tokens and exact hashes")
	}
	cfg := DefaultConfig()
	for _, x := range []*Analysis{r, s} {
		alpha, conv, ok, flash := x.StarFamily(cfg)
		if !ok || flash || alpha != gen.Tok("WETH") {
			t.Errorf("a star must be in G_{WETH,τ'} and not in the flash-loan extension: ok=%v flash=%v", ok, flash)
		}
		_ = conv
	}
	if _, conv, _, _ := r.StarFamily(cfg); conv != gen.Tok("BEAN") {
		t.Errorf("tx_R converges on BEAN, got %s", conv.Key())
	}
	// Determinism across runs: the same tree hashes the same.
	if star(t, txRArms, "BEAN", "BEAN/WETH").Hashes() != hr {
		t.Error("hashes differ between two analyses of the same tree")
	}
}

// Figure 1 (a) and (b): one strategy routed two ways, one shape.
func TestFigure1OneShape(t *testing.T) {
	ba := &gen.Builder{}
	a := analyze(t, ba.Tx("EOA", "SC", 0, ba.F("EOA", "SC",
		ba.T("SC", "P1", "1", "WETH", "SC"),
		ba.F("SC", "P1", ba.T("P1", "P2", "2940", "USDT", "P1"), ba.Static("P1", "USDT")),
		ba.F("SC", "P2", ba.T("P2", "SC", "1.1", "WETH", "P2"), ba.Static("P2", "WETH")))))
	bb := &gen.Builder{}
	b := analyze(t, bb.Tx("EOA", "SC", 0, bb.F("EOA", "SC",
		bb.T("SC", "P1", "1", "WETH", "SC"),
		bb.F("SC", "P1", bb.T("P1", "SC", "2940", "USDT", "P1"), bb.Static("P1", "USDT")),
		bb.T("SC", "P2", "2940", "USDT", "SC"),
		bb.F("SC", "P2", bb.T("P2", "SC", "1.1", "WETH", "P2"), bb.Static("P2", "WETH")))))
	if a.Hashes().Shape != b.Hashes().Shape {
		t.Errorf("Figure 1 (a) and (b) should share one shape:\n%s\n%s", a.Canonical(Shape), b.Canonical(Shape))
	}
	if a.Hashes().Exact == b.Hashes().Exact {
		t.Error("their exact forms differ (four transfers against three)")
	}
}

// A flash-loan arbitrage is in G^F and not in G; its family differs from
// the plain star's.
func TestFlashLoanFamily(t *testing.T) {
	b := &gen.Builder{}
	root := b.F("EOA", "Bot", b.F("Bot", "Lender",
		b.T("Lender", "Bot", "100", "WETH", "Lender"),
		b.F("Lender", "Bot",
			b.T("Bot", "P1", "100", "WETH", "Bot"),
			b.F("Bot", "P1", b.T("P1", "Bot", "294000", "USDT", "P1"), b.Static("P1", "USDT")),
			b.T("Bot", "P2", "294000", "USDT", "Bot"),
			b.F("Bot", "P2", b.T("P2", "Bot", "100.5", "WETH", "P2"), b.Static("P2", "WETH"))),
		b.T("Bot", "Lender", "100", "WETH", "Lender")))
	fl := analyze(t, b.Tx("EOA", "Bot", 0, root))
	alpha, _, ok, flash := fl.StarFamily(DefaultConfig())
	if !ok || !flash || alpha != gen.Tok("WETH") {
		t.Fatalf("flash-loan arbitrage: in G=%v, in G^F=%v", ok, flash)
	}
	plain := star(t, txRArms, "BEAN", "BEAN/WETH")
	if fl.Hashes().Family == plain.Hashes().Family || !strings.Contains(fl.Canonical(Family), "LC(⋆)") {
		t.Errorf("the flash-loan family must carry its LC: %s", fl.Canonical(Family))
	}
}

// The hashes are part of the product: stable across runs, machines and
// releases. These values pin AlgebraVersion 1; changing a canonical form
// must bump the version and these values together.
func TestHashStability(t *testing.T) {
	h := star(t, txRArms, "BEAN", "BEAN/WETH").Hashes()
	want := map[string]string{
		"exact":  "0xe44a07c5ce8eacc9a4ff014f8c24264806c34a4b0c0e34eab40bf30846f4baea",
		"shape":  "0x429d0006fe07b38c31dc4bca00ecd0d67755e3d24ca7e4aea858a32400206975",
		"tokens": "0x59dad1634123b0b1afa344684a81751538b2a3e965745ef524f88581757355ee",
		"family": "0xa009e979e2fbd1edc8c7caedfb704dddf9181cfca18dd04059547acf8de47527",
	}
	got := map[string]string{"exact": h.Exact.Hex(), "shape": h.Shape.Hex(), "tokens": h.Tokens.Hex(), "family": h.Family.Hex()}
	for k := range want {
		if want[k] == "" {
			t.Errorf("%s = %s (pin it)", k, got[k])
			continue
		}
		if got[k] != want[k] {
			t.Errorf("%s hash of tx_R changed: %s, pinned %s (bump AlgebraVersion)", k, got[k], want[k])
		}
	}
}
