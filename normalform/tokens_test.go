package normalform

import (
	"strings"
	"testing"
)

// TestTokenList: every built-in chain knows the tokens of the Uniswap
// default token list by symbol, with their decimals; the curated table
// wins; a misspelled symbol gets the closest ones; an ambiguous one its
// addresses.
func TestTokenList(t *testing.T) {
	if !strings.HasPrefix(TokenListSource, "@uniswap/default-token-list ") {
		t.Errorf("source %q", TokenListSource)
	}
	for id, n := range Networks {
		if len(ListedTokens(id)) < 40 {
			t.Errorf("%s: %d listed tokens", n.Name, len(ListedTokens(id)))
		}
	}
	for _, c := range []struct {
		chain    uint64
		sym      string
		addr     string
		decimals uint8
	}{
		{1, "UNI", "0x1f9840a85d5af5bf1d1762f925bdaddc4201f984", 18},
		{1, "usdc", "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", 6},
		{1, "WBTC", "0x2260fac5e5542a773aa44fbcfedf7c193bc2c599", 8},
		{42161, "USDC", "0xaf88d065e77c8cc2239327c5edb3a432268e5831", 6},
		{42161, "ARB", "0x912ce59144191c1204e64559fe8253a0e49e6548", 18},
		{8453, "WETH", "0x4200000000000000000000000000000000000006", 18},
	} {
		cfg := NewConfig(Networks[c.chain], nil, nil)
		tok, ok := cfg.TokenBySymbol(c.sym)
		if !ok || AddrKey(tok.Addr) != c.addr {
			t.Errorf("chain %d %s: %v %v, want %s", c.chain, c.sym, AddrKey(tok.Addr), ok, c.addr)
			continue
		}
		if ti, _ := cfg.TokenInfo(tok); ti.Decimals != c.decimals {
			t.Errorf("chain %d %s: %d decimals, want %d", c.chain, c.sym, ti.Decimals, c.decimals)
		}
	}
	cfg := DefaultConfig()
	for sym, want := range map[string]string{
		"WTEH":     "did you mean WETH?", // a transposition
		"USDD":     "did you mean",       // several close ones
		"ZZZZZZZZ": "base units",         // none: no hint
	} {
		msg := cfg.SymbolError(sym, `"`+sym+`"`)
		if !strings.Contains(msg, want) || sym == "ZZZZZZZZ" && strings.Contains(msg, "did you mean") {
			t.Errorf("%s: %s", sym, msg)
		}
	}
	if _, ok := cfg.TokenBySymbol("LIT"); ok {
		t.Error("LIT is two tokens of the list, found one")
	}
	if msg := cfg.SymbolError("lit", `"lit"`); !strings.Contains(msg, "more than one token") || strings.Count(msg, "0x") != 2 {
		t.Errorf("LIT: %s", msg)
	}
	for _, c := range []struct {
		a, b string
		d    int
	}{{"WETH", "WETH", 0}, {"WTEH", "WETH", 1}, {"WET", "WETH", 1}, {"USDC", "USDT", 1}, {"", "ABC", 3}, {"DAI", "WBTC", 4}} {
		if d := editDistance(c.a, c.b); d != c.d {
			t.Errorf("editDistance(%s, %s) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
}
