package witness

import (
	"fmt"
	"math/big"
	"math/rand"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"
)

// token is a token type for the checker's tests: an ERC-20 contract, or
// the native asset.
type token struct {
	addr   common.Address
	native bool
}

func (t token) Key() string {
	if t.native {
		return "0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
	}
	return addrKey(t.addr)
}

func fungible(a common.Address) token { return token{addr: a} }

type transfer = Transfer[token]

var (
	weth = fungible(common.HexToAddress("0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2"))
	eth  = token{native: true}
	usdt = fungible(common.HexToAddress("0xdAC17F958D2ee523a2206206994597C13D831ec7"))
	usdc = fungible(common.HexToAddress("0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"))
	bean = fungible(common.HexToAddress("0xBEA0000029AD1c77D3d5D23Ba2D8893dB9d1Efab"))
	tkn  = fungible(common.HexToAddress("0x1111111111111111111111111111111111111111")) // raw units
	tkn2 = fungible(common.HexToAddress("0x2222222222222222222222222222222222222222")) // raw units

	decimals = map[token]int{weth: 18, eth: 18, usdt: 6, usdc: 6, bean: 6}

	// eq is =_τ on Ethereum mainnet: identity plus ETH ≡ WETH.
	eq = func(a, b token) bool { return a == b || (a == eth && b == weth) || (a == weth && b == eth) }

	maxAmount = "max" // 2^256 - 1
)

// addr names a test account; distinct names give distinct addresses.
func addr(name string) common.Address {
	return common.BytesToAddress(append([]byte{0xac}, name...))
}

func ptr(a common.Address) *common.Address { return &a }

// units parses a display amount ("1.1") in the token's decimals, "max" as
// 2^256-1.
func units(s string, tok token) uint256.Int {
	if s == maxAmount {
		var m uint256.Int
		m.SetAllOne()
		return m
	}
	dec := decimals[tok]
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > dec {
		panic("too many decimals in " + s)
	}
	v, err := uint256.FromDecimal(whole + frac + strings.Repeat("0", dec-len(frac)))
	if err != nil {
		panic(err)
	}
	return *v
}

type leg struct {
	from, to string
	amount   string
	tok      token
}

// posOf is the trace position given to the i-th leg: deliberately not i.
func posOf(i int) int32 { return int32(100 + 7*i) }

func build(legs ...leg) []transfer {
	ts := make([]transfer, len(legs))
	for i, l := range legs {
		ts[i] = transfer{From: addr(l.from), To: addr(l.to), Amount: units(l.amount, l.tok),
			Token: l.tok, Pos: posOf(i)}
	}
	return ts
}

// pieces turns leg indices into positions.
func pieces(idx ...[]int) [][]int32 {
	out := make([][]int32, len(idx))
	for i, p := range idx {
		for _, j := range p {
			out[i] = append(out[i], posOf(j))
		}
	}
	return out
}

func signed(s string, tok token) Signed {
	return Signed{Abs: units(s, tok)}
}

var (
	fig1a = []leg{
		{"SC", "P1", "1", weth},
		{"P1", "P2", "2940", usdt},
		{"P2", "SC", "1.1", weth},
	}
	fig1b = []leg{
		{"SC", "P1", "1", weth},
		{"P1", "SC", "2940", usdt},
		{"SC", "P2", "2940", usdt},
		{"P2", "SC", "1.1", weth},
	}
	// tx_R: three arms out of SC converge on the BEAN/WETH pool BNW, which
	// returns WETH to SC.
	starTxR = []leg{
		{"SC", "P1", "0.0125", weth},  // 0
		{"P1", "BNW", "100", bean},    // 1
		{"SC", "P2", "0.0333", weth},  // 2
		{"P2", "P4", "60", usdc},      // 3
		{"P4", "BNW", "270", bean},    // 4
		{"SC", "P3", "0.0117", weth},  // 5
		{"P3", "BNW", "95", bean},     // 6
		{"BNW", "SC", "0.0598", weth}, // 7
	}
	flashLoan = []leg{
		{"L", "B", "100", weth},
		{"B", "L", "100.09", weth},
	}
)

func TestFind(t *testing.T) {
	const big = 1 << 20
	cases := []struct {
		name          string
		legs          []leg
		at            *common.Address
		budget        int
		wantFound     bool
		wantExhausted bool
		wantV         string
		wantToken     token
		wantPieces    [][]int32 // nil: not checked
		wantGain      Signed
	}{
		{name: "fig1a_one_piece_at_SC", legs: fig1a, at: ptr(addr("SC")), budget: big,
			wantFound: true, wantV: "SC", wantToken: weth, wantPieces: pieces([]int{0, 1, 2}), wantGain: signed("0.1", weth)},
		{name: "fig1a_one_piece_anywhere", legs: fig1a, budget: big,
			wantFound: true, wantV: "SC", wantToken: weth, wantPieces: pieces([]int{0, 1, 2}), wantGain: signed("0.1", weth)},
		{name: "fig1a_none_at_pool", legs: fig1a, at: ptr(addr("P1")), budget: big},
		{name: "fig1b_one_piece", legs: fig1b, budget: big,
			wantFound: true, wantV: "SC", wantToken: weth, wantPieces: pieces([]int{0, 1, 2, 3}), wantGain: signed("0.1", weth)},
		// The star needs no junction: one arm and the return already form a
		// connected closed walk (0.0598 - 0.0125 WETH).
		{name: "star_txR_one_piece_through_first_arm", legs: starTxR, at: ptr(addr("SC")), budget: big,
			wantFound: true, wantV: "SC", wantToken: weth, wantPieces: pieces([]int{0, 1, 7}), wantGain: signed("0.0473", weth)},
		{name: "two_leg_swap_no_witness", legs: []leg{{"U", "POOL", "3000", usdc}, {"POOL", "U", "1", weth}}, budget: big},
		{name: "two_leg_swap_no_witness_at_user", legs: []leg{{"U", "POOL", "3000", usdc}, {"POOL", "U", "1", weth}},
			at: ptr(addr("U")), budget: big},
		{name: "wrap_only_no_witness", legs: []leg{{"U", "WETH", "1", eth}, {"WETH", "U", "1", weth}}, budget: big},
		{name: "wrap_unwrap_equal_no_witness", legs: []leg{
			{"U", "WETH", "1", eth}, {"WETH", "U", "1", weth}, {"U", "WETH", "1", weth}, {"WETH", "U", "1", eth}}, budget: big},
		{name: "losing_cycle_no_witness", legs: []leg{
			{"SC", "P1", "1", weth}, {"P1", "P2", "2940", usdt}, {"P2", "SC", "0.9", weth}}, budget: big},
		{name: "break_even_cycle_no_witness", legs: []leg{
			{"SC", "P1", "1", weth}, {"P1", "P2", "2940", usdt}, {"P2", "SC", "1", weth}}, budget: big},
		// WETH out, ETH back: first and last are =_τ, but δ[SC, WETH] = -1.
		{name: "weth_out_eth_back_no_witness", legs: []leg{{"SC", "P", "1", weth}, {"P", "SC", "1.1", eth}}, budget: big},
		// With SC wrapping the ETH it got back, the walk continues through
		// the wrap: one piece of four transfers, gain 0.1 WETH.
		{name: "weth_out_eth_back_wrap_after_one_piece", legs: []leg{
			{"SC", "P", "1", weth}, {"P", "SC", "1.1", eth}, {"SC", "WETH", "1.1", eth}, {"WETH", "SC", "1.1", weth}}, budget: big,
			wantFound: true, wantV: "SC", wantToken: weth, wantPieces: pieces([]int{0, 1, 2, 3}), wantGain: signed("0.1", weth)},
		// The same with the wrap earlier in the trace: a walk need not follow
		// trace order.
		{name: "weth_out_eth_back_wrap_before_one_piece", legs: []leg{
			{"SC", "WETH", "1.1", eth}, {"WETH", "SC", "1.1", weth}, {"SC", "P", "1", weth}, {"P", "SC", "1.1", eth}}, budget: big,
			wantFound: true, wantV: "SC", wantToken: weth, wantPieces: pieces([]int{2, 3, 0, 1}), wantGain: signed("0.1", weth)},
		{name: "flash_loan_fee_lender_one_piece", legs: flashLoan, budget: big,
			wantFound: true, wantV: "L", wantToken: weth, wantPieces: pieces([]int{0, 1}), wantGain: signed("0.09", weth)},
		{name: "flash_loan_fee_none_at_borrower", legs: flashLoan, at: ptr(addr("B")), budget: big},
		{name: "zero_amount_cycle_no_witness", legs: []leg{{"V", "X", "0", tkn}, {"X", "V", "0", tkn}}, budget: big},
		{name: "self_transfer_only_no_witness", legs: []leg{{"V", "V", "5", tkn}}, budget: big},
		// V→X→V breaks even, but the self-transfer V→V is itself a first
		// transfer "out of V" that costs nothing: with the inflow X→V it is a
		// two-piece witness.
		{name: "self_transfer_beside_break_even_cycle_two_pieces", legs: []leg{
			{"V", "V", "5", tkn}, {"V", "X", "1", tkn}, {"X", "V", "1", tkn}}, budget: big,
			wantFound: true, wantV: "V", wantToken: tkn, wantPieces: pieces([]int{0}, []int{2}), wantGain: signed("1", tkn)},
		// Literal consequences of the definitions (see doc.go): a zero-amount
		// "payment" followed by an inflow is a one-piece witness, and any
		// unrelated inflow larger than an outflow is a junction witness.
		{name: "zero_out_then_inflow_literal_witness", legs: []leg{{"V", "X", "0", tkn}, {"X", "V", "1", tkn}}, budget: big,
			wantFound: true, wantV: "V", wantToken: tkn, wantPieces: pieces([]int{0, 1}), wantGain: signed("1", tkn)},
		{name: "self_transfer_plus_inflow_two_pieces", legs: []leg{{"V", "V", "5", tkn}, {"X", "V", "1", tkn}}, budget: big,
			wantFound: true, wantV: "V", wantToken: tkn, wantPieces: pieces([]int{0}, []int{1}), wantGain: signed("1", tkn)},
		{name: "junction_laxity_unrelated_inflow_two_pieces", legs: []leg{
			{"V", "A", "1", tkn}, {"A", "B", "1", tkn2}, {"C", "V", "2", tkn}}, budget: big,
			wantFound: true, wantV: "V", wantToken: tkn, wantPieces: pieces([]int{0}, []int{2}), wantGain: signed("1", tkn)},
		// At V: V→A→V loses 2, the inflow C→V makes up for it; the junction
		// phase puts A→V right after V→A so that they form one run. (At A,
		// A→V→A is a one-piece witness, hence at: V.)
		{name: "junction_joins_first_run", legs: []leg{
			{"V", "A", "5", tkn}, {"C", "V", "4", tkn}, {"A", "V", "3", tkn}}, at: ptr(addr("V")), budget: big,
			wantFound: true, wantV: "V", wantToken: tkn, wantPieces: pieces([]int{0, 2}, []int{1}), wantGain: signed("2", tkn)},
		// Fewest inflows (largest first: 3, 2, 1), laid out in trace order.
		{name: "junction_helpers_in_trace_order", legs: []leg{
			{"V", "A", "5", tkn}, {"C", "V", "1", tkn}, {"D", "V", "3", tkn}, {"E", "V", "2", tkn}, {"F", "V", "1", tkn}}, budget: big,
			wantFound: true, wantV: "V", wantToken: tkn, wantPieces: pieces([]int{0}, []int{1}, []int{2}, []int{3}), wantGain: signed("1", tkn)},
		{name: "huge_amounts_no_overflow_in_witness", legs: []leg{
			{"V", "X", maxAmount, tkn}, {"X", "V", maxAmount, tkn}, {"Y", "V", maxAmount, tkn}}, budget: big,
			wantFound: true, wantV: "V", wantToken: tkn, wantPieces: pieces([]int{0, 1}, []int{2}), wantGain: signed(maxAmount, tkn)},
		{name: "huge_amounts_break_even_no_witness", legs: []leg{
			{"V", "X", maxAmount, tkn}, {"X", "V", "0", tkn2}, {"V", "Y", maxAmount, tkn}, {"Y", "V", maxAmount, tkn}}, budget: big},
		{name: "empty_list", legs: nil, budget: big},
		{name: "empty_list_budget_0", legs: nil, budget: 0},
		{name: "budget_1_exhausted", legs: fig1a, budget: 1, wantExhausted: true},
		{name: "budget_0_exhausted", legs: fig1a, budget: 0, wantExhausted: true},
		{name: "budget_negative_exhausted", legs: fig1a, budget: -5, wantExhausted: true},
		// 4 steps decide that a witness exists; the single-run search needs 2
		// more. With 5 the junction witness comes back, flagged exhausted.
		{name: "budget_cuts_single_run_search", legs: fig1a, budget: 5,
			wantFound: true, wantExhausted: true, wantV: "SC", wantToken: weth, wantPieces: pieces([]int{0}, []int{2}), wantGain: signed("0.1", weth)},
		{name: "budget_6_suffices", legs: fig1a, budget: 6,
			wantFound: true, wantV: "SC", wantToken: weth, wantPieces: pieces([]int{0, 1, 2}), wantGain: signed("0.1", weth)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := build(c.legs...)
			w, found, exhausted := Find(ts, eq, c.at, c.budget)
			if found != c.wantFound || exhausted != c.wantExhausted {
				t.Fatalf("Find = (%v, found=%v, exhausted=%v), want found=%v exhausted=%v", w, found, exhausted, c.wantFound, c.wantExhausted)
			}
			if !found {
				if w != nil {
					t.Fatalf("not found but witness %v", w)
				}
				return
			}
			if err := Verify(ts, eq, w); err != nil {
				t.Fatalf("Verify(%v): %v", w, err)
			}
			if w.V != addr(c.wantV) || w.Token != c.wantToken {
				t.Errorf("witness %v: want V=%s token=%s", w, c.wantV, c.wantToken.Key())
			}
			if c.wantPieces != nil && !reflect.DeepEqual(w.Pieces, c.wantPieces) {
				t.Errorf("pieces %v, want %v", w.Pieces, c.wantPieces)
			}
			if w.Gain != c.wantGain {
				t.Errorf("gain %s, want %s", w.Gain.String(), c.wantGain.String())
			}
			t.Logf("%v", w)
		})
	}
}

// TestStarJunction: the junction phase alone on tx_R, and the full star
// (all three arms and the return) as a hand-built three-piece witness.
func TestStarJunction(t *testing.T) {
	ts := build(starTxR...)
	w, complete := findJunction(ts, eq, ptr(addr("SC")), 1<<20)
	if w == nil || !complete {
		t.Fatalf("junction phase: %v, complete=%v", w, complete)
	}
	if want := pieces([]int{0}, []int{7}); !reflect.DeepEqual(w.Pieces, want) {
		t.Errorf("junction pieces %v, want %v", w.Pieces, want)
	}
	full := &Witness[token]{V: addr("SC"), Token: weth,
		Pieces: pieces([]int{0, 1}, []int{2, 3, 4}, []int{5, 6, 7}), Gain: signed("0.0023", weth)}
	if err := Verify(ts, eq, full); err != nil {
		t.Errorf("full star: %v", err)
	}
	t.Logf("Find: one piece (first arm); junction phase: %v; full star: %v", w, full)
}

func TestFindInToken(t *testing.T) {
	ts := build(fig1a...)
	if w, found, ex := FindIn(ts, eq, nil, &usdt, 1<<20); found || ex {
		t.Errorf("in USDT: %v found=%v exhausted=%v", w, found, ex)
	}
	w, found, ex := FindIn(ts, eq, nil, &weth, 1<<20)
	if !found || ex || w.Token != weth {
		t.Errorf("in WETH: %v found=%v exhausted=%v", w, found, ex)
	}
	// ETH is =_τ WETH but the first transfer must be in τ exactly.
	if w, found, ex := FindIn(ts, eq, nil, &eth, 1<<20); found || ex {
		t.Errorf("in ETH: %v found=%v exhausted=%v", w, found, ex)
	}
}

func TestMalformedInput(t *testing.T) {
	ts := build(fig1a...)
	ts[2].Pos = ts[0].Pos
	w, found, ex := Find(ts, eq, nil, 1<<20)
	if found || !ex || w != nil {
		t.Errorf("duplicate positions: %v found=%v exhausted=%v", w, found, ex)
	}
	if err := Verify(ts, eq, &Witness[token]{V: addr("SC"), Token: weth, Pieces: [][]int32{{ts[0].Pos}}}); err == nil {
		t.Error("Verify accepted a list with duplicate positions")
	}
	// A nil eq is identity.
	if _, found, ex := Find(build(fig1a...), nil, nil, 1<<20); !found || ex {
		t.Errorf("nil eq: found=%v exhausted=%v", found, ex)
	}
	// A non-reflexive eq: Verify rejects the junction candidates, so the
	// "no" is not definite.
	never := func(a, b token) bool { return false }
	if w, found, ex := Find(build(fig1a...), never, nil, 1<<20); found || !ex {
		t.Errorf("non-reflexive eq: %v found=%v exhausted=%v", w, found, ex)
	}
}

func TestVerify(t *testing.T) {
	star := build(starTxR...)
	f1a := build(fig1a...)
	wethOutEthBack := build(leg{"SC", "P", "1", weth}, leg{"P", "SC", "1.1", eth})
	good := func() *Witness[token] {
		return &Witness[token]{V: addr("SC"), Token: weth, Pieces: pieces([]int{0, 1, 2}), Gain: signed("0.1", weth)}
	}
	with := func(f func(w *Witness[token])) *Witness[token] { w := good(); f(w); return w }
	cases := []struct {
		name    string
		ts      []transfer
		w       *Witness[token]
		wantErr string // "" accepts
	}{
		{"accept_fig1a", f1a, good(), ""},
		{"accept_full_star_three_pieces", star, &Witness[token]{V: addr("SC"), Token: weth,
			Pieces: pieces([]int{0, 1}, []int{2, 3, 4}, []int{5, 6, 7}), Gain: signed("0.0023", weth)}, ""},
		{"reject_nil", f1a, nil, "no witness"},
		{"reject_no_piece", f1a, with(func(w *Witness[token]) { w.Pieces = nil }), "no piece"},
		{"reject_empty_piece", f1a, with(func(w *Witness[token]) { w.Pieces = append(w.Pieces, nil) }), "empty"},
		{"reject_unknown_position", f1a, with(func(w *Witness[token]) { w.Pieces[0][1] = 9999 }), "no transfer"},
		{"reject_reused_position", f1a, with(func(w *Witness[token]) { w.Pieces[0] = append(w.Pieces[0], w.Pieces[0][0]) }), "twice"},
		{"reject_disconnected_piece", f1a, with(func(w *Witness[token]) { w.Pieces = pieces([]int{0, 2}) }), "not connected"},
		{"reject_non_maximal_split", f1a, with(func(w *Witness[token]) { w.Pieces = pieces([]int{0}, []int{1, 2}) }), "not maximal"},
		{"reject_not_originating_at_v", f1a, with(func(w *Witness[token]) { w.Pieces = pieces([]int{1, 2}) }), "originates"},
		{"reject_not_terminating_at_v", f1a, with(func(w *Witness[token]) { w.Pieces = pieces([]int{0, 1}) }), "terminates"},
		{"reject_wrong_v", f1a, with(func(w *Witness[token]) { w.V = addr("P1") }), "originates"},
		{"reject_wrong_token", f1a, with(func(w *Witness[token]) { w.Token = eth }), "first transfer is in"},
		{"reject_wrong_gain", f1a, with(func(w *Witness[token]) { w.Gain = signed("0.2", weth) }), "claims"},
		{"reject_negative_claimed_gain", f1a, with(func(w *Witness[token]) { w.Gain.Neg = true }), "claims"},
		{"reject_weth_out_eth_back_negative", wethOutEthBack, &Witness[token]{V: addr("SC"), Token: weth,
			Pieces: pieces([]int{0, 1}), Gain: signed("1.1", weth)}, "not positive"},
		{"reject_last_not_equivalent", build(leg{"SC", "P", "1", weth}, leg{"Q", "SC", "2", weth}, leg{"P", "SC", "1", usdt}),
			&Witness[token]{V: addr("SC"), Token: weth, Pieces: pieces([]int{0}, []int{1}, []int{2}), Gain: signed("1", weth)}, "not equivalent"},
		{"reject_losing", build(leg{"SC", "P1", "1", weth}, leg{"P1", "SC", "0.9", weth}),
			&Witness[token]{V: addr("SC"), Token: weth, Pieces: pieces([]int{0, 1}), Gain: signed("0.1", weth)}, "not positive"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Verify(c.ts, eq, c.w)
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("rejected %v: %v", c.w, err)
			case c.wantErr != "" && err == nil:
				t.Errorf("accepted %v, want error containing %q", c.w, c.wantErr)
			case c.wantErr != "" && !strings.Contains(err.Error(), c.wantErr):
				t.Errorf("error %q, want one containing %q", err, c.wantErr)
			}
		})
	}
}

func TestWitnessString(t *testing.T) {
	var nilW *Witness[token]
	if nilW.String() == "" || nilW.Len() != 0 {
		t.Error("nil witness")
	}
	w := &Witness[token]{V: addr("SC"), Token: weth, Pieces: pieces([]int{0, 1}, []int{2}), Gain: signed("0.1", weth)}
	s := w.String()
	if !strings.Contains(s, "2 piece(s)") || !strings.Contains(s, "3 transfer(s)") || !strings.Contains(s, "100000000000000000") {
		t.Errorf("String() = %q", s)
	}
}

// --- brute force -----------------------------------------------------------

// defn5 checks Definition 5 for the sequence seq directly: closed at v (or
// at any address when at is nil), first and last =_τ, exact δ > 0. Any
// sequence of distinct transfers is the concatenation of its maximal
// connected runs, so no other clause can fail.
func defn5(seq []*transfer, at *common.Address) bool {
	first, last := seq[0], seq[len(seq)-1]
	v := first.From
	if (at != nil && v != *at) || last.To != v || !eq(first.Token, last.Token) {
		return false
	}
	d := new(big.Int)
	for _, t := range seq {
		if t.Token == first.Token {
			if t.To == v {
				d.Add(d, t.Amount.ToBig())
			}
			if t.From == v {
				d.Sub(d, t.Amount.ToBig())
			}
		}
	}
	return d.Sign() > 0
}

// brute enumerates every sequence of distinct transfers of ts of length
// 1..maxLen (only connected ones when connected) and reports whether one
// is a Definition 5 witness.
func brute(ts []transfer, at *common.Address, maxLen int, connected bool) bool {
	used := make([]bool, len(ts))
	var seq []*transfer
	var rec func() bool
	rec = func() bool {
		if len(seq) > 0 && defn5(seq, at) {
			return true
		}
		if len(seq) == maxLen {
			return false
		}
		for i := range ts {
			if used[i] || (connected && len(seq) > 0 && seq[len(seq)-1].To != ts[i].From) {
				continue
			}
			used[i] = true
			seq = append(seq, &ts[i])
			ok := rec()
			seq = seq[:len(seq)-1]
			used[i] = false
			if ok {
				return true
			}
		}
		return false
	}
	return rec()
}

var randAddrs = []common.Address{addr("A0"), addr("A1"), addr("A2"), addr("A3")}
var randTokens = []token{weth, eth, usdt} // WETH =_τ ETH

// randomTransfers draws n transfers over 4 addresses and 3 tokens with
// amounts from amount(), at distinct, shuffled positions.
func randomTransfers(r *rand.Rand, n int, amount func() uint256.Int) []transfer {
	perm := r.Perm(n)
	ts := make([]transfer, n)
	for i := range ts {
		ts[i] = transfer{
			From: randAddrs[r.Intn(len(randAddrs))], To: randAddrs[r.Intn(len(randAddrs))],
			Amount: amount(), Token: randTokens[r.Intn(len(randTokens))], Pos: int32(3*perm[i] + 1),
		}
	}
	return ts
}

type propStats struct{ queries, any, single, junctionOnly, singleMiss int }

// checkAgainstBrute runs Find and the single-run search on ts, at nil and at
// every address, against brute force over sequences of length ≤ maxLen
// (exhaustive when len(ts) ≤ maxLen). exactSingle demands that the
// single-run search find every single-run witness (no overflow possible).
func checkAgainstBrute(t *testing.T, ts []transfer, maxLen int, exactSingle bool, st *propStats) {
	t.Helper()
	ats := []*common.Address{nil}
	for i := range randAddrs {
		ats = append(ats, &randAddrs[i])
	}
	for _, at := range ats {
		st.queries++
		w, found, exhausted := Find(ts, eq, at, 1<<22)
		if exhausted {
			t.Fatalf("%s: exhausted", dump(ts, at))
		}
		if found {
			if err := Verify(ts, eq, w); err != nil {
				t.Fatalf("%s: Find returned %v, which Verify rejects: %v", dump(ts, at), w, err)
			}
			if at != nil && w.V != *at {
				t.Fatalf("%s: witness at the wrong address: %v", dump(ts, at), w)
			}
			// Every witness Find returns ends with a transfer in τ exactly
			// (see doc.go: =_τ never decides existence).
			lastPiece := w.Pieces[len(w.Pieces)-1]
			if tokenAt(ts, lastPiece[len(lastPiece)-1]) != w.Token {
				t.Fatalf("%s: last transfer of %v not in τ exactly", dump(ts, at), w)
			}
		}
		anyWitness := brute(ts, at, maxLen, false)
		if found != anyWitness {
			t.Fatalf("%s: Find found=%v (%v), brute force (any m) says %v", dump(ts, at), found, w, anyWitness)
		}
		single := brute(ts, at, maxLen, true)
		for _, prune := range []bool{true, false} {
			ws, ok := findSingle(ts, eq, at, 1<<22, prune)
			if !ok {
				t.Fatalf("%s: single-run search exhausted (prune=%v)", dump(ts, at), prune)
			}
			if ws != nil {
				if err := Verify(ts, eq, ws); err != nil || len(ws.Pieces) != 1 {
					t.Fatalf("%s: single-run witness %v: %v", dump(ts, at), ws, err)
				}
			}
			if ws != nil && !single {
				t.Fatalf("%s: single-run search found %v, brute force found none", dump(ts, at), ws)
			}
			if ws == nil && single {
				if exactSingle {
					t.Fatalf("%s: single-run search (prune=%v) found nothing, brute force found a walk", dump(ts, at), prune)
				}
				if prune {
					st.singleMiss++
				}
			}
		}
		if found {
			st.any++
			if single {
				st.single++
			} else {
				st.junctionOnly++
			}
			if exactSingle && single != (len(w.Pieces) == 1) {
				t.Fatalf("%s: Find returned %v but a one-piece witness exists=%v", dump(ts, at), w, single)
			}
		}
	}
}

func tokenAt(ts []transfer, pos int32) token {
	for _, t := range ts {
		if t.Pos == pos {
			return t.Token
		}
	}
	return token{}
}

func dump(ts []transfer, at *common.Address) string {
	var b strings.Builder
	if at != nil {
		fmt.Fprintf(&b, "at %s; ", addrKey(*at)[:8])
	}
	for _, t := range ts {
		fmt.Fprintf(&b, "[%d %s→%s %s %s] ", t.Pos, addrKey(t.From)[:8], addrKey(t.To)[:8], t.Amount.Dec(), t.Token.Key()[:6])
	}
	return b.String()
}

// TestRandomSmallAgainstBruteForce: 4000 random lists of 0..5 transfers
// (4 addresses, 3 tokens, amounts 0..5). Brute force over all sequences of
// length ≤ 5 is exhaustive there, so existence must agree exactly, for
// Find (any m) and for the single-run search (m = 1), and Find must return
// a one-piece witness exactly when one exists.
func TestRandomSmallAgainstBruteForce(t *testing.T) {
	start := time.Now()
	r := rand.New(rand.NewSource(1))
	var st propStats
	const cases = 4000
	for i := 0; i < cases; i++ {
		ts := randomTransfers(r, r.Intn(6), func() uint256.Int { return *uint256.NewInt(uint64(r.Intn(6))) })
		checkAgainstBrute(t, ts, 5, true, &st)
	}
	t.Logf("%d lists, %d queries: %d with a witness (%d one-piece, %d junction-only) in %v",
		cases, st.queries, st.any, st.single, st.junctionOnly, time.Since(start))
}

// TestRandomLongerAgainstBruteForce: lists of 6..7 transfers; brute force
// still covers every sequence (length ≤ 7).
func TestRandomLongerAgainstBruteForce(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	start := time.Now()
	r := rand.New(rand.NewSource(2))
	var st propStats
	const cases = 300
	for i := 0; i < cases; i++ {
		ts := randomTransfers(r, 6+r.Intn(2), func() uint256.Int { return *uint256.NewInt(uint64(r.Intn(6))) })
		checkAgainstBrute(t, ts, 7, true, &st)
	}
	t.Logf("%d lists, %d queries: %d with a witness (%d one-piece, %d junction-only) in %v",
		cases, st.queries, st.any, st.single, st.junctionOnly, time.Since(start))
}

// TestRandomHugeAmounts: amounts from {0, 1, 2, 2^256-2, 2^256-1}. Find
// must not panic, must return only verified witnesses, and must agree with
// brute force on existence (the junction phase never overflows). The
// single-run search may abandon walks whose running balance leaves 256
// bits; such misses are counted, not failed.
func TestRandomHugeAmounts(t *testing.T) {
	start := time.Now()
	r := rand.New(rand.NewSource(3))
	var maxv, maxm1 uint256.Int
	maxv.SetAllOne()
	maxm1.SubUint64(&maxv, 1)
	choices := []uint256.Int{*uint256.NewInt(0), *uint256.NewInt(1), *uint256.NewInt(2), maxm1, maxv}
	var st propStats
	const cases = 2000
	for i := 0; i < cases; i++ {
		ts := randomTransfers(r, r.Intn(6), func() uint256.Int { return choices[r.Intn(len(choices))] })
		checkAgainstBrute(t, ts, 5, false, &st)
	}
	t.Logf("%d lists, %d queries: %d with a witness, %d single-run misses from overflow, in %v",
		cases, st.queries, st.any, st.singleMiss, time.Since(start))
}

// TestDeterministicAndOrderIndependent: Find depends on positions, not on
// the order of the list.
func TestDeterministicAndOrderIndependent(t *testing.T) {
	r := rand.New(rand.NewSource(4))
	for i := 0; i < 1000; i++ {
		ts := randomTransfers(r, 1+r.Intn(8), func() uint256.Int { return *uint256.NewInt(uint64(r.Intn(6))) })
		w1, f1, e1 := Find(ts, eq, nil, 1<<20)
		shuffled := append([]transfer(nil), ts...)
		r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		w2, f2, e2 := Find(shuffled, eq, nil, 1<<20)
		if f1 != f2 || e1 != e2 || !reflect.DeepEqual(w1, w2) {
			t.Fatalf("%s: %v/%v/%v vs shuffled %v/%v/%v", dump(ts, nil), w1, f1, e1, w2, f2, e2)
		}
	}
}

// TestBudgetNeverPanics: every budget from 0 up on random lists gives a
// consistent answer: a found witness always verifies, and a definite "no"
// matches the unbounded answer.
func TestBudgetNeverPanics(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for i := 0; i < 300; i++ {
		ts := randomTransfers(r, r.Intn(9), func() uint256.Int { return *uint256.NewInt(uint64(r.Intn(6))) })
		_, want, _ := Find(ts, eq, nil, 1<<22)
		for b := 0; b < 40; b++ {
			w, found, exhausted := Find(ts, eq, nil, b)
			if found {
				if err := Verify(ts, eq, w); err != nil {
					t.Fatalf("budget %d: %v: %v", b, w, err)
				}
			}
			if !exhausted && found != want {
				t.Fatalf("budget %d: definite found=%v, unbounded says %v", b, found, want)
			}
		}
	}
}
