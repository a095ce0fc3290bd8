package normalform

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/ethereum/go-ethereum/common"
)

// Network holds the per-chain facts the analysis needs: the wrapped-native
// contract(s) that make native ≡ wrapped-native under =_τ, the router set of
// rule R5, and display facts for well-known tokens.
type Network struct {
	ID            uint64
	Name          string
	NativeSymbol  string
	WrappedNative []Address
	Routers       []Address
	// PoolManagers are the chain's Uniswap V4 PoolManager singletons.
	// flowq reads no protocol events of theirs (ARCHITECTURE.md, "Uniswap
	// V4: how far the standard events carry"): they are listed so that a
	// reader of a V4 transaction knows the contract whose settle and take
	// are the only transfers of a route through several V4 pools.
	PoolManagers []Address
	Tokens       map[Address]TokenInfo
}

// TokenInfo is what flowq knows about a token for display.
type TokenInfo struct {
	Symbol   string
	Decimals uint8
}

func a(s string) Address { return common.HexToAddress(s) }

// Networks is the built-in chain table. Sources:
//   - wrapped-native contracts: WETH9 on Ethereum, the canonical WETH on
//     Arbitrum One, WBNB on BNB Smart Chain, the predeploy WETH at
//     0x4200...0006 on OP-stack chains (Optimism, Base), WPOL (ex-WMATIC)
//     on Polygon PoS;
//   - routers: the Uniswap V4 Universal Router of each chain, as listed on
//     Uniswap's "v4 deployments" page (docs.uniswap.org/contracts/v4/deployments,
//     the row "Universal Router"; the paper's deployment holds exactly this
//     one address, on Ethereum);
//   - pool managers: the Uniswap V4 PoolManager of each chain, the row
//     "PoolManager" of the same page.
var Networks = map[uint64]*Network{
	1: {
		ID: 1, Name: "ethereum", NativeSymbol: "ETH",
		WrappedNative: []Address{a("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2")},
		Routers:       []Address{a("0x66a9893cC07D91D95644AEDD05D03f95e1dBA8Af")},
		PoolManagers:  []Address{a("0x000000000004444c5dc75cB358380D2e3dE08A90")},
		Tokens: map[Address]TokenInfo{
			a("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"): {"WETH", 18},
			a("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"): {"USDC", 6},
			a("0xdAC17F958D2ee523a2206206994597C13D831ec7"): {"USDT", 6},
			a("0x6B175474E89094C44Da98b954EedeAC495271d0F"): {"DAI", 18},
			a("0x2260FAC5E5542a773Aa44fBCfeDf7C193bc2C599"): {"WBTC", 8},
		},
	},
	10: {
		ID: 10, Name: "optimism", NativeSymbol: "ETH",
		WrappedNative: []Address{a("0x4200000000000000000000000000000000000006")},
		Routers:       []Address{a("0x851116D9223fabED8E56C0E6b8Ad0c31d98B3507")},
		PoolManagers:  []Address{a("0x9a13f98cb987694c9f086b1f5eb990eea8264ec3")},
		Tokens:        map[Address]TokenInfo{a("0x4200000000000000000000000000000000000006"): {"WETH", 18}},
	},
	56: {
		ID: 56, Name: "bsc", NativeSymbol: "BNB",
		WrappedNative: []Address{a("0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c")},
		Routers:       []Address{a("0x1906c1d672b88cD1B9aC7593301cA990F94Eae07")},
		PoolManagers:  []Address{a("0x28e2ea090877bf75740558f6bfb36a5ffee9e9df")},
		Tokens:        map[Address]TokenInfo{a("0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c"): {"WBNB", 18}},
	},
	137: {
		ID: 137, Name: "polygon", NativeSymbol: "POL",
		WrappedNative: []Address{a("0x0d500B1d8E8eF31E21C99d1Db9A6444d3ADf1270")},
		Routers:       []Address{a("0x1095692A6237d83C6a72F3F5eFEdb9A670C49223")},
		PoolManagers:  []Address{a("0x67366782805870060151383f4bbff9dab53e5cd6")},
		Tokens:        map[Address]TokenInfo{a("0x0d500B1d8E8eF31E21C99d1Db9A6444d3ADf1270"): {"WPOL", 18}},
	},
	8453: {
		ID: 8453, Name: "base", NativeSymbol: "ETH",
		WrappedNative: []Address{a("0x4200000000000000000000000000000000000006")},
		Routers:       []Address{a("0x6fF5693b99212Da76ad316178A184AB56D299b43")},
		PoolManagers:  []Address{a("0x498581ff718922c3f8e6a244956af099b2652b2b")},
		Tokens:        map[Address]TokenInfo{a("0x4200000000000000000000000000000000000006"): {"WETH", 18}},
	},
	42161: {
		ID: 42161, Name: "arbitrum", NativeSymbol: "ETH",
		WrappedNative: []Address{a("0x82aF49447D8a07e3bd95BD0d56f35241523fBab1")},
		Routers:       []Address{a("0xA51afAFe0263b40EdaEf0Df8781eA9aa03E381a3")},
		PoolManagers:  []Address{a("0x360e68faccca8ca495c1b759fd9eee466db9fb32")},
		Tokens:        map[Address]TokenInfo{a("0x82aF49447D8a07e3bd95BD0d56f35241523fBab1"): {"WETH", 18}},
	},
}

// NetworkByName finds a built-in chain by id ("1", "42161") or name
// ("ethereum", "arbitrum", "bsc").
func NetworkByName(s string) (*Network, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, c := range Networks {
		if c.Name == s || fmt.Sprint(c.ID) == s {
			return c, nil
		}
	}
	switch s {
	case "mainnet", "eth":
		return Networks[1], nil
	case "arbitrum-one", "arb":
		return Networks[42161], nil
	case "bnb", "binance":
		return Networks[56], nil
	}
	var names []string
	for _, c := range Networks {
		names = append(names, fmt.Sprintf("%s (%d)", c.Name, c.ID))
	}
	sort.Strings(names)
	return nil, fmt.Errorf("unknown chain %q: built-in chains are %s; set --wrapped-native for others", s, strings.Join(names, ", "))
}

// Config is the analysis configuration: which contracts are wrapped native
// (their Deposit and Withdrawal events are transfers, and their token is
// =_τ the native asset), which addresses are routers for R5, and what is
// known about tokens for display.
type Config struct {
	ChainID      uint64
	NativeSymbol string
	wrapped      map[Address]bool
	routers      map[Address]bool
	managers     map[Address]bool // Uniswap V4 PoolManagers (reason v4_netted)
	tokens       map[Address]TokenInfo
	tokensOwned  bool       // false: tokens is the shared table of baseTokens, copied before a write
	short        *Shortener // the short forms of one output (ForTx); nil: ShortAddr's
}

// NewConfig builds the configuration of a chain. wrapped and routers, when
// non-nil, replace the chain's defaults (an empty non-nil slice means none).
func NewConfig(c *Network, wrapped, routers []Address) *Config {
	cfg := &Config{ChainID: c.ID, NativeSymbol: c.NativeSymbol,
		wrapped: map[Address]bool{}, routers: map[Address]bool{}, managers: map[Address]bool{}}
	for _, m := range c.PoolManagers {
		cfg.managers[m] = true
	}
	if wrapped == nil {
		wrapped = c.WrappedNative
	}
	if routers == nil {
		routers = c.Routers
	}
	for _, w := range wrapped {
		cfg.wrapped[w] = true
	}
	for _, r := range routers {
		cfg.routers[r] = true
	}
	cfg.tokens = baseTokens(c, wrapped)
	return cfg
}

// DefaultConfig is Ethereum mainnet with its defaults.
func DefaultConfig() *Config { return NewConfig(Networks[1], nil, nil) }

// IsWrappedNative reports whether addr is a configured wrapped-native contract.
func (c *Config) IsWrappedNative(addr Address) bool { return c.wrapped[addr] }

// SetPoolManagers replaces the configured Uniswap V4 PoolManagers (the
// chain's by default; an empty list means none).
func (c *Config) SetPoolManagers(pms []Address) {
	c.managers = make(map[Address]bool, len(pms))
	for _, m := range pms {
		c.managers[m] = true
	}
}

// IsPoolManager reports whether addr is a configured Uniswap V4 PoolManager.
func (c *Config) IsPoolManager(addr Address) bool { return c.managers[addr] }

// touchesPoolManager reports whether a transfer of tx has a configured
// PoolManager at either end (the reason v4_netted).
func (c *Config) touchesPoolManager(tx *Tx) bool {
	if len(c.managers) == 0 {
		return false
	}
	for i := range tx.Transfers {
		t := &tx.Transfers[i]
		if c.managers[t.From] || c.managers[t.To] {
			return true
		}
	}
	return false
}

// IsRouter reports whether addr is in the router set of R5.
func (c *Config) IsRouter(addr Address) bool { return c.routers[addr] }

// WrappedNative lists the configured wrapped-native contracts, sorted.
func (c *Config) WrappedNative() []Address { return sortedAddrs(c.wrapped) }

// Routers lists the configured routers, sorted.
func (c *Config) Routers() []Address { return sortedAddrs(c.routers) }

func sortedAddrs(m map[Address]bool) []Address {
	out := make([]Address, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return string(out[i][:]) < string(out[j][:]) })
	return out
}

// TokenEq is =_τ (Definition "Token equivalence"): identity, plus the native
// asset ≡ each configured wrapped-native token. Reflexive and symmetric.
func (c *Config) TokenEq(x, y Token) bool {
	if x == y {
		return true
	}
	if x.Kind == Native && y.Kind == Fungible {
		return c.wrapped[y.Addr]
	}
	if y.Kind == Native && x.Kind == Fungible {
		return c.wrapped[x.Addr]
	}
	return false
}

// TokenInfo returns display facts for a token, if known.
func (c *Config) TokenInfo(t Token) (TokenInfo, bool) {
	switch t.Kind {
	case Native:
		return TokenInfo{c.NativeSymbol, 18}, true
	case Fungible:
		ti, ok := c.tokens[t.Addr]
		return ti, ok
	}
	return TokenInfo{}, false
}

// ParseAddressList parses a comma-separated list of 0x addresses; the empty
// string is the empty list.
func ParseAddressList(s string) ([]Address, error) {
	out := []Address{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !common.IsHexAddress(f) {
			return nil, fmt.Errorf("%q is not a 20-byte hex address", f)
		}
		out = append(out, common.HexToAddress(f))
	}
	return out, nil
}

// TokenBySymbol finds a token by symbol: the native asset's symbol (or
// "ETH" on chains whose native asset is ether), or a token of the chain's
// token list or curated table (tokens.go). Symbols are matched without regard to case; an ambiguous
// symbol is not found.
func (c *Config) TokenBySymbol(sym string) (Token, bool) {
	sym = strings.ToUpper(sym)
	if sym == strings.ToUpper(c.NativeSymbol) {
		return NativeToken, true
	}
	var found Token
	n := 0
	for a, ti := range c.tokens {
		if strings.ToUpper(ti.Symbol) == sym {
			found, n = FungibleToken(a), n+1
		}
	}
	return found, n == 1
}

// The token tables of NewConfig, built once per network and wrapped list
// and shared by every Config made from them (decoding a stored normal form
// makes one per record: copying 1,500 listed tokens each time was 9% of an
// ingest's CPU). AddTokens copies the table before its first write.
var (
	baseMu  sync.Mutex
	baseTab = map[baseKey]map[Address]TokenInfo{}
)

type baseKey struct {
	net     *Network
	wrapped string
}

func baseTokens(c *Network, wrapped []Address) map[Address]TokenInfo {
	var kb strings.Builder
	for _, w := range wrapped {
		kb.Write(w[:])
	}
	k := baseKey{c, kb.String()}
	baseMu.Lock()
	defer baseMu.Unlock()
	if m, ok := baseTab[k]; ok {
		return m
	}
	m := map[Address]TokenInfo{}
	for a, v := range ListedTokens(c.ID) { // the token list (tokens.go)
		m[a] = v
	}
	for a, v := range c.Tokens { // the curated table wins
		m[a] = v
	}
	for _, w := range wrapped {
		if _, ok := m[w]; !ok {
			m[w] = TokenInfo{"W" + c.NativeSymbol, 18}
		}
	}
	if len(baseTab) < 256 { // networks built at run time (flags, tests) are bounded
		baseTab[k] = m
	}
	return m
}

// AddTokens adds display facts for tokens the configuration does not know
// (the index's token dictionary: what a node said); a token it knows keeps
// its entry.
func (c *Config) AddTokens(m map[Address]TokenInfo) {
	if !c.tokensOwned {
		own := make(map[Address]TokenInfo, len(c.tokens)+len(m))
		for a, ti := range c.tokens {
			own[a] = ti
		}
		c.tokens, c.tokensOwned = own, true
	}
	for a, ti := range m {
		if _, ok := c.tokens[a]; !ok {
			c.tokens[a] = ti
		}
	}
}
