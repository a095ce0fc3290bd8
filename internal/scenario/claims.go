package scenario

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// The sixth phase: a V4-only triangular arbitrage settled through ERC-6909
// claims, in two transactions (contracts/V4ClaimsBot.sol). The first runs
// the route ETH → EIGEN → ZRO → ETH on three fresh V4 pools inside one
// unlock and keeps the profit as the bot's ETH claim at the PoolManager
// (an ERC-6909 mint); the second burns the claim and takes the ETH. The
// truth, from chain state: the first transaction's gain is the claim, the
// second's an exchange of the claim for as much ETH.

// setupClaims deploys the claims bot and two tokens, and creates the
// triangle's pools with the same mispricing as v4_triangle_net's.
func (w *World) setupClaims() {
	deployer := w.A("deployer")
	supply := ether("1000000000000")
	for _, sym := range []string{"EIGEN", "ZRO"} {
		w.Tokens = append(w.Tokens, w.deploy(sym, "deployer", "ERC20PresetFixedSupply", sym+" Token", sym, supply, deployer))
	}
	w.deploy("v4_claims_bot", "deployer", "V4ClaimsBot", w.A("searcher"))
	w.flush()
	pm, lr := w.A("poolManager"), w.A("v4LiquidityRouter")
	w.Claims[pm] = append(w.Claims[pm], w.A("EIGEN"), w.A("ZRO"))
	maxU := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	for _, sym := range []string{"EIGEN", "ZRO"} {
		t := w.A(sym)
		w.send("approve V4 liquidity router", "deployer", t, nil, w.callData(t, "approve", lr, maxU), 100_000)
	}
	w.flush()
	w.createPoolV4("ETH", "EIGEN", ether("100"), ether("100000"))
	w.createPoolV4("EIGEN", "ZRO", ether("100000"), ether("100000"))
	w.createPoolV4("ZRO", "ETH", ether("95000"), ether("100"))
	w.flush()
}

// claimsSwap is a V4ClaimsBot action: swapV4 selling `in` on the pool of a
// and b (exactIn 0: what the manager owes the bot in `in`).
func (w *World) claimsSwap(a, b, in string, exactIn *big.Int) Action {
	bot, pm := w.A("v4_claims_bot"), w.A("poolManager")
	key := w.v4Key(a, b)
	zeroForOne, limit := v4Direction(key, w.v4Currency(in))
	return call(bot, w.callData(bot, "swapV4", pm, key, zeroForOne, new(big.Int).Neg(exactIn), limit))
}

func claimsScenarios() []Scenario {
	return []Scenario{
		{
			Name: "v4_claims_arb_mint",
			Description: "the claims bot unlocks the PoolManager and swaps 1 ETH for EIGEN, all the EIGEN for ZRO and all the ZRO for ETH on three V4 pools with flash accounting; " +
				"it keeps the ETH the manager owes it as an ERC-6909 claim (a mint to itself) instead of taking it",
			Class: "arbitrage", Origin: "v4_claims_bot",
			Notes: "the only transfer is the claim's mint: the standard events show no cycle, so the arbitrage (its gain held as a claim on ETH at the PoolManager) is invisible to them, as v4_triangle_net's",
			build: func(w *World) *types.Transaction {
				bot, pm := w.A("v4_claims_bot"), w.A("poolManager")
				inner := []Action{
					w.claimsSwap("ETH", "EIGEN", "ETH", ether("1")),
					w.claimsSwap("EIGEN", "ZRO", "EIGEN", new(big.Int)),
					w.claimsSwap("ZRO", "ETH", "ZRO", new(big.Int)),
					call(bot, w.callData(bot, "mintAll", pm, common.Address{})),
				}
				return w.execute("searcher", bot, []Action{w.v4Unlock(inner)})
			},
		},
		{
			Name:        "v4_claims_arb_burn",
			Description: "in a later transaction the claims bot unlocks the PoolManager, burns its whole ETH claim and takes the ETH the burn credits it",
			Class:       "none",
			Notes:       "the bot gives up the claim (an ERC-6909 burn) and receives as much ETH from the manager: an exchange, no gain in this transaction (the gain was made in v4_claims_arb_mint)",
			build: func(w *World) *types.Transaction {
				bot, pm := w.A("v4_claims_bot"), w.A("poolManager")
				inner := []Action{
					call(bot, w.callData(bot, "burnAll", pm, common.Address{})),
					call(bot, w.callData(bot, "takeAll", pm, common.Address{}, bot)),
				}
				return w.execute("searcher", bot, []Action{w.v4Unlock(inner)})
			},
		},
	}
}
