// Package gen builds cash flow trees (T0) by hand and at random: the
// paper's worked examples, random trees and random arbitrage routes for the
// engine's property tests, and synthetic workloads. Addresses and tokens are
// named ("SC", "P1", "USDC"); "WETH" is mainnet WETH and "ETH" the native
// asset, so that the default configuration's =_τ applies.
package gen

import (
	"fmt"
	"math/rand"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/holiman/uint256"

	"github.com/flowq/flowq/normalform"
)

var wethAddr = common.HexToAddress("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2")

// Addr names an address deterministically; "WETH" is mainnet WETH.
func Addr(name string) normalform.Address {
	if name == "WETH" {
		return wethAddr
	}
	return common.BytesToAddress(crypto.Keccak256([]byte(name))[:20])
}

// Tok names a token: "ETH" is the native asset, "WETH" mainnet WETH.
func Tok(name string) normalform.Token {
	if name == "ETH" {
		return normalform.NativeToken
	}
	return normalform.FungibleToken(Addr(name))
}

// Units parses a decimal amount with 18 decimals ("0.0125").
func Units(s string) uint256.Int {
	intPart, frac, _ := strings.Cut(s, ".")
	frac += strings.Repeat("0", 18-len(frac))
	v := uint256.MustFromDecimal(strings.TrimLeft(intPart+frac, "0") + "0")
	v.Div(v, uint256.NewInt(10))
	return *v
}

// Builder builds T0 trees: transfers get trace positions in creation order.
type Builder struct {
	ts     []*normalform.Transfer
	frames int32
}

// T is a transfer from → to of amount in token, with sender σ; flags may
// say "mint", "burn" or "native".
func (b *Builder) T(from, to, amount, token, sigma string, flags ...string) *normalform.Node {
	tr := &normalform.Transfer{From: Addr(from), To: Addr(to), Amount: Units(amount), Token: Tok(token), Sender: Addr(sigma),
		Pos: int32(len(b.ts)), LogIndex: int32(len(b.ts))}
	for _, f := range flags {
		switch f {
		case "mint":
			tr.Flags |= normalform.Mint
		case "burn":
			tr.Flags |= normalform.Burn
		}
	}
	if token == "ETH" {
		tr.Flags |= normalform.NativeValue
		tr.LogIndex = -1
	}
	b.ts = append(b.ts, tr)
	return &normalform.Node{Leaf: tr}
}

// F is a call frame from ⇒ to (σ of its events = from).
func (b *Builder) F(from, to string, kids ...*normalform.Node) *normalform.Node {
	b.frames++
	return &normalform.Node{Frame: &normalform.Frame{Type: normalform.Call, From: Addr(from), To: Addr(to), Index: b.frames, Sender: Addr(from)}, Children: kids}
}

// Static is a STATICCALL frame without transfers (a balance check): it
// keeps its parent from being collapsed, as real pools' checks do.
func (b *Builder) Static(from, to string) *normalform.Node {
	b.frames++
	return &normalform.Node{Frame: &normalform.Frame{Type: normalform.StaticCall, From: Addr(from), To: Addr(to), Index: b.frames, Sender: Addr(from)}}
}

// Tx assembles a transaction; gas is charged when gasUsed > 0 (price 1 gwei,
// base fee 0.5 gwei, coinbase "builder").
func (b *Builder) Tx(from, to string, gasUsed uint64, root *normalform.Node) *normalform.Tx {
	root.Frame.Index = 0
	// Trace positions and frame indices follow execution (pre-order), as
	// the decoder numbers them, whatever order the builder ran in.
	var order []*normalform.Node
	var frame int32
	var walk func(n *normalform.Node)
	walk = func(n *normalform.Node) {
		if n.Leaf != nil {
			n.Leaf.Pos, n.Leaf.LogIndex = int32(len(order)), int32(len(order))
			if n.Leaf.Token.Kind == normalform.Native {
				n.Leaf.LogIndex = -1
			}
			order = append(order, n)
			return
		}
		n.Frame.Index = frame
		frame++
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(root)
	tx := &normalform.Tx{Transfers: make([]normalform.Transfer, len(order))}
	for i, n := range order {
		tx.Transfers[i] = *n.Leaf
		n.Leaf = &tx.Transfers[i]
	}
	tx.Root = normalform.Trim(root)
	m := &tx.Meta
	m.From, m.HasFrom, m.To, m.HasTo = Addr(from), true, Addr(to), true
	if gasUsed > 0 {
		m.HasReceipt, m.GasUsed, m.Status = true, gasUsed, normalform.StatusSuccess
		m.EffectiveGasPrice.SetUint64(1e9)
		m.HasHeader, m.HasBaseFee, m.Miner = true, true, Addr("builder")
		m.BaseFee.SetUint64(5e8)
	}
	return tx
}

// TxR builds the paper's tx_R (Figure "Reduction of tx_R"): the bot
// flash-swaps 0.0598 WETH out of BEAN/WETH; in the callback each arm pool
// X/BEAN flash-swaps BEAN to BEAN/WETH and calls back, where the bot pays
// WETH into X/WETH, which sends X to X/BEAN; arms nest in the callbacks.
func TxR(b *Builder, arms [][2]string, convergence, hub string) *normalform.Node {
	// Innermost arm first.
	var inner *normalform.Node
	for i := len(arms) - 1; i >= 0; i-- {
		x, weth := arms[i][0], arms[i][1]
		xb, xw := x+"/"+convergence, x+"/WETH"
		cb := []*normalform.Node{
			b.T("SC", xw, weth, "WETH", "SC"),
			b.F("SC", xw, b.T(xw, xb, "100", x, xw), b.Static(xw, x)),
		}
		if inner != nil {
			cb = append(cb, inner)
		}
		cb = append(cb, b.Static("SC", convergence))
		inner = b.F("SC", xb,
			b.T(xb, hub, "300", convergence, xb),
			b.F(xb, "SC", cb...),
			b.Static(xb, convergence))
	}
	return b.F("EOA", "SC",
		b.F("SC", hub,
			b.T(hub, "SC", "0.0598", "WETH", hub),
			b.F(hub, "SC", inner, b.Static("SC", "WETH")),
			b.Static(hub, "WETH")))
}

// RandomTx builds a random T0: nested frames, transfers among a few
// addresses in a few tokens (WETH and ETH among them), some mints, burns
// and zero amounts.
func RandomTx(r *rand.Rand, huge bool) *normalform.Tx {
	names := []string{"EOA", "SC", "P1", "P2", "P3", "WETH"}
	tokens := []string{"WETH", "ETH", "USDC", "DAI"}
	b := &Builder{}
	var frame func(depth int, from, to string) *normalform.Node
	frame = func(depth int, from, to string) *normalform.Node {
		var kids []*normalform.Node
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
			n := b.T(s, d, amount, tokens[r.Intn(len(tokens))], names[r.Intn(len(names))], flags...)
			if huge {
				n.Leaf.Amount = *new(uint256.Int).SetAllOne()
			}
			kids = append(kids, n)
		}
		return b.F(from, to, kids...)
	}
	gas := uint64(0)
	if r.Intn(2) == 0 {
		gas = 21000
	}
	return b.Tx("EOA", "SC", gas, frame(0, "EOA", "SC"))
}

// RandomRoute builds a random arbitrage-shaped transaction: the bot SC
// sends WETH through 2–4 pools (each hop pool-to-pool or back through SC),
// each pool's payout in its own frame, optionally wrapped in a flash loan,
// optionally funded by a wrap of ETH; the last pool returns WETH to SC. It
// returns the transaction and the route's gross (out − in, in WETH).
func RandomRoute(r *rand.Rand) (*normalform.Tx, int64) {
	b := &Builder{}
	hops := 2 + r.Intn(3)
	tokens := []string{"WETH", "T1", "T2", "T3", "T4"}
	in := int64(100 + r.Intn(50))
	out := in + int64(r.Intn(21)-5) // gain or loss
	var kids []*normalform.Node
	if r.Intn(3) == 0 { // fund by wrapping ETH
		kids = append(kids, b.F("SC", "WETH", b.T("SC", "WETH", fmt.Sprint(in), "ETH", "SC"), b.T("WETH", "SC", fmt.Sprint(in), "WETH", "SC", "mint")))
	}
	kids = append(kids, b.T("SC", "Pool0", fmt.Sprint(in), "WETH", "SC"))
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
		frameKids := []*normalform.Node{b.T(pool, dst, amt, tokOut, pool)}
		if r.Intn(2) == 0 {
			frameKids = append(frameKids, b.Static(pool, tokOut))
		}
		kids = append(kids, b.F("SC", pool, frameKids...))
		if viaSC {
			kids = append(kids, b.T("SC", next, amt, tokOut, "SC"))
		}
	}
	if r.Intn(3) == 0 { // flash loan around the route
		loan := []*normalform.Node{b.T("Lender", "SC", "500", "WETH", "Lender"), b.F("Lender", "SC", kids...), b.T("SC", "Lender", "500", "WETH", "Lender")}
		kids = []*normalform.Node{b.F("SC", "Lender", loan...)}
	}
	return b.Tx("EOA", "SC", 0, b.F("EOA", "SC", kids...)), out - in
}
