package scenario

import (
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// erc6909Transfer is the topic0 of ERC-6909's Transfer(address caller,
// address indexed from, address indexed to, uint256 indexed id, uint256
// amount), which Uniswap V4's PoolManager emits when it mints, burns or
// moves claims. It is not ERC-20's Transfer(address,address,uint256)
// topic0, but it has four topics as ERC-721's Transfer does: a decoder that
// matched on the topic count or on the name would misread it.
var erc6909Transfer = crypto.Keccak256Hash([]byte("Transfer(address,address,address,uint256,uint256)"))

// hop is a transfer's ends and token.
type hop struct {
	from, to common.Address
	token    normalform.Token
}

func (h hop) String() string { return h.from.Hex() + " → " + h.to.Hex() + " " + h.token.Key() }

// TestERC6909ClaimsNotReadAsERC20 decodes v4_user_swap_claims, where the
// PoolManager mints the user an ERC-6909 claim on ONDO, in both trace
// shapes and from the receipts alone, and checks that the claim's Transfer
// log is read as ERC-6909, never as ERC-20 or ERC-721: exactly one
// transfer comes from its log index, a mint from the manager to the user
// in the token (manager, id = the ONDO address) of kind Multi6909 with the
// log's amount, which is the claim the chain shows the user gaining. The
// transfers are the ETH the user pays, through the router, to the manager
// (from the receipts alone, whose bundle block lists no transaction
// values, the claim only), then the claim, and the verdict stays none.
func TestERC6909ClaimsNotReadAsERC20(t *testing.T) {
	tr := loadTruth(t)
	cfg := scenarioConfig(tr)
	var tc *TruthCase
	for i := range tr.Scenarios {
		if tr.Scenarios[i].Name == "v4_user_swap_claims" {
			tc = &tr.Scenarios[i]
		}
	}
	if tc == nil {
		t.Fatal("v4_user_swap_claims is missing from the truth")
	}
	addr := func(name string) common.Address {
		for a, n := range tr.Names {
			if n == name {
				return common.HexToAddress(a)
			}
		}
		t.Fatalf("no address named %s in the truth", name)
		return common.Address{}
	}
	pm, router, user, ondo := addr("poolManager"), addr("v4SwapRouter"), addr("user"), addr("ONDO")
	claim := normalform.Token{Addr: pm, Kind: normalform.Multi6909}
	claim.ID.SetBytes20(ondo[:])
	gained, ok := new(big.Int).SetString(tc.Gross[strings.ToLower(user.Hex())][claim.Key()], 10)
	if !ok || gained.Sign() <= 0 {
		t.Fatalf("the truth shows the user gaining %q of the claim %s, want a positive amount", tc.Gross[strings.ToLower(user.Hex())][claim.Key()], claim.Key())
	}
	for _, file := range []string{tc.Geth, tc.Parity, tc.Geth + " (receipts only)"} {
		receipts := strings.HasSuffix(file, " (receipts only)")
		path := filepath.Join(examplesDir, strings.TrimSuffix(file, " (receipts only)"))
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var raw struct {
			Receipts []struct {
				Logs []struct {
					Address  common.Address `json:"address"`
					Topics   []common.Hash  `json:"topics"`
					Data     hexutil.Bytes  `json:"data"`
					LogIndex string         `json:"logIndex"`
				} `json:"logs"`
			} `json:"receipts"`
		}
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		claimLogs := map[int32]*big.Int{}
		for _, r := range raw.Receipts {
			for _, l := range r.Logs {
				if len(l.Topics) == 4 && l.Topics[0] == erc6909Transfer && l.Address == pm {
					i, err := strconv.ParseInt(strings.TrimPrefix(l.LogIndex, "0x"), 16, 32)
					if err != nil || len(l.Data) != 64 {
						t.Fatalf("%s: log index %q, %d data bytes", path, l.LogIndex, len(l.Data))
					}
					if common.BytesToAddress(l.Topics[1][:]) != (common.Address{}) || common.BytesToAddress(l.Topics[2][:]) != user ||
						common.BytesToAddress(l.Topics[3][:]) != ondo {
						t.Errorf("%s: the claim's Transfer is not a mint of the ONDO claim to the user: %v", path, l.Topics)
					}
					claimLogs[int32(i)] = new(big.Int).SetBytes(l.Data[32:])
				}
			}
		}
		if len(claimLogs) != 1 {
			t.Fatalf("%s: %d ERC-6909 Transfer logs of the PoolManager, want the claim's mint", path, len(claimLogs))
		}
		if receipts {
			var whole map[string]json.RawMessage
			if err := json.Unmarshal(data, &whole); err != nil {
				t.Fatal(err)
			}
			delete(whole, "traces")
			if data, err = json.Marshal(whole); err != nil {
				t.Fatal(err)
			}
		}
		res := trace.Decode(data, trace.Options{Config: cfg, Source: file})
		if len(res.Errors) != 0 || len(res.Txs) != 1 {
			t.Fatalf("%s: %d transactions, errors %v", file, len(res.Txs), res.Errors)
		}
		if got := res.Txs[0].Mode(); (got == normalform.ModeReceipts) != receipts {
			t.Fatalf("%s: decoded in mode %s", file, got)
		}
		a, err := normalform.Analyze(res.Txs[0], cfg)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var got []hop
		read := 0
		for _, x := range a.Tx.Transfers {
			got = append(got, hop{x.From, x.To, x.Token})
			amt, isClaim := claimLogs[x.LogIndex]
			if !isClaim {
				if x.Token != normalform.NativeToken {
					t.Errorf("%s: a transfer in %s besides the claim, want only ETH", file, x.Token.Key())
				}
				continue
			}
			read++
			if x.Event != normalform.EvERC6909Transfer || x.Token != claim || x.Token.Kind != normalform.Multi6909 {
				t.Errorf("%s: the claim log #%d is read as %v in %s (%s), want an ERC-6909 Transfer in %s", file, x.LogIndex, x.Event, x.Token.Key(), x.Token.Kind, claim.Key())
			}
			if x.From != pm || x.To != user || !x.Is(normalform.Mint) || x.Is(normalform.Burn) {
				t.Errorf("%s: the claim is %s → %s (%v), want a mint from the manager to the user", file, x.From.Hex(), x.To.Hex(), x.Flags)
			}
			if x.Amount.ToBig().Cmp(amt) != 0 || amt.Cmp(gained) != 0 {
				t.Errorf("%s: the claim moves %s, the log says %s, the chain shows the user gaining %s", file, x.Amount.Dec(), amt, gained)
			}
		}
		if read != 1 {
			t.Errorf("%s: %d transfers from the claim's log, want 1", file, read)
		}
		want := []hop{{user, router, normalform.NativeToken}, {router, pm, normalform.NativeToken}, {pm, user, claim}}
		if receipts { // the bundle's block has no transaction values: the ETH is unseen
			want = []hop{{pm, user, claim}}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: transfers %v, want %v", file, got, want)
		}
		if a.Verdict != normalform.VerdictNone {
			t.Errorf("%s: verdict %s, want none", file, a.Verdict)
		}
	}
}

// TestV4NettedReason analyses every scenario in both shapes with the
// scenario chain's PoolManager configured: the reason v4_netted is given
// exactly to the transactions with a transfer into or out of the manager
// (the V4 scenarios), whatever their verdict, and to no other; the
// verdicts themselves are TestScenarioVerdicts'.
func TestV4NettedReason(t *testing.T) {
	tr := loadTruth(t)
	cfg := scenarioConfig(tr)
	var pm common.Address
	for a, name := range tr.Names {
		if name == "poolManager" {
			pm = common.HexToAddress(a)
		}
	}
	if !cfg.IsPoolManager(pm) {
		t.Fatalf("the scenario configuration does not list the PoolManager %s", pm.Hex())
	}
	netted := 0
	for _, tc := range tr.Scenarios {
		for _, file := range []string{tc.Geth, tc.Parity} {
			a := analyzeFile(t, cfg, filepath.Join(examplesDir, file), tc.Tx)
			touches := false
			for _, x := range a.Tx.Transfers {
				touches = touches || x.From == pm || x.To == pm
			}
			has := slices.Contains(a.Reasons, normalform.ReasonV4Netted)
			if has != touches || has != strings.HasPrefix(tc.Name, "v4_") {
				t.Errorf("%s (%s): reasons %v; touches the PoolManager: %v", tc.Name, a.Tx.Shape, a.Reasons, touches)
			}
			if has {
				netted++
			}
		}
	}
	if netted < 18 {
		t.Errorf("v4_netted on %d bundles, want the 9 V4 scenarios in both shapes", netted)
	}
}
