package scenario

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/holiman/uint256"

	"github.com/flowq/flowq/internal/evmnode"
)

// Scenario is one transaction with a known truth.
type Scenario struct {
	Name        string
	Description string
	// Class is what the transaction is: "arbitrage" or "none".
	Class string
	// Origin names the account where the arbitrage's cycle closes (empty
	// when Class is "none").
	Origin string
	Notes  string
	// Gain: the truth also lists origin_gain, the origin's whole gain
	// before it paid the builder and its payouts (set on the scenarios of
	// flows.go).
	Gain bool
	// Payees name the addresses the origin pays part of its gain to (an
	// owner's wallet, a cold wallet): the truth lists what each received
	// as a payout.
	Payees []string
	// SameBlock: the transaction goes in the block of the scenario before
	// it (a sandwich's legs). Its build runs before that block is mined,
	// so it must not read state the earlier legs change.
	SameBlock bool
	build     func(w *World) *types.Transaction
}

// phase is a setup followed by the scenarios that run after it. The
// scenarios added later run in a second phase, after every earlier
// scenario, so that the earlier ones keep their blocks, addresses and
// bytes.
type phase struct {
	setup     func(w *World)
	scenarios []Scenario
}

func phases() []phase {
	return []phase{
		{(*World).setup, baseScenarios()},
		{(*World).setupFlows, flowScenarios()},
		{(*World).setupV4, v4Scenarios()},
		{(*World).setupV4Router, v4RouterScenarios()},
		{(*World).setupOrder, orderScenarios()},
		{(*World).setupClaims, claimsScenarios()},
	}
}

// Scenarios lists the scenarios in the order they run: each in its own
// block after its phase's setup blocks, but for the SameBlock ones.
func Scenarios() []Scenario {
	var out []Scenario
	for _, p := range phases() {
		out = append(out, p.scenarios...)
	}
	return out
}

const scenarioGas = 4_000_000

var deadline = new(big.Int).Lsh(big.NewInt(1), 40)

func uint256FromUint64(n uint64) *uint256.Int { return uint256.NewInt(n) }

// twoPool returns the actions of a two-pool arbitrage run from `from`
// (which holds WETH): WETH -> token on factory buy's pair, token -> WETH on
// factory sell's pair, the token passing directly between the pairs. It
// returns the actions and the WETH gained.
func (w *World) twoPool(from common.Address, token, buy, sell string, in *big.Int) ([]Action, *big.Int) {
	weth, tok := w.A("WETH"), w.A(token)
	pBuy, pSell := w.A(pairKey(buy, "WETH", token)), w.A(pairKey(sell, "WETH", token))
	rIn, rOut := w.reserves(pBuy, weth)
	x := amountOut(in, rIn, rOut)
	rIn2, rOut2 := w.reserves(pSell, tok)
	y := amountOut(x, rIn2, rOut2)
	acts := []Action{
		w.transferCall(weth, pBuy, in),
		w.swapCall(pBuy, tok, x, pSell, nil),
		w.swapCall(pSell, weth, y, from, nil),
	}
	return acts, new(big.Int).Sub(y, in)
}

func (w *World) execute(from string, bot common.Address, acts []Action) *types.Transaction {
	return w.newTx(from, &bot, nil, w.pack("Bot", "execute", acts), scenarioGas)
}

func mustGain(name string, g *big.Int) {
	if g.Sign() <= 0 {
		fail("scenario %s: the cycle would not gain (%s wei): check the pools", name, g)
	}
}

// star builds the paper's tx_R (Figure "Reduction of tx_R") on Uniswap V3
// pools, whose swap pays the output to `recipient` and then calls
// uniswapV3SwapCallback on the caller, which must leave the pool paid:
//
//	bot ⇒ TARGET/WETH.swap(recipient bot, exact WETH out)        the hub
//	  TARGET/WETH pays the bot WETH
//	  TARGET/WETH ⇒ bot.uniswapV3SwapCallback(actions):
//	    bot ⇒ X1/TARGET.swap(recipient TARGET/WETH, exact TARGET out)
//	      X1/TARGET pays TARGET/WETH its TARGET
//	      X1/TARGET ⇒ bot.uniswapV3SwapCallback(actions):
//	        bot ⇒ X1/WETH.swap(recipient X1/TARGET, exact X1 out)
//	          X1/WETH pays X1/TARGET its X1
//	          X1/WETH ⇒ bot.uniswapV3SwapCallback(): the bot pays X1/WETH its WETH
//	        bot ⇒ X2/TARGET.swap(recipient TARGET/WETH, ...)   arm 2, nested in arm 1's callback
//	          ...
//
// Every route transfer but the hub's WETH to the bot and the bot's WETH to
// each X/WETH goes pool to pool. The amounts are the pools' own: the hub's
// TARGET demand for wethOut is quoted (Bot.quoteV3, an eth_call), split
// over the arms in proportion to the TARGET each arm's wethIn would buy,
// and each arm's X and WETH demands are quoted in turn. It returns the
// bot's actions and its WETH gain.
func (w *World) star(target string, arms []string, wethOut *big.Int, wethIn []*big.Int) ([]Action, *big.Int) {
	bot, weth, tgt := w.A("bot"), w.A("WETH"), w.A(target)
	hub := w.poolV3(target, "WETH")
	type arm struct {
		x, hop1, hop2   common.Address // X, X/WETH, X/TARGET
		tOut, xOut, wIn *big.Int
	}
	as := make([]arm, len(arms))
	// What each arm's wethIn would buy (exact input), to split the hub's
	// demand.
	est, sum := make([]*big.Int, len(arms)), new(big.Int)
	for i, name := range arms {
		a := &as[i]
		a.x, a.hop1, a.hop2 = w.A(name), w.poolV3(name, "WETH"), w.poolV3(name, target)
		_, xOut := w.quoteV3(a.hop1, weth, wethIn[i])
		_, est[i] = w.quoteV3(a.hop2, a.x, xOut)
		sum.Add(sum, est[i])
	}
	owed, _ := w.quoteV3(hub, tgt, new(big.Int).Neg(wethOut))
	left := new(big.Int).Set(owed)
	spent := new(big.Int)
	for i := range as {
		a := &as[i]
		a.tOut = new(big.Int).Div(new(big.Int).Mul(owed, est[i]), sum)
		if i == len(as)-1 {
			a.tOut = left
		}
		left = new(big.Int).Sub(left, a.tOut)
		a.xOut, _ = w.quoteV3(a.hop2, a.x, new(big.Int).Neg(a.tOut))
		a.wIn, _ = w.quoteV3(a.hop1, weth, new(big.Int).Neg(a.xOut))
		spent.Add(spent, a.wIn)
	}
	// From the last arm inwards: arm i's callback buys its X and runs arm
	// i+1.
	var next []Action
	for i := len(as) - 1; i >= 0; i-- {
		a := as[i]
		cb := append([]Action{w.swapV3(a.hop1, weth, new(big.Int).Neg(a.xOut), a.hop2, nil)}, next...)
		next = []Action{w.swapV3(a.hop2, a.x, new(big.Int).Neg(a.tOut), hub, cb)}
	}
	top := []Action{w.swapV3(hub, tgt, new(big.Int).Neg(wethOut), bot, next)}
	return top, new(big.Int).Sub(wethOut, spent)
}

// baseScenarios are the first phase's scenarios, each in its own block
// after the setup blocks.
func baseScenarios() []Scenario {
	return []Scenario{
		{
			Name:        "two_pool_arb",
			Description: "the searcher's bot sells 1 WETH for USDC on factory B's pair and USDC for WETH on factory A's; USDC passes directly between the pairs",
			Class:       "arbitrage", Origin: "bot",
			build: func(w *World) *types.Transaction {
				acts, g := w.twoPool(w.A("bot"), "USDC", "B", "A", ether("1"))
				mustGain("two_pool_arb", g)
				return w.execute("searcher", w.A("bot"), acts)
			},
		},
		{
			Name:        "triangular_arb",
			Description: "the bot routes 1 WETH through WETH/DAI, DAI/USDT and USDT/WETH (factory A), each pair paying the next",
			Class:       "arbitrage", Origin: "bot",
			build: func(w *World) *types.Transaction {
				weth, dai, usdt, bot := w.A("WETH"), w.A("DAI"), w.A("USDT"), w.A("bot")
				p1, p2, p3 := w.A("A:WETH/DAI"), w.A("A:DAI/USDT"), w.A("A:USDT/WETH")
				in := ether("1")
				r1i, r1o := w.reserves(p1, weth)
				d := amountOut(in, r1i, r1o)
				r2i, r2o := w.reserves(p2, dai)
				u := amountOut(d, r2i, r2o)
				r3i, r3o := w.reserves(p3, usdt)
				out := amountOut(u, r3i, r3o)
				mustGain("triangular_arb", new(big.Int).Sub(out, in))
				return w.execute("searcher", bot, []Action{
					w.transferCall(weth, p1, in),
					w.swapCall(p1, dai, d, p2, nil),
					w.swapCall(p2, usdt, u, p3, nil),
					w.swapCall(p3, weth, out, bot, nil),
				})
			},
		},
		{
			Name: "star_r",
			Description: "tx_R (the paper's Figure \"Reduction of tx_R\"), on Uniswap V3 pools, which pay the swap's recipient and call back the caller: " +
				"the bot takes 0.0598 WETH out of BEAN/WETH (exact output, recipient the bot); in its callback, arm CHAD: CHAD/BEAN pays BEAN straight to BEAN/WETH and calls back the bot, " +
				"which has CHAD/WETH pay CHAD straight to CHAD/BEAN and, called back, pays CHAD/WETH its WETH; arm DUCK runs inside CHAD/BEAN's callback the same way, and MOON inside DUCK/BEAN's; " +
				"about 0.0125 + 0.0333 + 0.0117 WETH in",
			Class: "arbitrage", Origin: "bot",
			Notes: "every route transfer is pool to pool except the hub's WETH to the bot and the bot's WETH to each X/WETH pool",
			build: func(w *World) *types.Transaction {
				acts, g := w.star("BEAN", armsR, ether("0.0598"), []*big.Int{ether("0.0125"), ether("0.0333"), ether("0.0117")})
				mustGain("star_r", g)
				return w.execute("searcher", w.A("bot"), acts)
			},
		},
		{
			Name: "star_s",
			Description: "tx_S: the same Uniswap V3 callback star with six arms (PUPPIES, TERMINUS, TOMOE, YFI, CPOOL, ZETA) converging on KABOSU/WETH; " +
				"the bot takes 0.1165 WETH out of KABOSU/WETH, about 0.011 + 0.013 + 0.017 + 0.019 + 0.023 + 0.029 WETH in",
			Class: "arbitrage", Origin: "bot",
			Notes: "every route transfer is pool to pool except the hub's WETH to the bot and the bot's WETH to each X/WETH pool",
			build: func(w *World) *types.Transaction {
				ins := []*big.Int{ether("0.011"), ether("0.013"), ether("0.017"), ether("0.019"), ether("0.023"), ether("0.029")}
				acts, g := w.star("KABOSU", armsS, ether("0.1165"), ins)
				mustGain("star_s", g)
				return w.execute("searcher", w.A("bot"), acts)
			},
		},
		{
			Name:        "flash_swap_arb",
			Description: "a flash swap: the bot borrows 10 LINK from factory B's WETH/LINK pair, sells it on factory A's for WETH, and repays B in WETH inside the callback",
			Class:       "arbitrage", Origin: "bot",
			build: func(w *World) *types.Transaction {
				weth, link, bot := w.A("WETH"), w.A("LINK"), w.A("bot")
				pB, pA := w.A("B:WETH/LINK"), w.A("A:WETH/LINK")
				borrow := ether("10")
				rW, rL := w.reserves(pB, weth)
				repay := amountIn(borrow, rW, rL)
				rL2, rW2 := w.reserves(pA, link)
				got := amountOut(borrow, rL2, rW2)
				mustGain("flash_swap_arb", new(big.Int).Sub(got, repay))
				cb := []Action{
					w.transferCall(link, pA, borrow),
					w.swapCall(pA, weth, got, bot, nil),
					w.transferCall(weth, pB, repay),
				}
				return w.execute("searcher", bot, []Action{w.swapCall(pB, link, borrow, bot, cb)})
			},
		},
		{
			Name:        "coinbase_arb",
			Description: "a two-pool arbitrage on UNI (2 WETH) that unwraps 30% of its gain and pays it to the block's fee recipient (block.coinbase)",
			Class:       "arbitrage", Origin: "bot",
			Notes: "coinbase_payment is the builder payment; the bot's WETH gain is net of it",
			build: func(w *World) *types.Transaction {
				bot, weth := w.A("bot"), w.A("WETH")
				acts, g := w.twoPool(bot, "UNI", "B", "A", ether("2"))
				mustGain("coinbase_arb", g)
				pay := new(big.Int).Div(new(big.Int).Mul(g, big.NewInt(3)), big.NewInt(10))
				acts = append(acts,
					call(weth, w.callData(weth, "withdraw", pay)),
					Action{Kind: actCoinbase, Target: common.Address{}, Value: pay, Data: []byte{}})
				return w.execute("searcher", bot, acts)
			},
		},
		{
			Name:        "loses_after_gas",
			Description: "a two-pool arbitrage on MKR with 0.01 WETH: the cycle gains a few microether, less than the gas the searcher pays",
			Class:       "arbitrage", Origin: "bot",
			Notes: "gross profit positive, net of gas negative",
			build: func(w *World) *types.Transaction {
				acts, g := w.twoPool(w.A("bot"), "MKR", "B", "A", ether("0.01"))
				mustGain("loses_after_gas", g)
				return w.execute("searcher", w.A("bot"), acts)
			},
		},
		{
			Name:        "v3_v2_arb",
			Description: "the bot buys RPL with 1 WETH on a Uniswap V2 pair and sells it on a Uniswap V3 pool (exact input); the V3 pool pays first, then calls back the bot, which pays the RPL it owes",
			Class:       "arbitrage", Origin: "bot",
			build: func(w *World) *types.Transaction {
				bot, weth, rpl := w.A("bot"), w.A("WETH"), w.A("RPL")
				p2, p3 := w.A("A:WETH/RPL"), w.A("V3:WETH/RPL")
				in := ether("1")
				rIn, rOut := w.reserves(p2, weth)
				x := amountOut(in, rIn, rOut)
				zeroForOne := rpl.Cmp(weth) < 0 // RPL is token0: selling token0
				limit, _ := new(big.Int).SetString(v3MaxSqrt, 10)
				if zeroForOne {
					limit, _ = new(big.Int).SetString(v3MinSqrt, 10)
				}
				return w.execute("searcher", bot, []Action{
					w.transferCall(weth, p2, in),
					w.swapCall(p2, rpl, x, bot, nil),
					call(p3, w.callData(p3, "swap", bot, zeroForOne, x, limit, []byte{})),
				})
			},
		},
		{
			Name:        "reverted_attempt",
			Description: "the two-pool USDC arbitrage again, with a minimum-profit check that fails: the transaction reverts and only gas is spent",
			Class:       "none",
			Notes:       "status failed: no transfer survives",
			build: func(w *World) *types.Transaction {
				bot, weth := w.A("bot"), w.A("WETH")
				acts, _ := w.twoPool(bot, "USDC", "B", "A", ether("1"))
				bal := w.viewBig(weth, "balanceOf", bot)
				acts = append(acts, Action{Kind: actMinBalance, Target: weth, Value: new(big.Int).Add(bal, ether("1000")), Data: []byte{}})
				return w.execute("searcher", bot, acts)
			},
		},
		{
			Name:        "inner_cycle",
			Description: "the operator calls an Executor contract (the transaction's recipient), which calls a strategy Bot it owns; the strategy runs a two-pool COMP arbitrage with its own WETH, so the cycle closes at the strategy, not at the recipient",
			Class:       "arbitrage", Origin: "strategy",
			build: func(w *World) *types.Transaction {
				strat, exec := w.A("strategy"), w.A("executor")
				acts, g := w.twoPool(strat, "COMP", "B", "A", ether("1"))
				mustGain("inner_cycle", g)
				inner := w.pack("Bot", "execute", acts)
				return w.newTx("operator", &exec, nil, w.callData(exec, "forward", strat, inner), scenarioGas)
			},
		},
		{
			Name:        "eip7702_self",
			Description: "an EOA delegates to the Bot code (EIP-7702, a type-4 transaction carrying the authorization) and calls itself: sender and recipient are the same address, which runs a two-pool AAVE arbitrage with its own WETH",
			Class:       "arbitrage", Origin: "delegate",
			build: func(w *World) *types.Transaction {
				me := w.A("delegate")
				acts, g := w.twoPool(me, "AAVE", "B", "A", ether("1"))
				mustGain("eip7702_self", g)
				auth := w.delegateAuth("delegate", w.A("bot"))
				k := w.key("delegate")
				tx := types.MustSignNewTx(k, w.node.Signer(), &types.SetCodeTx{
					ChainID: uint256FromUint64(evmnode.ChainID), Nonce: w.nonce[me],
					GasTipCap: uint256.MustFromBig(tipCap), GasFeeCap: uint256.MustFromBig(feeCap),
					Gas: scenarioGas, To: me, Value: new(uint256.Int), Data: w.pack("Bot", "execute", acts),
					AuthList: []types.SetCodeAuthorization{auth},
				})
				w.nonce[me]++
				return tx
			},
		},
		{
			Name:        "router_swap",
			Description: "a user swaps 0.1 WBTC for WETH through Uniswap V2 Router02 (swapExactTokensForTokens)",
			Class:       "none",
			build: func(w *World) *types.Transaction {
				r := w.A("routerA")
				path := []common.Address{w.A("WBTC"), w.A("WETH")}
				return w.newTx("user", &r, nil, w.callData(r, "swapExactTokensForTokens", ether("0.1"), big.NewInt(0), path, w.A("user"), deadline), scenarioGas)
			},
		},
		{
			Name:        "router_multihop",
			Description: "a user swaps 1 ETH for GRT through Router02 along WETH -> WBTC -> GRT (swapExactETHForTokens: the router wraps the ETH)",
			Class:       "none",
			build: func(w *World) *types.Transaction {
				r := w.A("routerA")
				path := []common.Address{w.A("WETH"), w.A("WBTC"), w.A("GRT")}
				return w.newTx("user", &r, ether("1"), w.callData(r, "swapExactETHForTokens", big.NewInt(0), path, w.A("user"), deadline), scenarioGas)
			},
		},
		{
			Name:        "wrap",
			Description: "a user wraps 5 ETH (WETH9.deposit)",
			Class:       "none",
			build: func(w *World) *types.Transaction {
				weth := w.A("WETH")
				return w.newTx("user", &weth, ether("5"), w.callData(weth, "deposit"), 200_000)
			},
		},
		{
			Name:        "unwrap",
			Description: "a user unwraps 2 WETH (WETH9.withdraw)",
			Class:       "none",
			build: func(w *World) *types.Transaction {
				weth := w.A("WETH")
				return w.newTx("user", &weth, nil, w.callData(weth, "withdraw", ether("2")), 200_000)
			},
		},
		{
			Name:        "liquidity_add",
			Description: "a user adds 10,000 TKN and ETH to the TKN/WETH pair through Router02 (addLiquidityETH with 11 ETH: the router wraps 10 and refunds 1) and receives LP tokens",
			Class:       "none",
			build: func(w *World) *types.Transaction {
				r := w.A("routerA")
				return w.newTx("user", &r, ether("11"), w.callData(r, "addLiquidityETH", w.A("TKN"), ether("10000"), big.NewInt(0), big.NewInt(0), w.A("user"), deadline), scenarioGas)
			},
		},
		{
			Name:        "liquidity_remove",
			Description: "the user removes half of its LP tokens through Router02 (removeLiquidityETH: the pair burns them, the router unwraps the WETH)",
			Class:       "none",
			build: func(w *World) *types.Transaction {
				r, lp := w.A("routerA"), w.A("A:TKN/WETH")
				liq := w.viewBig(lp, "balanceOf", w.A("user"))
				liq.Div(liq, big.NewInt(2))
				return w.newTx("user", &r, nil, w.callData(r, "removeLiquidityETH", w.A("TKN"), liq, big.NewInt(0), big.NewInt(0), w.A("user"), deadline), scenarioGas)
			},
		},
		{
			Name:        "nft_erc721",
			Description: "a collector transfers ERC-721 PUNK #1 (OpenZeppelin ERC721PresetMinterPauserAutoId) to another account",
			Class:       "none",
			build: func(w *World) *types.Transaction {
				n := w.A("PUNK")
				return w.newTx("collector", &n, nil, w.callData(n, "transferFrom", w.A("collector"), w.A("recipient"), big.NewInt(1)), 300_000)
			},
		},
		{
			Name:        "nft_erc1155",
			Description: "a collector transfers 10 of ERC-1155 ITEMS #1 (OpenZeppelin ERC1155PresetMinterPauser, safeTransferFrom)",
			Class:       "none",
			build: func(w *World) *types.Transaction {
				n := w.A("ITEMS")
				return w.newTx("collector", &n, nil, w.callData(n, "safeTransferFrom", w.A("collector"), w.A("recipient"), big.NewInt(1), big.NewInt(10), []byte{}), 300_000)
			},
		},
		{
			Name:        "nft_erc1155_batch",
			Description: "a collector transfers 5 of ITEMS #2 and 7 of ITEMS #3 in one TransferBatch (safeBatchTransferFrom)",
			Class:       "none",
			build: func(w *World) *types.Transaction {
				n := w.A("ITEMS")
				ids := []*big.Int{big.NewInt(2), big.NewInt(3)}
				amts := []*big.Int{big.NewInt(5), big.NewInt(7)}
				return w.newTx("collector", &n, nil, w.callData(n, "safeBatchTransferFrom", w.A("collector"), w.A("recipient"), ids, amts, []byte{}), 300_000)
			},
		},
	}
}
