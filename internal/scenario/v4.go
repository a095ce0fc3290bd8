package scenario

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// The third phase (issue 17): Uniswap V4 on the same chain. One contract,
// the PoolManager (npm @uniswap/v4-core, unmodified), holds every V4
// pool's currencies; a caller unlocks it, swaps through any number of
// pools (which only move deltas it keeps per caller and currency), and
// pays (settle) and is paid (take) once per currency at the end. Users
// swap through v4-core's PoolSwapTest router; liquidity is added through
// PoolModifyLiquidityTest; the searcher's V4Bot (contracts/V4Bot.sol) runs
// its route inside the manager's unlock callback. It runs after every
// earlier scenario, so that those keep their blocks and bytes.

// v4Fungibles are the third phase's tokens (OpenZeppelin
// ERC20PresetFixedSupply, 18 decimals).
var v4Fungibles = []string{"ONDO", "ENA", "ETHFI"}

// Uniswap V4 pools here: 0.3%, tick spacing 60, no hooks, full range.
const (
	v4Fee         = 3000
	v4TickSpacing = 60
)

// PoolKey is V4's PoolKey (Currency and IHooks are addresses in the ABI;
// the native currency is the zero address).
type PoolKey struct {
	Currency0   common.Address
	Currency1   common.Address
	Fee         *big.Int
	TickSpacing *big.Int
	Hooks       common.Address
}

// SwapParams is V4's SwapParams: amountSpecified < 0 is an exact input.
type SwapParams struct {
	ZeroForOne        bool
	AmountSpecified   *big.Int
	SqrtPriceLimitX96 *big.Int
}

// ModifyLiquidityParams is V4's ModifyLiquidityParams.
type ModifyLiquidityParams struct {
	TickLower      *big.Int
	TickUpper      *big.Int
	LiquidityDelta *big.Int
	Salt           [32]byte
}

// TestSettings is PoolSwapTest's: take the output as ERC-6909 claims,
// pay the input by burning claims.
type TestSettings struct {
	TakeClaims      bool
	SettleUsingBurn bool
}

// v4Currency is a named currency's address: "ETH" is the native currency
// (the zero address).
func (w *World) v4Currency(n string) common.Address {
	if n == "ETH" {
		return common.Address{}
	}
	return w.A(n)
}

// v4Key is the key of the V4 pool of a and b.
func (w *World) v4Key(a, b string) PoolKey {
	c0, c1 := w.v4Currency(a), w.v4Currency(b)
	if c1.Cmp(c0) < 0 {
		c0, c1 = c1, c0
	}
	return PoolKey{Currency0: c0, Currency1: c1, Fee: big.NewInt(v4Fee), TickSpacing: big.NewInt(v4TickSpacing)}
}

// v4Direction returns zeroForOne and the loosest price limit for selling
// currency `in` to the pool of key.
func v4Direction(key PoolKey, in common.Address) (bool, *big.Int) {
	zeroForOne := key.Currency0 == in
	limit, _ := new(big.Int).SetString(v3MaxSqrt, 10)
	if zeroForOne {
		limit, _ = new(big.Int).SetString(v3MinSqrt, 10)
	}
	return zeroForOne, limit
}

// createPoolV4 initialises the V4 pool of a and b at the price rb/ra and
// adds full-range liquidity for about ra of a and rb of b from the
// deployer through PoolModifyLiquidityTest (which pulls ERC-20s by
// transferFrom and refunds the ETH it was not owed).
func (w *World) createPoolV4(a, b string, ra, rb *big.Int) PoolKey {
	key := w.v4Key(a, b)
	r0, r1 := ra, rb
	if key.Currency0 != w.v4Currency(a) {
		r0, r1 = rb, ra
	}
	sq := new(big.Int).Lsh(r1, 192)
	sq.Div(sq, r0).Sqrt(sq)
	liq := new(big.Int).Sqrt(new(big.Int).Mul(r0, r1))
	pm, lr := w.A("poolManager"), w.A("v4LiquidityRouter")
	w.send("initialize V4 "+a+"/"+b, "deployer", pm, nil, w.callData(pm, "initialize", key, sq), 500_000)
	value := new(big.Int)
	if key.Currency0 == (common.Address{}) {
		value = percent(r0, 101)
	}
	params := ModifyLiquidityParams{TickLower: big.NewInt(v3MinTick), TickUpper: big.NewInt(v3MaxTick), LiquidityDelta: liq}
	w.send("liquidity V4 "+a+"/"+b, "deployer", lr, value, w.callData(lr, "modifyLiquidity", key, params, []byte{}, false, false), 1_000_000)
	w.flush()
	return key
}

// setupV4 deploys the PoolManager, its routers, the tokens and the bot,
// and creates the pools:
//
//	V4 ETH/ONDO   1000 ONDO per ETH      the user swaps; the V4 → V2 arbitrage buys here
//	A:WETH/ONDO    950 ONDO per WETH     (V2) the arbitrage sells here
//	V4 ETH/ENA    1000 ENA per ETH       the V4 triangle: ETH → ENA → ETHFI → ETH
//	V4 ENA/ETHFI  1:1
//	V4 ETHFI/ETH   950 ETHFI per ETH
func (w *World) setupV4() {
	deployer, searcher, user, weth := w.A("deployer"), w.A("searcher"), w.A("user"), w.A("WETH")
	supply := ether("1000000000000")
	for _, sym := range v4Fungibles {
		w.Tokens = append(w.Tokens, w.deploy(sym, "deployer", "ERC20PresetFixedSupply", sym+" Token", sym, supply, deployer))
	}
	pm := w.deploy("poolManager", "deployer", "PoolManager", deployer)
	w.deploy("v4SwapRouter", "deployer", "PoolSwapTest", pm)
	lr := w.deploy("v4LiquidityRouter", "deployer", "PoolModifyLiquidityTest", pm)
	w.deploy("v4_bot", "deployer", "V4Bot", searcher)
	w.Claims[pm] = []common.Address{{}} // ETH's claim, then each token's
	for _, sym := range v4Fungibles {
		w.Claims[pm] = append(w.Claims[pm], w.A(sym))
	}
	w.flush()
	maxU := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	for _, sym := range v4Fungibles {
		t := w.A(sym)
		w.send("approve V4 liquidity router", "deployer", t, nil, w.callData(t, "approve", lr, maxU), 100_000)
	}
	w.flush()

	w.createPoolV4("ETH", "ONDO", ether("100"), ether("100000"))
	w.createPool("A", "WETH", "ONDO", ether("100"), ether("95000"))
	w.createPoolV4("ETH", "ENA", ether("100"), ether("100000"))
	w.createPoolV4("ENA", "ETHFI", ether("100000"), ether("100000"))
	w.createPoolV4("ETHFI", "ETH", ether("95000"), ether("100"))

	// The user sells ONDO too (v4_user_swap_erc20); the bot's capital.
	ondo, sr := w.A("ONDO"), w.A("v4SwapRouter")
	w.send("fund user ONDO", "deployer", ondo, nil, w.callData(ondo, "transfer", user, ether("5000")), 100_000)
	w.send("approve V4 swap router", "user", ondo, nil, w.callData(ondo, "approve", sr, maxU), 100_000)
	w.send("fund v4_bot", "deployer", weth, nil, w.callData(weth, "transfer", w.A("v4_bot"), ether("20")), 100_000)
	w.flush()
}

// v4Swap is a V4Bot action: swapV4 selling `in` on the pool of a and b
// (amount 0: all the bot is owed in `in`).
func (w *World) v4Swap(a, b, in string, exactIn *big.Int) Action {
	bot, pm := w.A("v4_bot"), w.A("poolManager")
	key := w.v4Key(a, b)
	zeroForOne, limit := v4Direction(key, w.v4Currency(in))
	return call(bot, w.callData(bot, "swapV4", pm, key, zeroForOne, new(big.Int).Neg(exactIn), limit))
}

// v4Unlock is the action that unlocks the PoolManager with the given
// actions run in the bot's unlockCallback.
func (w *World) v4Unlock(acts []Action) Action {
	pm := w.A("poolManager")
	return call(pm, w.callData(pm, "unlock", w.encodeActions(acts)))
}

// v4UserSwap is the user's exact-input swap of amount of `in` through
// PoolSwapTest, paid in ETH as the call's value when `in` is ETH; with
// claims the output is kept in the PoolManager as ERC-6909 claims (the
// manager mints them to the user) instead of being paid out.
func (w *World) v4UserSwap(a, b, in string, amount *big.Int, claims bool) *types.Transaction {
	sr := w.A("v4SwapRouter")
	key := w.v4Key(a, b)
	zeroForOne, limit := v4Direction(key, w.v4Currency(in))
	var value *big.Int
	if in == "ETH" {
		value = amount
	}
	params := SwapParams{ZeroForOne: zeroForOne, AmountSpecified: new(big.Int).Neg(amount), SqrtPriceLimitX96: limit}
	return w.newTx("user", &sr, value, w.callData(sr, "swap", key, params, TestSettings{TakeClaims: claims}, []byte{}), scenarioGas)
}

func v4Scenarios() []Scenario {
	return []Scenario{
		{
			Name: "v4_user_swap_eth",
			Description: "a user swaps 0.5 ETH for ONDO on a Uniswap V4 pool (native ETH/ONDO) through v4-core's PoolSwapTest router: " +
				"the router unlocks the PoolManager, swaps, pays the manager the ETH (settle) and has it pay the user the ONDO (take)",
			Class: "none",
			Notes: "the PoolManager holds every V4 pool's currencies: the swap shows as user → router → manager in ETH and manager → user in ONDO",
			build: func(w *World) *types.Transaction {
				return w.v4UserSwap("ETH", "ONDO", "ETH", ether("0.5"), false)
			},
		},
		{
			Name:        "v4_user_swap_erc20",
			Description: "a user sells 400 ONDO for ETH on the same V4 pool through PoolSwapTest: the router pulls the ONDO straight from the user into the PoolManager (sync, transferFrom, settle) and the manager pays the user ETH",
			Class:       "none",
			build: func(w *World) *types.Transaction {
				return w.v4UserSwap("ETH", "ONDO", "ONDO", ether("400"), false)
			},
		},
		{
			Name: "v4_v2_arb",
			Description: "the V4 bot unwraps 1 WETH and unlocks the PoolManager; in the unlock callback it swaps the 1 ETH for ONDO on the V4 ETH/ONDO pool, " +
				"takes the ONDO straight to the V2 pair A:WETH/ONDO, sells it there for WETH paid to itself, and settles the 1 ETH it owes the manager",
			Class: "arbitrage", Origin: "v4_bot",
			Notes: "the paper's V4 case-study shape: ETH into a V4 pool, the token sold on a V2 pool for WETH; the V4 swap itself moves only the manager's deltas, the transfers are the take and the settle",
			build: func(w *World) *types.Transaction {
				bot, pm, weth, ondo := w.A("v4_bot"), w.A("poolManager"), w.A("WETH"), w.A("ONDO")
				pair := w.A(pairKey("A", "WETH", "ONDO"))
				in := ether("1")
				inner := []Action{
					w.v4Swap("ETH", "ONDO", "ETH", in),
					call(bot, w.callData(bot, "takeAll", pm, ondo, pair)),
					call(bot, w.callData(bot, "v2SwapPaid", pair, ondo, bot)),
					call(bot, w.callData(bot, "settleAll", pm, common.Address{})),
				}
				return w.execute("searcher", bot, []Action{
					call(weth, w.callData(weth, "withdraw", in)),
					w.v4Unlock(inner),
				})
			},
		},
		{
			Name: "v4_triangle_net",
			Description: "a triangular arbitrage inside Uniswap V4 with flash accounting: the V4 bot unlocks the PoolManager and swaps 1 ETH for ENA, all the ENA for ETHFI and all the ETHFI for ETH " +
				"on three V4 pools without paying anything in between; the manager owes it its profit in ETH and nothing else, and the bot takes only that",
			Class: "arbitrage", Origin: "v4_bot",
			Notes: "the only transfer is the manager's payment of the net profit (take): the standard events show no cycle, so the arbitrage is invisible to them",
			build: func(w *World) *types.Transaction {
				bot, pm := w.A("v4_bot"), w.A("poolManager")
				inner := []Action{
					w.v4Swap("ETH", "ENA", "ETH", ether("1")),
					w.v4Swap("ENA", "ETHFI", "ENA", new(big.Int)),
					w.v4Swap("ETHFI", "ETH", "ETHFI", new(big.Int)),
					call(bot, w.callData(bot, "takeAll", pm, common.Address{}, bot)),
				}
				return w.execute("searcher", bot, []Action{w.v4Unlock(inner)})
			},
		},
		{
			Name: "v4_user_swap_claims",
			Description: "a user swaps 0.2 ETH for ONDO on the V4 ETH/ONDO pool through PoolSwapTest and keeps the output in the PoolManager as ERC-6909 claims: " +
				"the manager mints the user a claim on ONDO (an ERC-6909 Transfer from the zero address) instead of paying it out",
			Class: "none",
			Notes: "the claim is an ERC-6909 balance at the PoolManager (id = the ONDO address), not an ONDO balance: the user's ETH goes to the manager and the user gains the claim (tracked as the PoolManager's ERC-6909 token with the ONDO address as id), no ONDO",
			build: func(w *World) *types.Transaction {
				return w.v4UserSwap("ETH", "ONDO", "ETH", ether("0.2"), true)
			},
		},
	}
}
