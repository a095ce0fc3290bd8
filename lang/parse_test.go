package lang

import (
	"strings"
	"testing"
)

func TestParseStatements(t *testing.T) {
	cases := []struct{ src, want string }{
		{"find arbitrages where net profit > 1 WETH and pools >= 3 order by net profit desc limit 10",
			"Find(arbitrage; And(Compare(net profit > 1 WETH), Compare(pools >= 3)); order net profit desc; limit 10)"},
		{"find where gross profit in 0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2 > 1000000",
			"Find(; Compare(gross profit in 0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2 > 1000000))"},
		{"find arbitrages where path = rotation or path != bundle",
			"Find(arbitrage; Or(Is(path = rotation), Is(path != bundle)))"},
		{"count by path where path is inner", "Count(transactions by path; Is(path = inner))"},
		{"count by mode where mode != receipts", "Count(transactions by mode; Is(mode != receipts))"},
		{"find sandwiches where profit > 0.1 WETH and bot = 0x272452b56fa7fd930bdb382b317d69a2ed234579 and block between 100 and 200 order by gross profit in WETH desc limit 5",
			"Findings(sandwiches; And(And(Compare(net profit > 0.1 WETH), AddrIs(bot = 0x272452b56fa7fd930bdb382b317d69a2ed234579)), InBlocks(100..200)); order gross profit in WETH desc; limit 5)"},
		{"find sandwich", "Findings(sandwiches)"},
		{"backruns where pools >= 2 or not touches USDC", "Findings(backruns; Or(Compare(pools >= 2), Not(Touches(USDC))))"},
		{"find backrun with sender = 0x9e56a0f1d5ab1ef1d9d0bf2bb0b8ae4c6d5e4441 order by block", "Findings(backruns; AddrIs(sender = 0x9e56a0f1d5ab1ef1d9d0bf2bb0b8ae4c6d5e4441); order block asc)"},
		{"count sandwiches by bot where blocks 1..200 limit 3", "Count(sandwiches by bot; InBlocks(1..200); limit 3)"},
		{"count backruns by block", "Count(backruns by block)"},
		{"show block 137", "ShowBlock(137)"},
		{"explain show block twelve", "Explain(ShowBlock(12))"},
		{"find warnings where tier = attempted or not (reason leftovers)",
			"Find(warning; Or(Is(tier = attempted), Not(HasReason(leftovers))))"},
		{"find where block between 100 and 200 and bot = 0x05f761b4260102b195c0d541d946a0302b76b28e and flashloan",
			"Find(; And(And(InBlocks(100..200), AddrIs(bot = 0x05f761b4260102b195c0d541d946a0302b76b28e)), FlashLoan))"},
		{"FIND Arbitrages WHERE touches usdc", "Find(arbitrage; Touches(USDC))"},
		{"same 0xddbf97f758bd0958487e18d9e307cd1256b1ad6763cd34090f4c9720ba1b4acc 0x46f4a4d409b44d85e64b1722b8b0f70e9713eb16d2c89da13cffd91486442627 at family",
			"Same(0xddbf…4acc, 0x46f4…2627, family)"},
		{"match 0xddbf97f758bd0958487e18d9e307cd1256b1ad6763cd34090f4c9720ba1b4acc at shape limit 5", "Match(0xddbf…4acc, shape; limit 5)"},
		{"anomalies for bot 0x05f761b4260102b195c0d541d946a0302b76b28e baseline blocks 1..100", "Anomalies(0x05f7…b28e; baseline 1..100)"},
		{"count bots by family limit 3", "Count(bots by family; limit 3)"},
		{"show 0xddbf97f758bd0958487e18d9e307cd1256b1ad6763cd34090f4c9720ba1b4acc as terms, steps", "Show(0xddbf…4acc; terms, steps)"},
		{"explain find arbitrages where block >= 5", "Explain(Find(arbitrage; InBlocks(>= 5)))"},
		{"find; -- a comment\n count by family;", "Find(); Count(transactions by family)"},
	}
	for _, c := range cases {
		sts, err := Parse("q", c.src)
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		var parts []string
		for _, s := range sts {
			parts = append(parts, Dump(s))
		}
		if got := strings.Join(parts, "; "); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.src, got, c.want)
		}
	}
}

// Positions: every node knows its extent in the source.
func TestPositions(t *testing.T) {
	src := "find where pools >= 3\n  and net profit > 1 WETH"
	st, err := ParseOne("q", src)
	if err != nil {
		t.Fatal(err)
	}
	var compares []*Compare
	Walk(st, func(n Node) bool {
		if c, ok := n.(*Compare); ok {
			compares = append(compares, c)
		}
		if n.Pos().Line == 0 {
			t.Errorf("%s has no position", Dump(n))
		}
		return true
	})
	if len(compares) != 2 || compares[1].Pos() != (Pos{Offset: 28, Line: 2, Column: 7}) ||
		src[compares[1].Pos().Offset:compares[1].End().Offset] != "net profit > 1 WETH" {
		t.Errorf("positions: %+v", compares)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"unknown word", "find arbitrages wher pools > 3",
			"q:1:17: unexpected \"wher\""},
		{"caret under the column", "find arbitrages wher pools > 3",
			"\n    find arbitrages wher pools > 3\n                    ^"},
		{"unknown statement", "fnd arbitrages", "q:1:1: unexpected \"fnd\""},
		{"wrong type: count against an amount", "find where pools > 3 WETH", "q:1:22: pools is a count: compare it with a whole number, not an amount of WETH"},
		{"wrong type: fractional count", "find where hops > 2.5", "q:1:19: hops is a count: compare it with a whole number, not 2.5"},
		{"missing token", "find where net profit > 1", "q:1:26: missing token"},
		{"missing argument", "find where net profit >", "q:1:24: unexpected the end of the query"},
		{"missing hash", "show", "q:1:5: unexpected the end of the query"},
		{"unterminated string", "find where touches \"USDC", "q:1:20: unterminated string: add the closing \""},
		{"bad hex", "find where bot = 0x1234", "q:1:18: 0x1234 is too short to name an address: write at least 6 of its hex digits"},
		{"bare 0x", "find where bot = 0x", "q:1:18: 0x is neither an address"},
		{"unknown level", "match 0xddbf97f758bd0958487e18d9e307cd1256b1ad6763cd34090f4c9720ba1b4acc at shap", "q:1:77: unknown equivalence level \"shap\": want exact, shape, tokens, family"},
		{"unknown tier", "find where tier = confimed", "q:1:19: unknown tier \"confimed\": want confirmed, probable, attempted, uncertain"},
		{"unknown mode", "find where mode = trace", "q:1:19: unknown mode \"trace\": want traces, receipts"},
		{"unknown path", "find where path = rotate", "q:1:19: unknown path \"rotate\": want fixpoint, promotion, bundle, rotation, inner"},
		{"empty range", "find where blocks 200..100", "q:1:19: empty block range: 200 is after 100"},
		{"zero limit", "find limit 0", "q:1:12: a limit must be at least 1"},
		{"stray character", "find where pools > 3 $", "q:1:22: unexpected character '$'"},
		{"mismatched tokens", "find where net profit in WETH > 1 USDC", "q:1:35: the profit is in WETH but the amount is in USDC"},
		{"second line", "find;\nfind where pools >", "q:2:19: unexpected the end of the query"},
		{"sandwiches by a transaction's field", "find sandwiches where pools >= 2 and hops > 3", "q:1:38: hops does not apply to sandwiches: filter them by profit, pools, block, bot, sender or touches"},
		{"backruns by verdict", "find backruns where not verdict = arbitrage", "q:1:25: verdict does not apply to backruns"},
		{"sandwiches by reason", "count sandwiches by bot where reason leftovers", "q:1:31: reason does not apply to sandwiches"},
		{"sandwiches ordered by hops", "find sandwiches order by hops", "q:1:26: sandwiches are ordered by profit, pools or block, not hops"},
		{"sandwiches by family", "count sandwiches by family", "q:1:21: unknown grouping of sandwiches \"family\": want bot, sender, block"},
		{"show block without a number", "show block", "q:1:11: unexpected the end of the query"},
		{"show block with a fraction", "show block 1.5", "q:1:12: a block must be a whole number, not 1.5"},
		{"show block as a view", "show block 137 as tree", "q:1:16: unexpected \"as\""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("q", c.src)
			if err == nil {
				t.Fatalf("%q parsed", c.src)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("%q:\n got %s\nwant %s", c.src, err, c.want)
			}
		})
	}
}

func TestGrammarPrints(t *testing.T) {
	g := Grammar()
	for _, want := range []string{"Statement = \"explain\"?", "Find = ((\"find\"", "Compare = Metric Op Amount .", "Op = <op> | (\"at\" \"least\")"} {
		if !strings.Contains(g, want) {
			t.Errorf("grammar lacks %q:\n%s", want, g)
		}
	}
}

// No input makes the parser panic.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"find arbitrages where net profit > 1 WETH and pools >= 3 order by net profit desc limit 10",
		"same 0xddbf97f758bd0958487e18d9e307cd1256b1ad6763cd34090f4c9720ba1b4acc 0x46f4a4d409b44d85e64b1722b8b0f70e9713eb16d2c89da13cffd91486442627 at family",
		"count bots by family", "explain find where not (reason leftovers or flashloan)", "find where touches \"x"} {
		f.Add(s)
	}
	f.Add(strings.Repeat("(", MaxNesting+1) + "find")
	f.Add("find where (pools > 1 -- )\n) ; \"a;b\" ; show")
	f.Fuzz(func(t *testing.T, s string) {
		sts, err := Parse("f", s)
		if err == nil {
			for _, st := range sts {
				Walk(st, func(n Node) bool {
					if n.Pos().Offset < 0 || n.End().Offset > len(s) || n.Pos().Offset > n.End().Offset {
						t.Fatalf("%s spans %d..%d of a %d-byte input", Dump(n), n.Pos().Offset, n.End().Offset, len(s))
					}
					return true
				})
				_ = Dump(st)
			}
		} else if msg := err.Error(); msg == "" || len(msg) > 11*4096 {
			t.Fatalf("an error of %d bytes: %.500q", len(msg), msg)
		}
	})
}

// TestNaturalForms: the worded forms lower to the same AST as the
// symbolic ones.
func TestNaturalForms(t *testing.T) {
	for _, c := range []struct{ words, symbols string }{
		{"arbitrages with profit over 1 WETH through at least three pools", "find arbitrages where net profit > 1 WETH and pools >= 3"},
		{"find arbitrages where gross profit above 0.5 WETH", "find arbitrages where gross profit > 0.5 WETH"},
		{"find where net profit at most 2 USDC", "find where net profit <= 2 USDC"},
		{"find where pools less than 4 and hops more than two", "find where pools < 4 and hops > 2"},
		{"find where pools fewer than 4", "find where pools < 4"},
		{"transactions with 2 cycles", "find transactions where cycles = 2"},
		{"warnings through at most 1 pools", "find warnings where pools <= 1"},
		{"find where profit under 1 WETH", "find where net profit < 1 WETH"},
		{"count by bot with profit at least ten WETH", "count by bot where net profit >= 10 WETH"},
		{"match 0x" + strings.Repeat("ab", 32) + " with pools greater than 2", "match 0x" + strings.Repeat("ab", 32) + " where pools > 2"},
	} {
		a, err := ParseOne("q", c.words)
		if err != nil {
			t.Errorf("%q: %v", c.words, err)
			continue
		}
		b, err := ParseOne("q", c.symbols)
		if err != nil {
			t.Fatalf("%q: %v", c.symbols, err)
		}
		if da, db := Dump(a), Dump(b); da != db {
			t.Errorf("%q and %q differ:\n%s\n%s", c.words, c.symbols, da, db)
		}
	}
	for _, bad := range []string{
		"find where pools at least 2.5",
		"find where through 2.5 pools",
		"find where profit over 1",
	} {
		if _, err := ParseOne("q", bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestUnknownConditionWord(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"find arbitrage where prfit > 1 WETH", `1:22: unknown word "prfit" where a condition starts (did you mean "profit"?)`},
		{"find where pools > 2 and (hoops > 3)", `1:27: unknown word "hoops" where a condition starts (did you mean "hops"?)`},
		{"find where foo > 3", `1:12: unknown word "foo" where a condition starts: want profit`},
		{"find arbitrages wher pools > 3", `1:17: unexpected "wher" (did you mean "where"?)`},
		{"find arbitrages where net profit > 0.01 WETH limt 2", `1:46: unexpected "limt" (did you mean "limit"?)`},
		{"find arbitrages where pools > 3 limt 2", `1:38: unexpected "2" after "limt" (did you mean "limit"?)`},
	} {
		_, err := Parse("q", c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %s", c.src, err, c.want)
		}
	}
}
