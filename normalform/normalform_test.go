package normalform

import (
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
)

func TestFormatUnits(t *testing.T) {
	for _, c := range []struct {
		v    string
		dec  uint8
		want string
	}{
		{"0", 18, "0"},
		{"1", 18, "0.000000000000000001"},
		{"1500000", 6, "1.5"},
		{"1000000", 6, "1"},
		{"9196963592118237", 18, "0.009196963592118237"},
		{"123", 0, "123"},
		{"115792089237316195423570985008687907853269984665640564039457584007913129639935", 18, "115792089237316195423570985008687907853269984665640564039457.584007913129639935"},
	} {
		v := uint256.MustFromDecimal(c.v)
		if got := FormatUnits(v, c.dec); got != c.want {
			t.Errorf("FormatUnits(%s, %d) = %q, want %q", c.v, c.dec, got, c.want)
		}
	}
}

func TestTokenEquivalence(t *testing.T) {
	cfg := DefaultConfig()
	weth := FungibleToken(common.HexToAddress("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"))
	usdc := FungibleToken(common.HexToAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"))
	cases := []struct {
		a, b Token
		want bool
	}{
		{weth, weth, true}, {NativeToken, NativeToken, true},
		{NativeToken, weth, true}, {weth, NativeToken, true},
		{NativeToken, usdc, false}, {usdc, weth, false},
		{Token{Addr: weth.Addr, Kind: NFT721}, NativeToken, false},
	}
	for _, c := range cases {
		if got := cfg.TokenEq(c.a, c.b); got != c.want {
			t.Errorf("TokenEq(%s, %s) = %v, want %v", c.a.Key(), c.b.Key(), got, c.want)
		}
	}
	// Another chain's wrapped native is not WETH.
	bsc := NewConfig(Networks[56], nil, nil)
	if bsc.TokenEq(NativeToken, weth) {
		t.Error("on BSC, the native asset must not be =_τ Ethereum's WETH")
	}
	wbnb := FungibleToken(common.HexToAddress("0xbb4CdB9CBd36B01bD1cBaEBF2De08d9173bc095c"))
	if !bsc.TokenEq(wbnb, NativeToken) {
		t.Error("on BSC, WBNB must be =_τ the native asset")
	}
	// An override with no wrapped native makes =_τ plain identity.
	none := NewConfig(Networks[1], []Address{}, nil)
	if none.TokenEq(NativeToken, weth) || none.IsWrappedNative(weth.Addr) {
		t.Error("an empty wrapped-native override must leave none")
	}
}

func TestChainsAndConfig(t *testing.T) {
	for _, name := range []string{"ethereum", "1", "arbitrum", "42161", "bsc", "56", "base", "optimism", "polygon"} {
		c, err := NetworkByName(name)
		if err != nil || len(c.WrappedNative) != 1 || len(c.Routers) != 1 {
			t.Errorf("NetworkByName(%q) = %v, %v", name, c, err)
		}
	}
	if _, err := NetworkByName("dogechain"); err == nil || !strings.Contains(err.Error(), "arbitrum (42161)") {
		t.Errorf("unknown chain error should list the built-in chains, got %v", err)
	}
	r := common.HexToAddress("0x66a9893cC07D91D95644AEDD05D03f95e1dBA8Af")
	if !DefaultConfig().IsRouter(r) {
		t.Error("the Uniswap V4 Universal Router is the default R5 router on Ethereum")
	}
	if NewConfig(Networks[1], nil, []Address{}).IsRouter(r) {
		t.Error("an empty router override must leave none")
	}
	if _, err := ParseAddressList("0x12, nothex"); err == nil {
		t.Error("ParseAddressList must reject a malformed address")
	}
	l, err := ParseAddressList(" 0x66a9893cC07D91D95644AEDD05D03f95e1dBA8Af ,")
	if err != nil || len(l) != 1 || l[0] != r {
		t.Errorf("ParseAddressList = %v, %v", l, err)
	}
}

// leaf builds a leaf for tests.
func leaf(pos int32, amount uint64, from, sender byte) *Node {
	t := &Transfer{Pos: pos, From: Address{from}, To: Address{from + 1}, Sender: Address{sender}}
	t.Amount.SetUint64(amount)
	return &Node{Leaf: t}
}

func call(idx int32, kids ...*Node) *Node {
	return &Node{Frame: &Frame{Index: idx}, Children: kids}
}

// shape renders a tree compactly: frames as F<index>(...), leaves as #pos.
func shape(n *Node) string {
	if n == nil {
		return "nil"
	}
	if n.Leaf != nil {
		return "#" + string(rune('0'+n.Leaf.Pos))
	}
	var parts []string
	for _, c := range n.Children {
		parts = append(parts, shape(c))
	}
	return "F" + string(rune('0'+n.Frame.Index)) + "(" + strings.Join(parts, " ") + ")"
}

func TestTrim(t *testing.T) {
	cases := []struct {
		name string
		in   *Node
		want string
	}{
		{"token frame holding one transfer collapses into its leaf",
			call(0, leaf(0, 5, 1, 9), call(1, leaf(1, 5, 2, 9))), "F0(#0 #1)"},
		{"the root is never collapsed",
			call(0, call(1, leaf(0, 5, 1, 9), leaf(1, 5, 2, 9))), "F0(F1(#0 #1))"},
		{"a frame keeps its single leaf when it had other (empty) child frames",
			call(0, leaf(0, 5, 1, 9), call(1, leaf(1, 5, 2, 9), call(2), call(3))), "F0(#0 F1(#1))"},
		{"chains of single-child frames collapse",
			call(0, leaf(0, 5, 1, 9), call(1, call(2, call(3, leaf(1, 5, 2, 9))))), "F0(#0 #1)"},
		{"empty subtrees are removed",
			call(0, leaf(0, 5, 1, 9), call(1, call(2), call(3, call(4))), leaf(1, 5, 2, 9)), "F0(#0 #1)"},
		{"a zero-amount transfer with σ = s is dropped",
			call(0, leaf(0, 0, 1, 1), leaf(1, 5, 2, 9)), "F0(#1)"},
		{"a zero-amount transfer with σ ≠ s is kept",
			call(0, leaf(0, 0, 1, 7), leaf(1, 5, 2, 9)), "F0(#0 #1)"},
		{"no transfer survives: nil",
			call(0, call(1), leaf(0, 0, 3, 3)), "nil"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := shape(Trim(c.in)); got != c.want {
				t.Errorf("Trim = %s, want %s", got, c.want)
			}
		})
	}
}
