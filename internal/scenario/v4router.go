package scenario

import (
	"math/big"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
)

// The fourth phase (issue 17): Uniswap V4's periphery and the Universal
// Router on the same chain, after every earlier scenario (which keep their
// blocks and bytes). PositionManager (npm @uniswap/v4-periphery,
// foundry-out/, unmodified) is deployed for the router's constructor
// (createPoolV4Posm adds the ETH/PENDLE pool's liquidity through it); UniversalRouter
// (npm @uniswap/universal-router, artifacts/, unmodified) runs a user's swap
// and a searcher's arbitrage with its V4_SWAP, V2_SWAP_EXACT_IN and
// UNWRAP_WETH commands. Neither uses Permit2 here: the router is paid in
// ETH (the call's value, which it settles to the PoolManager itself) and
// its V2 legs are paid by the V4 take straight into the pair (ALREADY_PAID);
// the PositionManager settles from its own balance (the deployer pays it
// first) with payerIsUser false. Both are built with Permit2's canonical
// address, where this chain has no code, so that any use of it would
// revert rather than pass silently.

// permit2Canonical is Permit2's address on every chain Uniswap deploys to.
// The scenario chain has no code there (see above).
var permit2Canonical = common.HexToAddress("0x000000000022D473030F116dDEE9F6B43aC78BA3")

// Universal Router commands and V4 router actions (universal-router
// contracts/libraries/Commands.sol, v4-periphery src/libraries/Actions.sol).
const (
	urV2SwapExactIn = 0x08
	urUnwrapWETH    = 0x0c
	urV4Swap        = 0x10

	v4SwapExactInSingle = 0x06
	v4Settle            = 0x0b
	v4SettleAll         = 0x0c
	v4Take              = 0x0e
	v4MintPosition      = 0x02
	v4Sweep             = 0x14
)

// urMsgSender and urAddressThis are the periphery's recipient sentinels
// (ActionConstants.MSG_SENDER and ADDRESS_THIS).
var (
	urMsgSender   = common.BigToAddress(big.NewInt(1))
	urAddressThis = common.BigToAddress(big.NewInt(2))
)

// RouterParameters is UniversalRouter's constructor argument (2.1.0).
type RouterParameters struct {
	Permit2              common.Address
	Weth9                common.Address
	V2Factory            common.Address
	V3Factory            common.Address
	PairInitCodeHash     [32]byte
	PoolInitCodeHash     [32]byte
	V4PoolManager        common.Address
	V3NFTPositionManager common.Address
	V4PositionManager    common.Address
	SpokePool            common.Address
}

// ExactInputSingleParams is IV4Router's.
type ExactInputSingleParams struct {
	PoolKey          PoolKey
	ZeroForOne       bool
	AmountIn         *big.Int
	AmountOutMinimum *big.Int
	HookData         []byte
}

func abiType(t string, comps ...abi.ArgumentMarshaling) abi.Type {
	ty, err := abi.NewType(t, "", comps)
	if err != nil {
		fail("abi type %s: %v", t, err)
	}
	return ty
}

var poolKeyComponents = []abi.ArgumentMarshaling{
	{Name: "currency0", Type: "address"}, {Name: "currency1", Type: "address"},
	{Name: "fee", Type: "uint24"}, {Name: "tickSpacing", Type: "int24"}, {Name: "hooks", Type: "address"},
}

// abiEncode is Solidity's abi.encode of vals with the given types.
func abiEncode(types []abi.Type, vals ...any) []byte {
	args := make(abi.Arguments, len(types))
	for i, t := range types {
		args[i] = abi.Argument{Type: t}
	}
	out, err := args.Pack(vals...)
	if err != nil {
		fail("abi.encode: %v", err)
	}
	return out
}

// v4Plan is abi.encode(bytes actions, bytes[] params): the input of the
// router's V4_SWAP command and of PositionManager.modifyLiquidities.
func v4Plan(actions []byte, params [][]byte) []byte {
	return abiEncode([]abi.Type{abiType("bytes"), abiType("bytes[]")}, actions, params)
}

func (w *World) v4ExactInSingle(key PoolKey, in common.Address, amount *big.Int) []byte {
	zeroForOne, _ := v4Direction(key, in)
	t := abiType("tuple", abi.ArgumentMarshaling{Name: "poolKey", Type: "tuple", Components: poolKeyComponents},
		abi.ArgumentMarshaling{Name: "zeroForOne", Type: "bool"}, abi.ArgumentMarshaling{Name: "amountIn", Type: "uint128"},
		abi.ArgumentMarshaling{Name: "amountOutMinimum", Type: "uint128"}, abi.ArgumentMarshaling{Name: "hookData", Type: "bytes"})
	return abiEncode([]abi.Type{t}, ExactInputSingleParams{PoolKey: key, ZeroForOne: zeroForOne, AmountIn: amount, AmountOutMinimum: new(big.Int), HookData: []byte{}})
}

// createPoolV4Posm initialises the V4 pool of a and b at the price rb/ra
// and mints a full-range position for about ra of a and rb of b to the
// deployer through the PositionManager: the deployer sends it the ERC-20s
// (and the ETH as the call's value), and modifyLiquidities runs
// MINT_POSITION, SETTLE from the manager's own balance per currency and
// SWEEP of what is left back to the deployer.
func (w *World) createPoolV4Posm(a, b string, ra, rb *big.Int) PoolKey {
	key := w.v4Key(a, b)
	r0, r1 := ra, rb
	if key.Currency0 != w.v4Currency(a) {
		r0, r1 = rb, ra
	}
	sq := new(big.Int).Lsh(r1, 192)
	sq.Div(sq, r0).Sqrt(sq)
	liq := new(big.Int).Sqrt(new(big.Int).Mul(r0, r1))
	pm, posm, deployer := w.A("poolManager"), w.A("positionManager"), w.A("deployer")
	w.send("initialize V4 "+a+"/"+b, "deployer", pm, nil, w.callData(pm, "initialize", key, sq), 500_000)
	max0, max1 := percent(r0, 101), percent(r1, 101)
	value := new(big.Int)
	for i, c := range []common.Address{key.Currency0, key.Currency1} {
		amt := []*big.Int{max0, max1}[i]
		if c == (common.Address{}) {
			value = amt
			continue
		}
		w.send("fund PositionManager", "deployer", c, nil, w.pack("ERC20PresetFixedSupply", "transfer", posm, amt), 100_000)
	}
	addr, u128, u256, i24, boolT := abiType("address"), abiType("uint128"), abiType("uint256"), abiType("int24"), abiType("bool")
	mint := abiEncode([]abi.Type{abiType("tuple", poolKeyComponents...), i24, i24, u256, u128, u128, addr, abiType("bytes")},
		key, big.NewInt(v3MinTick), big.NewInt(v3MaxTick), liq, max0, max1, deployer, []byte{})
	actions := []byte{v4MintPosition, v4Settle, v4Settle, v4Sweep, v4Sweep}
	params := [][]byte{
		mint,
		abiEncode([]abi.Type{addr, u256, boolT}, key.Currency0, new(big.Int), false), // OPEN_DELTA, paid by the PositionManager
		abiEncode([]abi.Type{addr, u256, boolT}, key.Currency1, new(big.Int), false),
		abiEncode([]abi.Type{addr, addr}, key.Currency0, deployer),
		abiEncode([]abi.Type{addr, addr}, key.Currency1, deployer),
	}
	w.send("liquidity V4 "+a+"/"+b+" (PositionManager)", "deployer", posm, value,
		w.callData(posm, "modifyLiquidities", v4Plan(actions, params), deadline), 1_500_000)
	w.flush()
	return key
}

// setupV4Router deploys the PositionManager and the Universal Router
// against the third phase's PoolManager, V2 factory A and V3 factory, and
// creates the pools:
//
//	V4 ETH/PENDLE   1000 PENDLE per ETH     both router scenarios buy here
//	A:WETH/PENDLE    950 PENDLE per WETH    (V2) the router arbitrage sells here
//	A:PENDLE/ENA     1:1                  (V2) the user's second leg
func (w *World) setupV4Router() {
	deployer := w.A("deployer")
	pm := w.A("poolManager")
	w.Tokens = append(w.Tokens, w.deploy("PENDLE", "deployer", "ERC20PresetFixedSupply", "PENDLE Token", "PENDLE", ether("1000000000000"), deployer))
	w.Claims[pm] = append(w.Claims[pm], w.A("PENDLE"))
	posm := w.deploy("positionManager", "deployer", "PositionManager", pm, permit2Canonical, big.NewInt(300_000), common.Address{}, MainnetWETH)
	w.deploy("universalRouter", "deployer", "UniversalRouter", RouterParameters{
		Permit2: permit2Canonical, Weth9: MainnetWETH,
		V2Factory: w.A("factoryA"), V3Factory: w.A("factoryV3"),
		PairInitCodeHash:  crypto.Keccak256Hash(w.art["UniswapV2Pair"].Bytecode),
		PoolInitCodeHash:  crypto.Keccak256Hash(w.art["UniswapV3Pool"].Bytecode),
		V4PoolManager:     pm,
		V4PositionManager: posm,
	})
	w.flush()
	// The pool's liquidity goes through the PositionManager
	// (createPoolV4Posm: MINT_POSITION, SETTLE, SWEEP). Its transaction logs
	// the position NFT's mint in the unlock callback before the ETH is
	// settled by a value call, which the Parity shape cannot place against
	// the log; the decoder gives such logs one canonical place
	// (normalform/trace settleLogs), so both shapes decode it alike
	// (TestLiveSetupBlocksBothShapes).
	w.createPoolV4Posm("ETH", "PENDLE", ether("100"), ether("100000"))
	w.createPool("A", "WETH", "PENDLE", ether("100"), ether("95000"))
	w.createPool("A", "PENDLE", "ENA", ether("100000"), ether("100000"))
	w.flush()
	// The router computes V2 pair addresses from the factory and the
	// pair's init code hash: make sure it finds the pairs created here.
	weth, aave := w.A("WETH"), w.A("PENDLE")
	t0, t1 := weth, aave
	if t1.Cmp(t0) < 0 {
		t0, t1 = t1, t0
	}
	want := crypto.CreateAddress2(w.A("factoryA"), crypto.Keccak256Hash(t0[:], t1[:]), crypto.Keccak256(w.art["UniswapV2Pair"].Bytecode))
	if got := w.A(pairKey("A", "WETH", "PENDLE")); got != want {
		fail("the Universal Router would look for A:WETH/PENDLE at %s, the factory created it at %s", want.Hex(), got.Hex())
	}
}

// urExecute is the router's execute(commands, inputs, deadline) call from
// the named account with value wei.
func (w *World) urExecute(from string, value *big.Int, commands []byte, inputs [][]byte) *types.Transaction {
	ur := w.A("universalRouter")
	m, err := w.art["UniversalRouter"].ABI.MethodById(crypto.Keccak256([]byte("execute(bytes,bytes[],uint256)"))[:4])
	if err != nil {
		fail("UniversalRouter has no execute(bytes,bytes[],uint256)")
	}
	args, err := m.Inputs.Pack(commands, inputs, deadline)
	if err != nil {
		fail("packing execute: %v", err)
	}
	return w.newTx(from, &ur, value, append(append([]byte{}, m.ID...), args...), scenarioGas)
}

// urV4EthIn is the V4_SWAP input selling `in` ETH on the V4 pool of ETH and
// token, paid by the router from the call's value (SETTLE_ALL of the native
// currency), the token taken straight to `to` (TAKE of the open delta).
func (w *World) urV4EthIn(token string, in *big.Int, to common.Address) []byte {
	key := w.v4Key("ETH", token)
	addr, u256 := abiType("address"), abiType("uint256")
	return v4Plan([]byte{v4SwapExactInSingle, v4SettleAll, v4Take}, [][]byte{
		w.v4ExactInSingle(key, common.Address{}, in),
		abiEncode([]abi.Type{addr, u256}, common.Address{}, in),
		abiEncode([]abi.Type{addr, addr, u256}, w.A(token), to, new(big.Int)), // OPEN_DELTA: all it is owed
	})
}

// urV2AlreadyPaid is the V2_SWAP_EXACT_IN input for a path whose first
// pair was already paid (amountIn 0, ALREADY_PAID), the output paid to
// recipient.
func urV2AlreadyPaid(recipient common.Address, path []common.Address) []byte {
	return abiEncode([]abi.Type{abiType("address"), abiType("uint256"), abiType("uint256"), abiType("address[]"), abiType("bool")},
		recipient, new(big.Int), new(big.Int), path, false)
}

func v4RouterScenarios() []Scenario {
	return []Scenario{
		{
			Name: "v4_ur_user_swap",
			Description: "a user swaps 0.5 ETH for ENA through the Universal Router (its real bytecode, npm @uniswap/universal-router 2.1.0): " +
				"V4_SWAP sells the ETH on the V4 ETH/PENDLE pool and takes the PENDLE straight to the V2 pair A:PENDLE/ENA, V2_SWAP_EXACT_IN sells it there for ENA paid to the user",
			Class: "none",
			Notes: "the router holds the user's ETH for the call and pays the PoolManager (settle); the manager pays the PENDLE to the V2 pair (take) and the pair pays the user",
			build: func(w *World) *types.Transaction {
				pair := w.A(pairKey("A", "PENDLE", "ENA"))
				return w.urExecute("user", ether("0.5"), []byte{urV4Swap, urV2SwapExactIn}, [][]byte{
					w.urV4EthIn("PENDLE", ether("0.5"), pair),
					urV2AlreadyPaid(w.A("user"), []common.Address{w.A("PENDLE"), w.A("ENA")}),
				})
			},
		},
		{
			Name: "v4_ur_v2_arb",
			Description: "a searcher's arbitrage through the Universal Router: it sends 1 ETH with execute; V4_SWAP sells it for PENDLE on the V4 ETH/PENDLE pool (1000 PENDLE per ETH) and takes the PENDLE straight to the V2 pair A:WETH/PENDLE (950 per WETH), " +
				"V2_SWAP_EXACT_IN sells it there for WETH paid to the router, UNWRAP_WETH pays the searcher the ETH",
			Class: "arbitrage", Origin: "searcher",
			Notes: "rule R5 on the real router: the ETH goes searcher → router → PoolManager and comes back WETH → router → ETH → searcher; with the router configured (truth.json's routers) the router is a pass-through and the cycle closes at the searcher",
			build: func(w *World) *types.Transaction {
				pair := w.A(pairKey("A", "WETH", "PENDLE"))
				return w.urExecute("searcher", ether("1"), []byte{urV4Swap, urV2SwapExactIn, urUnwrapWETH}, [][]byte{
					w.urV4EthIn("PENDLE", ether("1"), pair),
					urV2AlreadyPaid(urAddressThis, []common.Address{w.A("PENDLE"), w.A("WETH")}),
					abiEncode([]abi.Type{abiType("address"), abiType("uint256")}, urMsgSender, ether("1")),
				})
			},
		},
	}
}
