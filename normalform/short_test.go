package normalform_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	. "github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
	"github.com/flowq/flowq/normalform/show"
)

func TestShortenerForms(t *testing.T) {
	a := common.HexToAddress("0xabcd10000000000000000000000000000003ef12")
	b := common.HexToAddress("0xabcd20000000000000000000000000000004ef12")
	lone := common.HexToAddress("0x1234000000000000000000000000000000005678")
	zeros := common.HexToAddress("0x0000c0ffee000000000000000000000000010000") // 0x0000…0000 at 4+4
	// Two addresses that differ only in their 21st digit: written whole.
	mid1 := common.HexToAddress("0x5555555555555555555515555555555555555555")
	mid2 := common.HexToAddress("0x5555555555555555555525555555555555555555")
	s := NewShortener([]Address{a, b, lone, zeros, mid1, mid2, {}, a})
	for _, c := range []struct {
		addr Address
		want string
	}{
		{a, "0xabcd1…3ef12"},
		{b, "0xabcd2…4ef12"},
		{lone, "0x1234…5678"},
		{zeros, "0x0000c…10000"},
		{mid1, "0x5555555555555555555515555555555555555555"},
		{mid2, "0x5555555555555555555525555555555555555555"},
		{Address{}, "0x0"},
	} {
		if got := s.Short(c.addr); got != c.want {
			t.Errorf("Short(%s) = %s, want %s", AddrKey(c.addr), got, c.want)
		}
	}
	// Without the null address in the set, a real address still never
	// reads as all zeros; alone, an address keeps 4+4.
	s = NewShortener([]Address{zeros})
	if got := s.Short(zeros); got != "0x0000c…10000" {
		t.Errorf("alone: Short(%s) = %s", AddrKey(zeros), got)
	}
	if got := NewShortener(nil).Short(lone); got != "0x1234…5678" {
		t.Errorf("not in the set: %s", got)
	}
	// Rewrite reads a 4+4 form back to the one address that has it.
	s = NewShortener([]Address{a, b, lone, zeros, {}})
	if got := s.Rewrite("x 0x1234…5678, 0xabcd…ef12 and 0x0000…0000"); got != "x 0x1234…5678, 0xabcd…ef12 and 0x0000…0000" {
		t.Errorf("ambiguous forms must stay: %q", got)
	}
	if got := s.Rewrite("δ[0xabcd…ef12] 0x0000…0000", b, Address{}); got != "δ[0xabcd2…4ef12] 0x0" {
		t.Errorf("preferred: %q", got)
	}
	// The null address alone has its form; a lookalike without the null
	// address in the set is the one address of its 4+4 form.
	if got := NewShortener([]Address{{}, lone}).Rewrite("0x0000…0000 0x1234…5678"); got != "0x0 0x1234…5678" {
		t.Errorf("null alone: %q", got)
	}
	if got := NewShortener([]Address{zeros, lone}).Rewrite("0x0000…0000"); got != "0x0000c…10000" {
		t.Errorf("lookalike alone: %q", got)
	}
}

// renameAddrs replaces addresses throughout a transaction.
func renameAddrs(tx *Tx, m map[Address]Address) {
	r := func(a *Address) {
		if x, ok := m[*a]; ok {
			*a = x
		}
	}
	r(&tx.Meta.From)
	r(&tx.Meta.To)
	r(&tx.Meta.Miner)
	for i := range tx.Transfers {
		t := &tx.Transfers[i]
		r(&t.From)
		r(&t.To)
		r(&t.Sender)
		r(&t.Token.Addr)
	}
	var walk func(n *Node)
	walk = func(n *Node) {
		if n == nil {
			return
		}
		if f := n.Frame; f != nil {
			r(&f.From)
			r(&f.To)
			r(&f.Sender)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(tx.Root)
}

var (
	shortForm = regexp.MustCompile(`0x([0-9a-f]{4,19})…([0-9a-f]{4,19})`)
	wholeForm = regexp.MustCompile(`0x[0-9a-f]{40}`)
	nullForm  = regexp.MustCompile(`0x0(?:[^0-9a-fA-Fx…]|$)`)
)

// checkNames checks that every address form printed in out names exactly
// one address of addrs (the null address included), and that want's forms
// are printed.
func checkNames(t *testing.T, what, out string, addrs []Address, want ...string) {
	t.Helper()
	var keys []string
	seen := map[Address]bool{}
	for _, a := range addrs {
		if !seen[a] {
			seen[a] = true
			keys = append(keys, AddrKey(a))
		}
	}
	forms := 0
	bad := map[string]bool{}
	for _, m := range shortForm.FindAllStringSubmatch(out, -1) {
		forms++
		if bad[m[0]] {
			continue
		}
		var hit []string
		for _, k := range keys {
			if strings.HasPrefix(k[2:], m[1]) && strings.HasSuffix(k, m[2]) {
				hit = append(hit, k)
			}
		}
		if len(hit) != 1 {
			bad[m[0]] = true
			t.Errorf("%s: %s names %d addresses of the transaction: %v", what, m[0], len(hit), hit)
		}
	}
	for _, m := range wholeForm.FindAllString(out, -1) {
		forms++
		if !strings.Contains(strings.Join(keys, " "), m) {
			t.Errorf("%s: %s is no address of the transaction", what, m)
		}
	}
	for _, w := range want {
		if w == "0x0" {
			if !nullForm.MatchString(out) {
				t.Errorf("%s: the null address (0x0) is not named", what)
			}
		} else if !strings.Contains(out, w) {
			t.Errorf("%s: %s is not named", what, w)
		}
	}
	if forms == 0 {
		t.Errorf("%s: no address printed", what)
	}
	if t.Failed() {
		t.Log("\n" + out)
	}
}

// One transaction whose bot and cold wallet share the null address's 4+4
// form (0x0000…0000), whose two pools share one another's (0xabcd…ef12),
// and which mints from the null address: every output names each address
// by one form no other shares, and the null address as 0x0.
func TestOutputsNameAddressesApart(t *testing.T) {
	b := &gen.Builder{}
	tx := b.Tx("EOA", "Bot", 100000, b.F("EOA", "Bot",
		b.F("Bot", "WETH", b.T("Bot", "P1", "1", "WETH", "Bot")),
		b.F("Bot", "P1", b.T("P1", "P2", "2940", "TOK", "P1"), b.Static("P1", "TOK")),
		b.F("Bot", "P2", b.T("P2", "Bot", "1.1", "WETH", "P2"), b.Static("P2", "WETH")),
		b.F("Bot", "Minter", b.T("Null", "Bot", "5", "LP", "Minter", "mint")),
		b.F("Bot", "WETH", b.T("Bot", "Cold", "0.05", "WETH", "Bot"))))
	bot := common.HexToAddress("0x0000c0ffee000000000000000000000000010000")
	cold := common.HexToAddress("0x0000aa00000000000000000000000000000b0000")
	p1 := common.HexToAddress("0xabcd10000000000000000000000000000003ef12")
	p2 := common.HexToAddress("0xabcd20000000000000000000000000000004ef12")
	renameAddrs(tx, map[Address]Address{gen.Addr("Bot"): bot, gen.Addr("Cold"): cold, gen.Addr("P1"): p1, gen.Addr("P2"): p2,
		gen.Addr("Null"): {}})
	cfg := DefaultConfig()
	a, err := Analyze(tx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	addrs := append(TxAddresses(tx), Address{})
	want := []string{"0x0000c…10000", "0xabcd1…3ef12", "0xabcd2…4ef12"}

	var rep strings.Builder
	show.WriteAnalysis(cfg, &rep, a, true)
	checkNames(t, "report", rep.String(), addrs, append(want, "0x0", "0x0000a…b0000")...)
	if strings.Contains(rep.String(), "0x0000…0000") {
		t.Error("the report prints 0x0000…0000")
	}
	// The steps in the report: each gist in the output's forms, the chain
	// from the null address to the cold wallet (0x0000…0000→0x0000…0000
	// in the log) included.
	for _, g := range []string{"chaining 0x0000c…10000→0xabcd2…4ef12", "chaining 0x0→0x0000a…b0000"} {
		if !strings.Contains(rep.String(), g) {
			t.Errorf("no step's gist reads %q", g)
		}
	}
	var tree strings.Builder
	show.WriteTree(cfg, &tree, tx.Root)
	checkNames(t, "tree", tree.String(), addrs, append(want, "0x0")...)
	checkNames(t, "terms", strings.Join(a.RenderTerms(cfg), "\n"), addrs, "0x0000c…10000", "0xabcd1…3ef12", "0x0")
	checkNames(t, "transfer graph", show.TransferGraphDOT(cfg, a), addrs, append(want, "0x0")...)
	checkNames(t, "normal form picture", show.NormalFormDOT(cfg, a), addrs, want...)
	// One output's forms for the planner's views of the same transaction.
	one := cfg.ForAnalysis(a)
	var lines []string
	for i := range tx.Transfers {
		lines = append(lines, show.LeafString(one, &tx.Transfers[i]))
	}
	checkNames(t, "transfers", strings.Join(lines, "\n"), addrs, append(want, "0x0")...)
	checkNames(t, "steps", strings.Join(one.StepTexts(a), "\n"), addrs, "0x0000c…10000", "0xabcd2…4ef12", "0x0", "0x0000a…b0000")
}
