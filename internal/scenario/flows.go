package scenario

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// The second phase: the shapes of issue 14, where a gain is real but not
// where the fixpoint reads it, or not all of it stays there: a pool that
// pays before it is paid (Uniswap V3, and V2 flash-swap cascades unwinding
// in either order), a bot that trades with the sender's ETH and returns
// it, an executor behind a controller, payouts to an owner's or a cold
// wallet, a flash loan with a fee (and a loan that trades nothing), and a
// sandwich's three legs. Every contract a searcher uses here is this
// project's own (contracts/*.sol); the pools, WETH9 and tokens are the npm
// builds. It runs after every first-phase scenario, so that those keep
// their blocks and bytes.

// flowFungibles are the second phase's tokens (OpenZeppelin
// ERC20PresetFixedSupply, 18 decimals).
var flowFungibles = []string{"LDO", "PEPE", "APE", "BAT", "CRV", "DYDX", "ENS", "SNX", "GNO", "SUSHI", "BAL", "FLOKI"}

// cascadeHub is the Z of the cascades' Z/WETH pair; cascadeArms the arm
// tokens X (pairs X/WETH and X/Z).
const cascadeHub = "PEPE"

var cascadeArms = []string{"APE", "BAT", "CRV", "DYDX", "ENS"}

// walletAddress is a fixed EOA address with no key in the chain's
// genesis: keccak256("flowq <label>")'s last 20 bytes.
func walletAddress(label string) common.Address {
	return common.BytesToAddress(crypto.Keccak256([]byte("flowq " + label))[12:])
}

// setupFlows deploys the second phase's tokens, contracts and pools.
func (w *World) setupFlows() {
	deployer, searcher, weth := w.A("deployer"), w.A("searcher"), w.A("WETH")
	w.account("victim", 7)
	w.name("owner_wallet", walletAddress("owner wallet"))
	w.name("cold_wallet", walletAddress("cold wallet"))

	supply := ether("1000000000000")
	for _, sym := range flowFungibles {
		w.Tokens = append(w.Tokens, w.deploy(sym, "deployer", "ERC20PresetFixedSupply", sym+" Token", sym, supply, deployer))
	}
	w.deploy("flash_executor", "deployer", "PoolFirstExecutor", searcher, weth)
	w.deploy("cascade_bot", "deployer", "FlashCascade", searcher)
	w.deploy("wrap_bot", "deployer", "WrapArb", searcher, weth)
	controller := w.deploy("controller", "deployer", "Controller", searcher)
	w.deploy("arb_executor", "deployer", "ArbExecutor", controller)
	w.deploy("inner_flash_executor", "deployer", "PoolFirstExecutor", controller, weth)
	w.deploy("payout_bot", "deployer", "PayoutBot", searcher)
	w.deploy("lender", "deployer", "FlashLender", weth, big.NewInt(9)) // 0.09%
	w.deploy("borrower", "deployer", "FlashBorrower", searcher)
	w.deploy("sandwich_bot", "deployer", "SandwichBot", searcher)
	w.flush()

	// v3_flash_first (and _inner): a V3 WETH/USDC pool at 2000 USDC per
	// WETH, and a V2 route WETH → LDO → USDC that gives about 2200.
	w.createPoolV3(w.A("factoryV3"), w.A("lp"), "WETH", "USDC", ether("300"), ether("600000"))
	w.createPool("A", "WETH", "LDO", ether("300"), ether("300000"))
	w.createPool("A", "LDO", "USDC", ether("300000"), ether("660000"))
	// v2_flash_first: the same prices in DAI, the first pool a V2 pair.
	w.createPool("B", "WETH", "DAI", ether("100"), ether("200000"))
	w.createPool("B", "LDO", "DAI", ether("100000"), ether("220000"))
	// Cascades: the hub PEPE/WETH at 30,000 PEPE per WETH (500 WETH
	// deep); each arm buys PEPE at 33,000 per WETH (1000 X per WETH, 33
	// PEPE per X), deep enough for the four cascades to gain in turn.
	w.createPool("A", cascadeHub, "WETH", ether("15000000"), ether("500"))
	for _, x := range cascadeArms {
		w.createPool("A", x, "WETH", ether("200000"), ether("200"))
		w.createPool("A", x, cascadeHub, ether("200000"), ether("6600000"))
	}
	// Two-pool cycles: the same pair on both factories, 5-6% apart.
	for _, p := range []struct{ tok, weth, a, b string }{
		{"SNX", "100", "10000", "10500"},   // wrap_cycle_refund
		{"GNO", "100", "1000", "1060"},     // executor_controller
		{"SUSHI", "100", "20000", "21300"}, // cold_wallet_payout
		{"BAL", "300", "15000", "15900"},   // flash_loan_fee
	} {
		w.createPool("A", "WETH", p.tok, ether(p.weth), ether(p.a))
		w.createPool("B", "WETH", p.tok, ether(p.weth), ether(p.b))
	}
	// The sandwiched pair.
	w.createPool("A", "WETH", "FLOKI", ether("50"), ether("5000000"))

	// Working capital (the flash executor, the cascade, the wrapping bot
	// and the borrower start with none).
	for _, f := range []struct{ who, amt string }{{"arb_executor", "50"}, {"payout_bot", "50"}, {"lender", "500"}, {"sandwich_bot", "50"}} {
		w.send("fund "+f.who, "deployer", weth, nil, w.callData(weth, "transfer", w.A(f.who), ether(f.amt)), 100_000)
	}
	w.flush()
}

// Hop is V2Route.Hop: pair pays amountOut of tokenOut to the next hop's
// pair (the last: to the route's recipient).
type Hop struct {
	Pair      common.Address
	TokenOut  common.Address
	AmountOut *big.Int
}

// Payment and Loan are FlashCascade's.
type Payment struct {
	Token  common.Address
	To     common.Address
	Amount *big.Int
}

type Loan struct {
	Pair      common.Address
	TokenOut  common.Address
	AmountOut *big.Int
	Pre       []Payment
	Post      []Payment
}

// PlanV3 and PlanV2 are PoolFirstExecutor's.
type PlanV3 struct {
	Pool              common.Address
	ZeroForOne        bool
	AmountSpecified   *big.Int
	SqrtPriceLimitX96 *big.Int
	WethIn            *big.Int
	Hops              []Hop
	Tip               *big.Int
	Payout            *big.Int
	Payee             common.Address
}

type PlanV2 struct {
	Pair    common.Address
	WethOut *big.Int
	WethIn  *big.Int
	Hops    []Hop
	Tip     *big.Int
	Payout  *big.Int
	Payee   common.Address
}

// routeIn prices a V2 route at the head, exact input: amountIn of path[0]
// through pairs[i] (path[i] → path[i+1]). It returns the hops and what the
// last pair pays.
func (w *World) routeIn(amountIn *big.Int, path, pairs []string) ([]Hop, *big.Int) {
	if len(path) != len(pairs)+1 {
		fail("route %v over %v", path, pairs)
	}
	var hops []Hop
	x := amountIn
	for i, p := range pairs {
		pair := w.A(p)
		rIn, rOut := w.reserves(pair, w.A(path[i]))
		x = amountOut(x, rIn, rOut)
		hops = append(hops, Hop{Pair: pair, TokenOut: w.A(path[i+1]), AmountOut: x})
	}
	return hops, x
}

// routeOut prices a V2 route at the head, exact output: what path[0]
// amount buys out of the last pair, and the hops.
func (w *World) routeOut(out *big.Int, path, pairs []string) ([]Hop, *big.Int) {
	if len(path) != len(pairs)+1 {
		fail("route %v over %v", path, pairs)
	}
	hops := make([]Hop, len(pairs))
	x := out
	for i := len(pairs) - 1; i >= 0; i-- {
		pair := w.A(pairs[i])
		hops[i] = Hop{Pair: pair, TokenOut: w.A(path[i+1]), AmountOut: x}
		rIn, rOut := w.reserves(pair, w.A(path[i]))
		x = amountIn(x, rIn, rOut)
	}
	return hops, x
}

// percent is x·p/100.
func percent(x *big.Int, p int64) *big.Int {
	return new(big.Int).Div(new(big.Int).Mul(x, big.NewInt(p)), big.NewInt(100))
}

// cascade plans FlashCascade's loans over the first n arms, the bot
// taking wethOut out of the hub PEPE/WETH:
//
//	loan 0        hub PEPE/WETH pays the bot wethOut WETH; owed Z PEPE
//	loan i        X_i/PEPE pays the bot z_i PEPE (Σ z_i = Z, unequal); owed x_i X_i
//	loan n+i      X_i/WETH pays the bot x_i X_i; owed w_i WETH
//
// each loan taken inside the previous one's callback. fifo false: each
// loan is repaid at the end of its own callback (post), so the first
// borrowed is repaid last. fifo true: each is repaid as soon as the bot
// holds what it owes (pre of a deeper callback): the hub in X_n/PEPE's,
// X_i/PEPE in X_i/WETH's, the X/WETH pairs in the last callback, so the
// loans are repaid in the order they were taken. It returns the loans and
// the bot's WETH gain, wethOut − Σ w_i.
func (w *World) cascade(n int, wethOut *big.Int, fifo bool) ([]Loan, *big.Int) {
	weth, z := w.A("WETH"), w.A(cascadeHub)
	hub := w.A(pairKey("A", cascadeHub, "WETH"))
	rZ, rW := w.reserves(hub, z)
	owedZ := amountIn(wethOut, rZ, rW)
	loans := make([]Loan, 2*n+1)
	loans[0] = Loan{Pair: hub, TokenOut: weth, AmountOut: wethOut}
	debts := make([]Payment, 2*n+1) // what each loan's pair is owed
	debts[0] = Payment{Token: z, To: hub, Amount: owedZ}
	left := new(big.Int).Set(owedZ)
	spent := new(big.Int)
	for i := 1; i <= n; i++ {
		xName := cascadeArms[i-1]
		x := w.A(xName)
		xz, xw := w.A(pairKey("A", xName, cascadeHub)), w.A(pairKey("A", xName, "WETH"))
		// Arm i takes the share (n+i)/Σ(n+j) of the hub's debt: the arms
		// pay different amounts, as arms sized to their pools do.
		zi := new(big.Int).Div(new(big.Int).Mul(owedZ, big.NewInt(int64(n+i))), big.NewInt(int64(n*(3*n+1)/2)))
		if i == n {
			zi = left
		}
		left = new(big.Int).Sub(left, zi)
		rX, rZ2 := w.reserves(xz, x)
		xi := amountIn(zi, rX, rZ2)
		rW2, rX2 := w.reserves(xw, weth)
		wi := amountIn(xi, rW2, rX2)
		spent.Add(spent, wi)
		loans[i] = Loan{Pair: xz, TokenOut: z, AmountOut: zi}
		debts[i] = Payment{Token: x, To: xz, Amount: xi}
		loans[n+i] = Loan{Pair: xw, TokenOut: x, AmountOut: xi}
		debts[n+i] = Payment{Token: weth, To: xw, Amount: wi}
	}
	for i := range loans {
		loans[i].Pre, loans[i].Post = []Payment{}, []Payment{}
	}
	if !fifo {
		for i := range loans {
			loans[i].Post = []Payment{debts[i]}
		}
	} else {
		loans[n].Pre = append(loans[n].Pre, debts[0])
		for i := 1; i <= n; i++ {
			loans[n+i].Pre = append(loans[n+i].Pre, debts[i])
		}
		loans[2*n].Pre = append(loans[2*n].Pre, debts[n+1:]...)
	}
	return loans, new(big.Int).Sub(wethOut, spent)
}

// sandwichPlan is the sandwich's three transactions, built together
// before their block from the pair's reserves (the later legs' amounts
// follow the earlier legs' effect on them): the bot's front-run buy, the
// victim's swap, the bot's back-run sell of all it bought.
type sandwichPlan struct {
	front, victim, back *types.Transaction
}

func (w *World) planSandwich() sandwichPlan {
	weth, floki, bot := w.A("WETH"), w.A("FLOKI"), w.A("sandwich_bot")
	pair, router := w.A(pairKey("A", "WETH", "FLOKI")), w.A("routerA")
	rW, rF := w.reserves(pair, weth)
	frontIn, victimIn := ether("3"), ether("5")
	// Front-run: WETH → FLOKI.
	bought := amountOut(frontIn, rW, rF)
	rW, rF = new(big.Int).Add(rW, frontIn), new(big.Int).Sub(rF, bought)
	// The victim's swap, at the price the front-run left: its minimum
	// output is exactly what it gets (a tolerance the bot used up).
	got := amountOut(victimIn, rW, rF)
	rW, rF = new(big.Int).Add(rW, victimIn), new(big.Int).Sub(rF, got)
	// Back-run: FLOKI → WETH.
	sold := amountOut(bought, rF, rW)
	mustGain("sandwich", new(big.Int).Sub(sold, frontIn))
	path := []common.Address{weth, floki}
	return sandwichPlan{
		front:  w.newTx("searcher", &bot, nil, w.callData(bot, "buy", pair, weth, floki, frontIn, bought), scenarioGas),
		victim: w.newTx("victim", &router, victimIn, w.callData(router, "swapExactETHForTokens", got, path, w.A("victim"), deadline), scenarioGas),
		back:   w.newTx("searcher", &bot, nil, w.callData(bot, "sell", pair, floki, weth, sold), scenarioGas),
	}
}

// planV3First plans PoolFirstExecutor.runV3 on V3 WETH/USDC, repaid by
// the route A:WETH/LDO → A:LDO/USDC: wethOut WETH out of the pool, tip%
// of the gain to the coinbase and payout% to payee. It returns the plan
// and the executor's gain.
func (w *World) planV3First(exec common.Address, wethOut *big.Int, payee common.Address, tip, payout int64) (PlanV3, *big.Int) {
	usdc := w.A("USDC")
	pool := w.A(v3PoolName + "WETH/USDC")
	owed, got := w.quoteV3(pool, usdc, new(big.Int).Neg(wethOut))
	if got.Cmp(wethOut) != 0 {
		fail("V3 WETH/USDC would pay %s WETH, not %s", got, wethOut)
	}
	hops, wethIn := w.routeOut(owed, []string{"WETH", "LDO", "USDC"}, []string{"A:WETH/LDO", "A:LDO/USDC"})
	gain := new(big.Int).Sub(wethOut, wethIn)
	zeroForOne, limit := w.v3Direction(pool, usdc)
	return PlanV3{
		Pool: pool, ZeroForOne: zeroForOne, AmountSpecified: new(big.Int).Neg(wethOut), SqrtPriceLimitX96: limit,
		WethIn: wethIn, Hops: hops, Tip: percent(gain, tip), Payout: percent(gain, payout), Payee: payee,
	}, gain
}

func flowScenarios() []Scenario {
	var sw sandwichPlan
	cascade := func(name string, n int, wethOut string, fifo bool) func(w *World) *types.Transaction {
		return func(w *World) *types.Transaction {
			loans, g := w.cascade(n, ether(wethOut), fifo)
			mustGain(name, g)
			bot := w.A("cascade_bot")
			return w.newTx("searcher", &bot, nil, w.callData(bot, "run", loans), scenarioGas)
		}
	}
	return []Scenario{
		{
			Name: "v3_flash_first",
			Description: "a Uniswap V3 pool-first flash swap: the flash executor asks V3 WETH/USDC for 1 WETH (exact output, itself the recipient); the pool pays the WETH, then calls back; " +
				"in the callback the executor sells part of it on A:WETH/LDO, which pays LDO straight to A:LDO/USDC, which pays the V3 pool its USDC directly; " +
				"the executor keeps the rest, unwraps 70% of its gain, pays 20% of the gain to block.coinbase and 50% to the owner's wallet",
			Class: "arbitrage", Origin: "flash_executor", Gain: true, Payees: []string{"owner_wallet"},
			Notes: "the first pool is repaid by the last pool of the route, in USDC (its input token), not by the executor; origin_gain is the executor's WETH gain before the builder payment and the payout (ETH)",
			build: func(w *World) *types.Transaction {
				exec := w.A("flash_executor")
				plan, gain := w.planV3First(exec, ether("1"), w.A("owner_wallet"), 20, 50)
				mustGain("v3_flash_first", gain)
				return w.newTx("searcher", &exec, nil, w.callData(exec, "runV3", plan), scenarioGas)
			},
		},
		{
			Name: "v3_flash_first_inner",
			Description: "the V3 pool-first flash swap run by an executor behind the Controller: the searcher calls the Controller (the recipient), which relays to a PoolFirstExecutor it owns; " +
				"V3 WETH/USDC pays that executor 1 WETH, A:WETH/LDO and A:LDO/USDC repay the pool in USDC; the executor unwraps 80% of its gain, pays 10% to block.coinbase and 70% to the Controller",
			Class: "arbitrage", Origin: "inner_flash_executor", Gain: true, Payees: []string{"controller"},
			Notes: "the cycle closes at an inner executor, which sends most of its gain to the recipient (a payout inside the coalition of sender, recipient and origin)",
			build: func(w *World) *types.Transaction {
				ctrl, exec := w.A("controller"), w.A("inner_flash_executor")
				plan, gain := w.planV3First(exec, ether("1"), ctrl, 10, 70)
				mustGain("v3_flash_first_inner", gain)
				return w.newTx("searcher", &ctrl, nil, w.callData(ctrl, "relay", exec, w.callData(exec, "runV3", plan)), scenarioGas)
			},
		},
		{
			Name: "v2_flash_first",
			Description: "the same with a Uniswap V2 pair paying first: B:WETH/DAI pays the flash executor 1 WETH and calls uniswapV2Call; " +
				"the executor sells part of it on A:WETH/LDO, which pays LDO straight to B:LDO/DAI, which pays B:WETH/DAI its DAI directly before the callback returns; " +
				"the executor unwraps 40% of its gain, pays 10% to block.coinbase and 30% to the owner's wallet",
			Class: "arbitrage", Origin: "flash_executor", Gain: true, Payees: []string{"owner_wallet"},
			Notes: "the first pair is repaid by the last pair of the route, in DAI (its input token), inside its own swap call",
			build: func(w *World) *types.Transaction {
				exec, pair := w.A("flash_executor"), w.A("B:WETH/DAI")
				wethOut := ether("1")
				rD, rW := w.reserves(pair, w.A("DAI"))
				owed := amountIn(wethOut, rD, rW)
				hops, wethIn := w.routeOut(owed, []string{"WETH", "LDO", "DAI"}, []string{"A:WETH/LDO", "B:LDO/DAI"})
				gain := new(big.Int).Sub(wethOut, wethIn)
				mustGain("v2_flash_first", gain)
				plan := PlanV2{Pair: pair, WethOut: wethOut, WethIn: wethIn, Hops: hops, Tip: percent(gain, 10), Payout: percent(gain, 30), Payee: w.A("owner_wallet")}
				return w.newTx("searcher", &exec, nil, w.callData(exec, "runV2", plan), scenarioGas)
			},
		},
		{
			Name: "v2_cascade_3",
			Description: "a V2 flash-swap cascade of three arms (APE, BAT, CRV) converging on A:PEPE/WETH, nested, first borrowed repaid last: the hub pays the bot 0.3 WETH; " +
				"inside its callback each X/PEPE pays the bot PEPE, inside that X/WETH pays it X, and so on down; unwinding, the bot pays each X/WETH its WETH, each X/PEPE its X, the hub its PEPE",
			Class: "arbitrage", Origin: "cascade_bot", Gain: true,
			Notes: "every pool pays first (pair.swap with data calls uniswapV2Call) and is paid while the callbacks unwind; every transfer is between the bot and a pair",
			build: cascade("v2_cascade_3", 3, "0.3", false),
		},
		{
			Name:        "v2_cascade_5",
			Description: "the nested cascade with five arms (APE, BAT, CRV, DYDX, ENS) converging on A:PEPE/WETH: 0.5 WETH out of the hub, eleven loans, repaid in the reverse order",
			Class:       "arbitrage", Origin: "cascade_bot", Gain: true,
			Notes: "first borrowed, last repaid",
			build: cascade("v2_cascade_5", 5, "0.5", false),
		},
		{
			Name: "v2_cascade_3_fifo",
			Description: "the three-arm cascade unwinding first-paid-first: the same seven loans, each repaid as soon as the bot holds what it owes (the hub inside the last X/PEPE callback, " +
				"each X/PEPE inside its X/WETH callback, the X/WETH pairs inside the last callback), so the pools are repaid in the order they lent",
			Class: "arbitrage", Origin: "cascade_bot", Gain: true,
			Notes: "first borrowed, first repaid",
			build: cascade("v2_cascade_3_fifo", 3, "0.3", true),
		},
		{
			Name:        "v2_cascade_5_fifo",
			Description: "the five-arm cascade unwinding first-paid-first: 0.5 WETH out of the hub, eleven loans repaid in the order they were taken",
			Class:       "arbitrage", Origin: "cascade_bot", Gain: true,
			Notes: "first borrowed, first repaid",
			build: cascade("v2_cascade_5_fifo", 5, "0.5", true),
		},
		{
			Name: "wrap_cycle_refund",
			Description: "the searcher sends 1 ETH with the call; the bot wraps it (WETH9 deposit), sells the WETH for SNX on factory B's pair, which pays the SNX straight to factory A's, which pays WETH back; " +
				"the bot unwraps the principal and a tip, returns the 1 ETH to the searcher, pays the tip (30% of the gain) to block.coinbase and keeps the rest in WETH",
			Class: "arbitrage", Origin: "wrap_bot", Gain: true,
			Notes: "the sender's ETH makes a round trip through the bot; origin_gain adds the builder payment back",
			build: func(w *World) *types.Transaction {
				bot, principal := w.A("wrap_bot"), ether("1")
				hops, out := w.routeIn(principal, []string{"WETH", "SNX", "WETH"}, []string{"B:WETH/SNX", "A:WETH/SNX"})
				gain := new(big.Int).Sub(out, principal)
				mustGain("wrap_cycle_refund", gain)
				return w.newTx("searcher", &bot, principal, w.callData(bot, "run", hops, percent(gain, 30)), scenarioGas)
			},
		},
		{
			Name: "executor_controller",
			Description: "the searcher calls a Controller (the recipient), which calls an ArbExecutor it controls; the executor pays 2 WETH of its own to factory B's WETH/GNO pair, " +
				"which pays GNO straight to factory A's, which pays WETH back to the executor; the controller then checks the executor's WETH balance",
			Class: "arbitrage", Origin: "arb_executor", Gain: true,
			Notes: "the executor is neither the sender nor the recipient; the controller moves no value",
			build: func(w *World) *types.Transaction {
				ctrl, in := w.A("controller"), ether("2")
				hops, out := w.routeIn(in, []string{"WETH", "GNO", "WETH"}, []string{"B:WETH/GNO", "A:WETH/GNO"})
				gain := new(big.Int).Sub(out, in)
				mustGain("executor_controller", gain)
				return w.newTx("searcher", &ctrl, nil, w.callData(ctrl, "dispatch", w.A("arb_executor"), w.A("WETH"), in, hops, gain), scenarioGas)
			},
		},
		{
			Name: "cold_wallet_payout",
			Description: "a PayoutBot (the recipient) runs a two-pool SUSHI cycle with 2 WETH of its own (factory B's pair, then factory A's) and, in the same transaction, " +
				"sends 60% of its WETH gain to a cold wallet (an EOA)",
			Class: "arbitrage", Origin: "payout_bot", Gain: true, Payees: []string{"cold_wallet"},
			Notes: "origin_gain is the bot's gain before the payout; gross_profit what it kept",
			build: func(w *World) *types.Transaction {
				bot, in := w.A("payout_bot"), ether("2")
				hops, out := w.routeIn(in, []string{"WETH", "SUSHI", "WETH"}, []string{"B:WETH/SUSHI", "A:WETH/SUSHI"})
				gain := new(big.Int).Sub(out, in)
				mustGain("cold_wallet_payout", gain)
				return w.newTx("searcher", &bot, nil, w.callData(bot, "run", w.A("WETH"), in, hops, w.A("cold_wallet"), percent(gain, 60)), scenarioGas)
			},
		},
		{
			Name: "flash_loan_fee",
			Description: "a flash loan with a fee: the FlashBorrower (the recipient) borrows 3 WETH from a FlashLender (0.09% fee), runs them through factory B's WETH/BAL pair and factory A's back to itself, " +
				"and repays the lender 3 WETH and the fee by transfer; the borrower keeps the rest",
			Class: "arbitrage", Origin: "borrower", Gain: true,
			Notes: "the lender's gain is the fee, in the token it lent: it trades nothing and is no arbitrage",
			build: func(w *World) *types.Transaction {
				b, loan := w.A("borrower"), ether("3")
				hops, out := w.routeIn(loan, []string{"WETH", "BAL", "WETH"}, []string{"B:WETH/BAL", "A:WETH/BAL"})
				fee := new(big.Int).Div(new(big.Int).Mul(loan, big.NewInt(9)), big.NewInt(10_000))
				mustGain("flash_loan_fee", new(big.Int).Sub(out, new(big.Int).Add(loan, fee)))
				return w.newTx("searcher", &b, nil, w.callData(b, "run", w.A("lender"), loan, hops), scenarioGas)
			},
		},
		{
			Name:        "flash_loan_repay_only",
			Description: "the control: the borrower takes a 5 WETH flash loan and repays it with the 0.09% fee from its own WETH, trading nothing",
			Class:       "none",
			Notes:       "the lender ends with a gain in the token it lent (the fee), the borrower with a loss; nothing changes token",
			build: func(w *World) *types.Transaction {
				b := w.A("borrower")
				return w.newTx("searcher", &b, nil, w.callData(b, "run", w.A("lender"), ether("5"), []Hop{}), scenarioGas)
			},
		},
		{
			Name:        "sandwich_front",
			Description: "a sandwich's front-run, the first of three transactions in one block: the SandwichBot buys FLOKI with 3 WETH on A:WETH/FLOKI",
			Class:       "none",
			Notes:       "transaction 0 of 3 in its block; alone, a swap",
			build: func(w *World) *types.Transaction {
				sw = w.planSandwich()
				return sw.front
			},
		},
		{
			Name:        "sandwich_victim",
			Description: "the sandwich's victim, in the same block: a user swaps 5 ETH for FLOKI through Router02 (swapExactETHForTokens) at the worse price the front-run left, its minimum output exactly met",
			Class:       "none", SameBlock: true,
			Notes: "transaction 1 of 3 in its block",
			build: func(w *World) *types.Transaction { return sw.victim },
		},
		{
			Name:        "sandwich_back",
			Description: "the sandwich's back-run, last in the block: the SandwichBot sells all the FLOKI it bought back to A:WETH/FLOKI for more WETH than it paid",
			Class:       "none", SameBlock: true,
			Notes: "transaction 2 of 3 in its block; the bot's gain over the three legs is no cycle within any one of them",
			build: func(w *World) *types.Transaction { return sw.back },
		},
	}
}
