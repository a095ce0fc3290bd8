package scenario

import (
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// These tests read only the saved bundles under examples/scenarios and the
// truth file: they need no node and no npm setup.

const examplesDir = "../../examples/scenarios"

func loadTruth(t *testing.T) *Truth {
	t.Helper()
	tr, err := ReadTruth(filepath.Join(examplesDir, "truth.json"))
	if err != nil {
		t.Fatalf("%v (regenerate with: go run ./internal/scenario/cmd/gen)", err)
	}
	return tr
}

// decodeOne decodes a bundle file and returns its single transaction.
func decodeOne(t *testing.T, path, wantHash string) *normalform.Tx {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return decodeBytes(t, path, data, wantHash)
}

func decodeBytes(t *testing.T, name string, data []byte, wantHash string) *normalform.Tx {
	t.Helper()
	res := trace.Decode(data, trace.Options{Source: name})
	for _, e := range res.Errors {
		t.Errorf("%s: %v", name, e)
	}
	if len(res.Txs) != 1 {
		t.Fatalf("%s: decoded %d transactions, want 1", name, len(res.Txs))
	}
	tx := res.Txs[0]
	if !strings.EqualFold(tx.Meta.Hash.Hex(), wantHash) {
		t.Fatalf("%s: decoded tx %s, want %s", name, tx.Meta.Hash.Hex(), wantHash)
	}
	return tx
}

// flows sums the decoded transfers per address and token key: +amount at
// the destination, −amount at the source.
func flows(tx *normalform.Tx) map[string]map[string]*big.Int {
	out := map[string]map[string]*big.Int{}
	add := func(a normalform.Address, key string, v *big.Int) {
		k := normalform.AddrKey(a)
		if out[k] == nil {
			out[k] = map[string]*big.Int{}
		}
		if out[k][key] == nil {
			out[k][key] = new(big.Int)
		}
		out[k][key].Add(out[k][key], v)
	}
	for i := range tx.Transfers {
		tr := &tx.Transfers[i]
		v := tr.Amount.ToBig()
		add(tr.To, tr.Token.Key(), v)
		add(tr.From, tr.Token.Key(), new(big.Int).Neg(v))
	}
	return out
}

// checkAgainstTruth compares the decoded flows with the chain's gross
// balance changes at every tracked address, for every tracked token. The
// one exclusion: a token contract's own balance of its own token, because
// flowq names the emitting contract instead of the null address in mints
// and burns (README, "What counts as a transfer").
func checkAgainstTruth(t *testing.T, tr *Truth, tc *TruthCase, tx *normalform.Tx, shape string) {
	t.Helper()
	got := flows(tx)
	tracked := map[string]bool{}
	for _, k := range tr.Tokens {
		tracked[k] = true
	}
	for i := range tx.Transfers {
		if k := tx.Transfers[i].Token.Key(); !tracked[k] {
			t.Errorf("%s/%s: transfer #%d moves token %s, which the truth does not track", shape, tc.Name, i, k)
		}
	}
	var bad []string
	for _, a := range tr.Addresses {
		for _, k := range tr.Tokens {
			if strings.HasPrefix(k, a) { // the token contract itself
				continue
			}
			want := new(big.Int)
			if s, ok := tc.Gross[a][k]; ok {
				want.SetString(s, 10)
			}
			have := new(big.Int)
			if v := got[a][k]; v != nil {
				have = v
			}
			if have.Cmp(want) != 0 {
				bad = append(bad, fmt.Sprintf("%s (%s) %s (%s): chain %s, decoded %s", tr.Names[a], a, tr.Names[strings.SplitN(k, "/", 2)[0]], k, want, have))
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Errorf("%s/%s: %s", shape, tc.Name, b)
	}
}

// TestDecodedFlowsMatchChain is test (a): on real contract traces, the
// decoded transfers sum, at every tracked address and token, to exactly the
// gross balance change the chain shows, for both trace shapes.
func TestDecodedFlowsMatchChain(t *testing.T) {
	tr := loadTruth(t)
	if len(tr.Scenarios) != len(Scenarios()) {
		t.Errorf("truth has %d scenarios, the code %d: regenerate with go run ./internal/scenario/cmd/gen", len(tr.Scenarios), len(Scenarios()))
	}
	for i := range tr.Scenarios {
		tc := &tr.Scenarios[i]
		t.Run(tc.Name, func(t *testing.T) {
			for shape, file := range map[string]string{"geth": tc.Geth, "parity": tc.Parity} {
				tx := decodeOne(t, filepath.Join(examplesDir, file), tc.Tx)
				checkAgainstTruth(t, tr, tc, tx, shape)
				if wantStatus := map[string]normalform.Status{"success": normalform.StatusSuccess, "failed": normalform.StatusFailed}[tc.Status]; tx.Meta.Status != wantStatus {
					t.Errorf("%s: status %s, truth %s", shape, tx.Meta.Status, tc.Status)
				}
				if !tx.Meta.HasReceipt || !tx.Meta.HasHeader {
					t.Errorf("%s: the bundle lacks a receipt or header (receipt %v header %v)", shape, tx.Meta.HasReceipt, tx.Meta.HasHeader)
				}
				cost := new(big.Int).Mul(new(big.Int).SetUint64(tx.Meta.GasUsed), tx.Meta.EffectiveGasPrice.ToBig())
				if cost.String() != tc.GasCost {
					t.Errorf("%s: gas cost %s, truth %s", shape, cost, tc.GasCost)
				}
				if normalform.AddrKey(tx.Meta.From) != tc.From || normalform.AddrKey(tx.Meta.To) != tc.To {
					t.Errorf("%s: from %s to %s, truth %s %s", shape, normalform.AddrKey(tx.Meta.From), normalform.AddrKey(tx.Meta.To), tc.From, tc.To)
				}
			}
		})
	}
}

// TestTruthShape checks the truth file's promises that the engine's tests
// will rely on.
func TestTruthShape(t *testing.T) {
	tr := loadTruth(t)
	weth := normalform.AddrKey(MainnetWETH)
	var ethClaim string // the PoolManager's ERC-6909 claim on ETH: a V4 bot may keep its gain so
	for a, name := range tr.Names {
		if name == "poolManager" {
			ethClaim = normalform.Token{Addr: common.HexToAddress(a), Kind: normalform.Multi6909}.Key()
		}
	}
	seen := map[string]bool{}
	for _, tc := range tr.Scenarios {
		seen[tc.Name] = true
		switch tc.Class {
		case "arbitrage":
			// WETH and ETH together: a V4 bot may be paid in ETH, or keep
			// its gain as a claim on ETH.
			p := new(big.Int)
			for _, k := range []string{weth, normalform.NativeToken.Key(), ethClaim} {
				if v, ok := new(big.Int).SetString(tc.Profit[k], 10); ok {
					p.Add(p, v)
				}
			}
			if tc.Origin == "" || p.Sign() <= 0 {
				t.Errorf("%s: an arbitrage needs an origin and a positive WETH (with ETH and the claim on ETH) gross profit, have %q %v", tc.Name, tc.Origin, tc.Profit)
			}
		case "none":
			if tc.Origin != "" {
				t.Errorf("%s: class none with an origin", tc.Name)
			}
		default:
			t.Errorf("%s: class %q", tc.Name, tc.Class)
		}
	}
	for _, n := range []string{"two_pool_arb", "triangular_arb", "star_r", "star_s", "flash_swap_arb", "coinbase_arb", "loses_after_gas", "reverted_attempt",
		"router_swap", "router_multihop", "wrap", "unwrap", "liquidity_add", "liquidity_remove", "nft_erc721", "nft_erc1155", "nft_erc1155_batch", "eip7702_self", "inner_cycle", "v3_v2_arb",
		"v3_flash_first", "v3_flash_first_inner", "v2_flash_first", "v2_cascade_3", "v2_cascade_5", "v2_cascade_3_fifo", "v2_cascade_5_fifo",
		"wrap_cycle_refund", "executor_controller", "cold_wallet_payout", "flash_loan_fee", "flash_loan_repay_only", "sandwich_front", "sandwich_victim", "sandwich_back"} {
		if !seen[n] {
			t.Errorf("scenario %s is missing from the truth", n)
		}
	}
	byName := map[string]TruthCase{}
	for _, tc := range tr.Scenarios {
		byName[tc.Name] = tc
	}
	if c := byName["coinbase_arb"]; c.CoinbasePayment == "0" || c.Gross[tr.Coinbase][normalform.NativeToken.Key()] != c.CoinbasePayment {
		t.Errorf("coinbase_arb: coinbase payment %s, gross at the coinbase %v", c.CoinbasePayment, c.Gross[tr.Coinbase])
	}
	if c := byName["loses_after_gas"]; !lessDec(c.Profit[weth], c.GasCost) {
		t.Errorf("loses_after_gas: gross %s is not below the gas cost %s", c.Profit[weth], c.GasCost)
	}
	if c := byName["eip7702_self"]; c.From != c.To || c.Origin != c.From || c.Type != 4 {
		t.Errorf("eip7702_self: from %s to %s origin %s type %d", c.From, c.To, c.Origin, c.Type)
	}
	if c := byName["inner_cycle"]; c.Origin == c.To {
		t.Errorf("inner_cycle: the cycle closes at the recipient")
	}
	if c := byName["reverted_attempt"]; c.Status != "failed" || len(c.Gross) != 0 {
		t.Errorf("reverted_attempt: status %s, gross %v", c.Status, c.Gross)
	}
}

// TestFlowTruths checks the truth of the issue-14 scenarios against their
// designs (flows.go): who gains, who is paid, which block they share.
func TestFlowTruths(t *testing.T) {
	tr := loadTruth(t)
	byName := map[string]TruthCase{}
	for _, tc := range tr.Scenarios {
		byName[tc.Name] = tc
	}
	addr := map[string]string{}
	for a, n := range tr.Names {
		addr[n] = a
	}
	weth, native := normalform.AddrKey(MainnetWETH), normalform.NativeToken.Key()
	for _, tc := range tr.Scenarios {
		if tc.Gain == nil {
			continue
		}
		// origin_gain = gross at the origin + coinbase payment + payouts,
		// ETH folded into WETH: recomputed here.
		sum := new(big.Int)
		for k, v := range tc.Profit {
			if k != weth && k != native {
				t.Errorf("%s: the origin's gross holds %s %s", tc.Name, k, v)
				continue
			}
			sum.Add(sum, dec(t, v))
		}
		sum.Add(sum, dec(t, tc.CoinbasePayment))
		for _, p := range tc.Payouts {
			if p.Token != weth && p.Token != native {
				t.Errorf("%s: a payout in %s", tc.Name, p.Token)
			}
			sum.Add(sum, dec(t, p.Amount))
		}
		if got := tc.Gain[weth]; got != sum.String() || len(tc.Gain) != 1 {
			t.Errorf("%s: origin_gain %v, gross + coinbase payment + payouts = %s WETH", tc.Name, tc.Gain, sum)
		}
	}
	payout := func(name, payee, token string) {
		t.Helper()
		tc := byName[name]
		if len(tc.Payouts) != 1 || tc.Payouts[0].ToName != payee || tc.Payouts[0].Token != token || dec(t, tc.Payouts[0].Amount).Sign() <= 0 {
			t.Errorf("%s: payouts %+v, want one positive payout in %s to %s", name, tc.Payouts, token, payee)
		}
	}
	for _, n := range []string{"v3_flash_first", "v2_flash_first", "v3_flash_first_inner", "wrap_cycle_refund"} {
		if dec(t, byName[n].CoinbasePayment).Sign() <= 0 {
			t.Errorf("%s: no builder payment (%s)", n, byName[n].CoinbasePayment)
		}
	}
	payout("v3_flash_first", "owner_wallet", native)
	payout("v2_flash_first", "owner_wallet", native)
	payout("v3_flash_first_inner", "controller", native)
	payout("cold_wallet_payout", "cold_wallet", weth)
	for _, n := range []string{"executor_controller", "v3_flash_first_inner"} {
		if c := byName[n]; c.Origin == c.From || c.Origin == c.To {
			t.Errorf("%s: the origin %s is the sender or the recipient", n, c.OriginName)
		}
	}
	for _, n := range []string{"v3_flash_first", "v2_flash_first", "cold_wallet_payout", "flash_loan_fee", "wrap_cycle_refund", "v2_cascade_3", "v2_cascade_5_fifo"} {
		if c := byName[n]; c.Origin != c.To {
			t.Errorf("%s: the origin %s is not the recipient", n, c.OriginName)
		}
	}
	// The sender's ETH went to the bot and came back.
	if c := byName["wrap_cycle_refund"]; len(c.Gross[c.From]) != 0 {
		t.Errorf("wrap_cycle_refund: the sender's gross %v, want none", c.Gross[c.From])
	}
	// The lender gains exactly its fee, in the token it lent; in the
	// control the borrower pays it and nothing else moves.
	fee := func(amount string) string {
		return new(big.Int).Div(new(big.Int).Mul(dec(t, amount), big.NewInt(9)), big.NewInt(10_000)).String()
	}
	if c := byName["flash_loan_fee"]; len(c.Gross[addr["lender"]]) != 1 || c.Gross[addr["lender"]][weth] != fee("3000000000000000000") {
		t.Errorf("flash_loan_fee: the lender's gross %v, want the 0.09%% fee on 3 WETH", c.Gross[addr["lender"]])
	}
	if c := byName["flash_loan_repay_only"]; len(c.Gross) != 2 || c.Gross[addr["lender"]][weth] != fee("5000000000000000000") ||
		c.Gross[addr["borrower"]][weth] != "-"+fee("5000000000000000000") {
		t.Errorf("flash_loan_repay_only: gross %v, want the fee from the borrower to the lender and nothing else", c.Gross)
	}
	// The sandwich: three legs in one block, in order; the bot gains WETH
	// over the three and gives back every FLOKI it bought.
	bot, floki := addr["sandwich_bot"], addr["FLOKI"]
	block := byName["sandwich_front"].Block
	wethSum, flokiSum := new(big.Int), new(big.Int)
	for i, n := range []string{"sandwich_front", "sandwich_victim", "sandwich_back"} {
		c := byName[n]
		if c.Block != block || c.TxIndex == nil || *c.TxIndex != i || c.BlockTxs != 3 || c.Class != "none" {
			t.Errorf("%s: block %d index %v of %d, class %s; want block %d index %d of 3, none", n, c.Block, c.TxIndex, c.BlockTxs, c.Class, block, i)
		}
		if v, ok := c.Gross[bot][weth]; ok {
			wethSum.Add(wethSum, dec(t, v))
		}
		if v, ok := c.Gross[bot][floki]; ok {
			flokiSum.Add(flokiSum, dec(t, v))
		}
	}
	if wethSum.Sign() <= 0 || flokiSum.Sign() != 0 {
		t.Errorf("sandwich: the bot's WETH over the three legs %s, FLOKI %s; want a gain and none left", wethSum, flokiSum)
	}
	for _, tc := range tr.Scenarios {
		if tc.TxIndex != nil && !strings.HasPrefix(tc.Name, "sandwich_") {
			t.Errorf("%s shares its block", tc.Name)
		}
	}
}

// TestCascadeUnwindOrder checks the cascades' unwinding in the decoded
// transfers: every transfer is between the bot and a pair; the pairs pay
// the bot (the loans) in one order and the bot pays them back in the
// reverse order (nested: first borrowed, last repaid) or in the same
// order (first borrowed, first repaid).
func TestCascadeUnwindOrder(t *testing.T) {
	tr := loadTruth(t)
	var bot normalform.Address
	for a, n := range tr.Names {
		if n == "cascade_bot" {
			bot = common.HexToAddress(a)
		}
	}
	for _, c := range []struct {
		name string
		arms int
		fifo bool
	}{{"v2_cascade_3", 3, false}, {"v2_cascade_5", 5, false}, {"v2_cascade_3_fifo", 3, true}, {"v2_cascade_5_fifo", 5, true}} {
		var tc *TruthCase
		for i := range tr.Scenarios {
			if tr.Scenarios[i].Name == c.name {
				tc = &tr.Scenarios[i]
			}
		}
		if tc == nil {
			t.Fatalf("%s is missing from the truth", c.name)
		}
		for _, file := range []string{tc.Geth, tc.Parity} {
			tx := decodeOne(t, filepath.Join(examplesDir, file), tc.Tx)
			var lent, repaid []normalform.Address
			for i := range tx.Transfers {
				x := &tx.Transfers[i]
				switch {
				case x.To == bot && x.From != bot:
					lent = append(lent, x.From)
				case x.From == bot && x.To != bot:
					repaid = append(repaid, x.To)
				default:
					t.Errorf("%s: transfer #%d does not involve the bot once", file, x.Pos)
				}
			}
			if n := 2*c.arms + 1; len(lent) != n || len(repaid) != n {
				t.Fatalf("%s: %d loans and %d repayments, want %d each", file, len(lent), len(repaid), n)
			}
			want := slices.Clone(lent)
			if !c.fifo {
				slices.Reverse(want)
			}
			if !slices.Equal(repaid, want) {
				t.Errorf("%s: pairs repaid in the order %v, lent in %v (fifo %v)", file, repaid, lent, c.fifo)
			}
		}
	}
}

func lessDec(a, b string) bool {
	x, ok1 := new(big.Int).SetString(a, 10)
	y, ok2 := new(big.Int).SetString(b, 10)
	return ok1 && ok2 && x.Cmp(y) < 0
}
