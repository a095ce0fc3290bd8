package normalform

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/common"
)

// Tokens by name. A chain's configuration knows the symbols and decimals
// of every token of the Uniswap default token list (tokens_list.go, made
// by `make tokens` from the npm package @uniswap/default-token-list; see
// TokenListSource) on that chain, and of the curated Network.Tokens, which
// win where the two disagree.

//go:generate make -C .. tokens

// listedToken is one token of the list.
type listedToken struct {
	Addr     string
	Symbol   string
	Decimals uint8
}

var (
	listMu     sync.Mutex
	listChains = map[uint64]map[Address]TokenInfo{}
)

// ListedTokens returns the token list's tokens of a chain (none for a
// chain the list does not have). The map is shared: do not change it.
func ListedTokens(chain uint64) map[Address]TokenInfo {
	listMu.Lock()
	defer listMu.Unlock()
	if m, ok := listChains[chain]; ok {
		return m
	}
	m := make(map[Address]TokenInfo, len(tokenList[chain]))
	for _, t := range tokenList[chain] {
		m[common.HexToAddress(t.Addr)] = TokenInfo{t.Symbol, t.Decimals}
	}
	listChains[chain] = m
	return m
}

// SymbolCandidates lists the tokens a symbol names on this chain, matched
// without regard to case, sorted by address (more than one: the symbol is
// ambiguous).
func (c *Config) SymbolCandidates(sym string) []Token {
	var out []Token
	for a, ti := range c.tokens {
		if strings.EqualFold(ti.Symbol, sym) {
			out = append(out, FungibleToken(a))
		}
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i].Addr[:]) < string(out[j].Addr[:]) })
	return out
}

// SymbolError says why TokenBySymbol finds no token for sym (shown as
// quoted): the tokens an ambiguous symbol names, or, for an unknown one,
// the known symbols closest to it ("did you mean WETH?").
func (c *Config) SymbolError(sym, quoted string) string {
	if cands := c.SymbolCandidates(sym); len(cands) > 1 {
		addrs := make([]string, len(cands))
		for i, t := range cands {
			addrs[i] = AddrKey(t.Addr)
		}
		return fmt.Sprintf("token symbol %s is more than one token on this chain: name one by address (%s)", quoted, strings.Join(addrs, ", "))
	}
	return fmt.Sprintf("unknown token symbol %s on this chain: name it by address (0x…) and give amounts in base units%s", quoted, c.symbolHint(sym))
}

// symbolHint is "; did you mean X or Y?" with the known symbols closest to
// sym, or "" when none is close.
func (c *Config) symbolHint(sym string) string {
	u := strings.ToUpper(sym)
	max := 1
	if len([]rune(u)) > 4 {
		max = 2
	}
	type near struct {
		sym string
		d   int
	}
	var nears []near
	seen := map[string]bool{}
	consider := func(s string) {
		su := strings.ToUpper(s)
		if seen[su] {
			return
		}
		seen[su] = true
		if d := editDistance(u, su); d <= max {
			nears = append(nears, near{s, d})
		}
	}
	consider(c.NativeSymbol)
	for _, ti := range c.tokens {
		consider(ti.Symbol)
	}
	if len(nears) == 0 {
		return ""
	}
	sort.Slice(nears, func(i, j int) bool {
		if nears[i].d != nears[j].d {
			return nears[i].d < nears[j].d
		}
		return nears[i].sym < nears[j].sym
	})
	if len(nears) > 3 {
		nears = nears[:3]
	}
	names := make([]string, len(nears))
	for i, n := range nears {
		names[i] = n.sym
	}
	return "; did you mean " + strings.Join(names, " or ") + "?"
}

// editDistance is the Levenshtein distance of two strings, by runes, with
// a transposition of neighbours counting one (WTEH → WETH).
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
