package lang

import (
	"strings"
	"testing"
)

// TestParseShortenedReferences: the forms flowq prints (0x3db1…dcfa, a
// widened 0x0000c…10000, 0x0 for the null address) and prefixes of at
// least six digits parse where a whole hash or address does, keeping
// prefix and suffix; too few digits, too many, and a shortened token of
// a profit are errors at the reference.
func TestParseShortenedReferences(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"same 0x3db1…dcfa 0x68b1…1f06 at family", "Same(partial 0x3db1…dcfa, partial 0x68b1…1f06, family)"},
		{"match 0x3DB1…DCFA at shape where verdict = arbitrage", "Match(partial 0x3db1…dcfa, shape; Is(verdict = arbitrage))"},
		{"anomalies for bot 0xbfee…db74 baseline blocks 52..55", "Anomalies(partial 0xbfee…db74; baseline 52..55)"},
		{"show 0x3db1a7 as terms, steps", "Show(partial 0x3db1a7; terms, steps)"},
		{"show 0x3db1a776c9b6aa721514c…", "Show(partial 0x3db1a776c9b6aa721514c; )"},
		{"show 0x3db1...dcfa", "Show(partial 0x3db1…dcfa; )"},
		{"find where bot = 0x0000c…10000", "Find(; AddrIs(bot = partial 0x0000c…10000))"},
		{"find where sender != 0x0", "Find(; AddrIs(sender != 0x0000000000000000000000000000000000000000))"},
		{"find where touches 0xbfee84", "Find(; Touches(partial 0xbfee84))"},
		{"find where family = 0x5e4c…e102", "Find(; HashIs(family = partial 0x5e4c…e102))"},
	} {
		st, err := ParseOne("q", c.src)
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		if got := Dump(st); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.src, got, c.want)
		}
	}
	for _, c := range []struct{ src, want string }{
		{"show 0x3db1a", "q:1:6: 0x3db1a is too short to name a transaction hash: write at least 6 of its hex digits"},
		{"show 0x0", "q:1:6: 0x0 is too short to name a transaction hash"},
		{"same 0x3d…dcfa 0x68b1…1f06", "q:1:6: 0x3d…dcfa: a transaction hash shortened needs at least 4 hex digits before the …"},
		{"anomalies for bot 0xbfee…", "q:1:19: 0xbfee is too short to name an address"},
		{"find where bot = 0x" + strings.Repeat("a", 20) + "…" + strings.Repeat("b", 21), "has 41 hex digits: an address has 40"},
		{"find where net profit in 0xc02a…6cc2 > 1000", "q:1:26: 0xc02a…6cc2: the token of a profit is named by its symbol or its whole address"},
		{"show 0x3db1…dcfa…", "unexpected character '…'"},
	} {
		_, err := Parse("q", c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %s", c.src, err, c.want)
		}
	}
}
