package scenario

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/flowq/flowq/normalform"
)

// erc6909Transfer is the topic0 of ERC-6909's Transfer(address caller,
// address indexed from, address indexed to, uint256 indexed id, uint256
// amount), which Uniswap V4's PoolManager emits when it mints, burns or
// moves claims. It is not ERC-20's Transfer(address,address,uint256)
// topic0, but it has four topics as ERC-721's Transfer does: a decoder that
// matched on the topic count or on the name would misread it.
var erc6909Transfer = crypto.Keccak256Hash([]byte("Transfer(address,address,address,uint256,uint256)"))

// hop is a transfer's ends.
type hop struct{ from, to common.Address }

func (h hop) String() string { return h.from.Hex() + " → " + h.to.Hex() }

// TestERC6909ClaimsNotReadAsERC20 decodes v4_user_swap_claims, where the
// PoolManager mints the user an ERC-6909 claim on ONDO, in both trace
// shapes, and checks that the claim's Transfer log is not read as an
// ERC-20 or ERC-721 transfer (no transfer comes from its log index, none
// is in a token of the manager's) and that the transfers are exactly the
// ETH the user pays, through the router, to the manager.
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
	pm, router, user := addr("poolManager"), addr("v4SwapRouter"), addr("user")
	for _, file := range []string{tc.Geth, tc.Parity} {
		path := filepath.Join(examplesDir, file)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var raw struct {
			Receipts []struct {
				Logs []struct {
					Address  common.Address `json:"address"`
					Topics   []common.Hash  `json:"topics"`
					LogIndex string         `json:"logIndex"`
				} `json:"logs"`
			} `json:"receipts"`
		}
		if err := json.Unmarshal(data, &raw); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		claimLogs := map[int32]bool{}
		for _, r := range raw.Receipts {
			for _, l := range r.Logs {
				if len(l.Topics) == 4 && l.Topics[0] == erc6909Transfer && l.Address == pm {
					i, err := strconv.ParseInt(strings.TrimPrefix(l.LogIndex, "0x"), 16, 32)
					if err != nil {
						t.Fatalf("%s: log index %q", path, l.LogIndex)
					}
					if common.BytesToAddress(l.Topics[1][:]) != (common.Address{}) || common.BytesToAddress(l.Topics[2][:]) != user {
						t.Errorf("%s: the claim's Transfer is not a mint to the user: %v", path, l.Topics)
					}
					claimLogs[int32(i)] = true
				}
			}
		}
		if len(claimLogs) != 1 {
			t.Fatalf("%s: %d ERC-6909 Transfer logs of the PoolManager, want the claim's mint", path, len(claimLogs))
		}
		a := analyzeFile(t, cfg, path, tc.Tx)
		for _, x := range a.Tx.Transfers {
			if claimLogs[x.LogIndex] {
				t.Errorf("%s: the ERC-6909 claim log #%d is decoded as a transfer (%v, %s → %s)", path, x.LogIndex, x.Event, x.From.Hex(), x.To.Hex())
			}
			if x.Token.Addr == pm {
				t.Errorf("%s: a transfer in a token of the PoolManager: %+v", path, x)
			}
		}
		type hop struct{ from, to common.Address }
		var got []hop
		for _, x := range a.Tx.Transfers {
			if x.Token != normalform.NativeToken {
				t.Errorf("%s: a transfer in %s, want only ETH", path, x.Token.Key())
			}
			got = append(got, hop{x.From, x.To})
		}
		if want := []hop{{user, router}, {router, pm}}; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("%s: transfers %v, want user → router → manager in ETH", path, got)
		}
	}
}
