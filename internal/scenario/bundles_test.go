package scenario

import (
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

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
	seen := map[string]bool{}
	for _, tc := range tr.Scenarios {
		seen[tc.Name] = true
		switch tc.Class {
		case "arbitrage":
			if tc.Origin == "" || tc.Profit[weth] == "" || strings.HasPrefix(tc.Profit[weth], "-") {
				t.Errorf("%s: an arbitrage needs an origin and a positive WETH gross profit, have %q %v", tc.Name, tc.Origin, tc.Profit)
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
		"router_swap", "router_multihop", "wrap", "unwrap", "liquidity_add", "liquidity_remove", "nft_erc721", "nft_erc1155", "nft_erc1155_batch", "eip7702_self", "inner_cycle", "v3_v2_arb"} {
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

func lessDec(a, b string) bool {
	x, ok1 := new(big.Int).SetString(a, 10)
	y, ok2 := new(big.Int).SetString(b, 10)
	return ok1 && ok2 && x.Cmp(y) < 0
}
