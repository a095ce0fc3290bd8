package scenario

import (
	"math/big"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/flowq/flowq/internal/evmnode"
)

// fungibles are the OpenZeppelin ERC20PresetFixedSupply tokens deployed
// (18 decimals each); TKN is the Uniswap v2-periphery test ERC20.
var fungibles = []string{
	"USDC", "DAI", "USDT", "WBTC", "GRT", "LINK", "UNI", "MKR", "COMP", "AAVE", "RPL",
	"BEAN", "CHAD", "DUCK", "MOON",
	"KABOSU", "PUPPIES", "TERMINUS", "TOMOE", "YFI", "CPOOL", "ZETA",
}

// armsR are tx_R's three arm tokens (converging on BEAN), armsS tx_S's six
// (converging on KABOSU).
var (
	armsR = []string{"CHAD", "DUCK", "MOON"}
	armsS = []string{"PUPPIES", "TERMINUS", "TOMOE", "YFI", "CPOOL", "ZETA"}
)

// starPool is one Uniswap V3 pool of the star scenarios: reserves ra of a
// and rb of b (whole tokens, 18 decimals).
type starPool struct {
	a, b   string
	ra, rb string
}

// starPools are the stars' pools (Uniswap V3, 0.3%, full range), at prices
// where WETH → X → BEAN (resp. KABOSU) gives about 5% more than the hub
// pays back in WETH, with reserves of a few to a few hundred WETH as
// memecoin pools have: tx_R's hub BEAN/WETH holds 50 WETH and 1.5 billion
// BEAN (3·10^7 BEAN per WETH); tx_S's hub KABOSU/WETH 40 WETH and 6
// billion KABOSU (1.5·10^8 per WETH).
var starPools = []starPool{
	{"BEAN", "WETH", "1500000000", "50"},
	{"CHAD", "WETH", "200000", "20"},        // 10^4 CHAD per WETH
	{"CHAD", "BEAN", "100000", "316500000"}, // 3165 BEAN per CHAD
	{"DUCK", "WETH", "20000000", "25"},      // 8·10^5 DUCK per WETH
	{"DUCK", "BEAN", "8000000", "316300000"},
	{"WETH", "MOON", "15", "1500000"}, // 10^5 MOON per WETH
	{"BEAN", "MOON", "316100000", "1000000"},

	{"KABOSU", "WETH", "6000000000", "40"},
	{"PUPPIES", "WETH", "45000000000", "15"}, // 3·10^9 PUPPIES per WETH
	{"PUPPIES", "KABOSU", "30000000000", "1579000000"},
	{"TERMINUS", "WETH", "300000", "10"}, // 3·10^4 per WETH
	{"TERMINUS", "KABOSU", "200000", "1052000000"},
	{"TOMOE", "WETH", "150000", "15"}, // 10^4 per WETH
	{"TOMOE", "KABOSU", "100000", "1578000000"},
	{"YFI", "WETH", "100", "200"}, // 0.5 YFI per WETH
	{"YFI", "KABOSU", "40", "12620000000"},
	{"CPOOL", "WETH", "240000", "12"}, // 2·10^4 per WETH
	{"CPOOL", "KABOSU", "200000", "1577000000"},
	{"ZETA", "WETH", "125000", "25"}, // 5000 per WETH
	{"ZETA", "KABOSU", "50000", "1578000000"},
}

// genesisAlloc places WETH9 (runtime code from the npm build) at the
// mainnet WETH address, with the storage its constructor would have
// written: name "Wrapped Ether" (slot 0), symbol "WETH" (slot 1), decimals
// 18 (slot 2), as Solidity stores short strings (bytes left-aligned, length
// times two in the last byte).
func genesisAlloc(art map[string]*Artifact) types.GenesisAlloc {
	short := func(s string) common.Hash {
		var h common.Hash
		copy(h[:], s)
		h[31] = byte(2 * len(s))
		return h
	}
	return types.GenesisAlloc{
		MainnetWETH: {
			Code:    art["WETH9"].Runtime,
			Balance: new(big.Int),
			Storage: map[common.Hash]common.Hash{
				common.BigToHash(big.NewInt(0)): short("Wrapped Ether"),
				common.BigToHash(big.NewInt(1)): short("WETH"),
				common.BigToHash(big.NewInt(2)): common.BigToHash(big.NewInt(18)),
			},
		},
	}
}

// setup deploys the contracts, creates and funds the pools, and gives the
// actors what their scenarios need.
func (w *World) setup() {
	deployer := w.account("deployer", 0)
	searcher := w.account("searcher", 1)
	user := w.account("user", 2)
	w.account("delegate", 3)
	collector := w.account("collector", 4)
	w.account("recipient", 5)
	operator := w.account("operator", 6)
	w.name("builder", evmnode.Coinbase)

	weth := w.name("WETH", MainnetWETH)
	w.kind[weth] = "WETH9"
	w.Tokens = append(w.Tokens, weth)

	supply := ether("1000000000000") // 10^12 tokens
	for _, sym := range fungibles {
		w.Tokens = append(w.Tokens, w.deploy(sym, "deployer", "ERC20PresetFixedSupply", sym+" Token", sym, supply, deployer))
	}
	w.Tokens = append(w.Tokens, w.deploy("TKN", "deployer", "ERC20", supply))

	factoryA := w.deploy("factoryA", "deployer", "UniswapV2Factory", deployer)
	factoryB := w.deploy("factoryB", "deployer", "UniswapV2Factory", deployer)
	routerA := w.deploy("routerA", "deployer", "UniswapV2Router02", factoryA, weth)
	w.deploy("routerB", "deployer", "UniswapV2Router02", factoryB, weth)

	factoryV3 := w.deploy("factoryV3", "deployer", "UniswapV3Factory")
	bot := w.deploy("bot", "deployer", "Bot", searcher)
	lpBot := w.deploy("lp", "deployer", "Bot", deployer)
	executor := w.deploy("executor", "deployer", "Executor", operator)
	strategy := w.deploy("strategy", "deployer", "Bot", executor)

	nft721 := w.deploy("PUNK", "deployer", "ERC721PresetMinterPauserAutoId", "Flowq Punks", "PUNK", "ipfs://flowq-punks/")
	nft1155 := w.deploy("ITEMS", "deployer", "ERC1155PresetMinterPauser", "ipfs://flowq-items/{id}.json")
	w.flush()

	// WETH for the pools and the bots.
	w.send("wrap", "deployer", weth, ether("20000"), w.callData(weth, "deposit"), 100_000)

	// Two-pool arbitrages: the same pair on two factories at different prices.
	w.createPool("A", "WETH", "USDC", ether("100"), ether("200000"))
	w.createPool("B", "WETH", "USDC", ether("100"), ether("210000"))
	w.createPool("A", "WETH", "UNI", ether("100"), ether("10000"))
	w.createPool("B", "WETH", "UNI", ether("100"), ether("11000"))
	w.createPool("A", "WETH", "MKR", ether("100"), ether("100"))
	w.createPool("B", "WETH", "MKR", ether("100"), ether("100.7"))
	w.createPool("A", "WETH", "COMP", ether("100"), ether("5000"))
	w.createPool("B", "WETH", "COMP", ether("100"), ether("5300"))
	w.createPool("A", "WETH", "AAVE", ether("100"), ether("1000"))
	w.createPool("B", "WETH", "AAVE", ether("100"), ether("1080"))
	w.createPool("A", "WETH", "LINK", ether("100"), ether("1500"))
	w.createPool("B", "WETH", "LINK", ether("100"), ether("1650"))
	// Triangular.
	w.createPool("A", "WETH", "DAI", ether("100"), ether("200000"))
	w.createPool("A", "DAI", "USDT", ether("500000"), ether("525000"))
	w.createPool("A", "USDT", "WETH", ether("200000"), ether("100"))
	// Router swaps and liquidity.
	w.createPool("A", "WETH", "WBTC", ether("100"), ether("5"))
	w.createPool("A", "WBTC", "GRT", ether("5"), ether("500000"))
	lp := w.createPool("A", "TKN", "WETH", ether("100000"), ether("100"))
	// Uniswap V3: WETH/RPL at 100 RPL per WETH (0.3%, full range), and a
	// V2 pair where RPL is cheaper.
	w.createPool("A", "WETH", "RPL", ether("100"), ether("11000"))
	w.createPoolV3(factoryV3, lpBot, "WETH", "RPL", ether("100"), ether("10000"))
	// tx_R and tx_S: Uniswap V3 pools, which pay the swap's recipient and
	// call back the caller.
	for _, p := range starPools {
		w.createPoolV3(factoryV3, lpBot, p.a, p.b, ether(p.ra), ether(p.rb))
	}

	// Working capital.
	for _, who := range []string{"bot", "strategy"} {
		w.send("fund "+who, "deployer", weth, nil, w.callData(weth, "transfer", w.A(who), ether("100")), 100_000)
	}
	w.send("fund delegate", "deployer", weth, nil, w.callData(weth, "transfer", w.A("delegate"), ether("100")), 100_000)
	w.send("fund user WBTC", "deployer", w.A("WBTC"), nil, w.callData(w.A("WBTC"), "transfer", user, ether("10")), 100_000)
	w.send("fund user TKN", "deployer", w.A("TKN"), nil, w.callData(w.A("TKN"), "transfer", user, ether("1000000")), 100_000)
	w.send("fund user WETH", "deployer", weth, nil, w.callData(weth, "transfer", user, ether("10")), 100_000)
	maxU := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	for _, t := range []common.Address{w.A("WBTC"), w.A("TKN"), lp} {
		w.send("approve router", "user", t, nil, w.callData(t, "approve", routerA, maxU), 100_000)
	}
	// NFTs: PUNK #0..#2 and ITEMS #1..#3 (100 each) to the collector.
	for i := 0; i < 3; i++ {
		w.send("mint PUNK", "deployer", nft721, nil, w.callData(nft721, "mint", collector), 300_000)
	}
	w.NFT721[nft721] = []int64{0, 1, 2}
	ids := []*big.Int{big.NewInt(1), big.NewInt(2), big.NewInt(3)}
	amts := []*big.Int{big.NewInt(100), big.NewInt(100), big.NewInt(100)}
	w.send("mint ITEMS", "deployer", nft1155, nil, w.callData(nft1155, "mintBatch", collector, ids, amts, []byte{}), 300_000)
	w.NFT1155[nft1155] = []int64{1, 2, 3}
	_ = factoryB
	_ = lpBot
	_ = bot
	_ = strategy
	w.flush()
}

// delegateAuth signs an EIP-7702 authorization of the named account to
// code at target, valid for the account's nonce after the transaction's
// own (the account sends the transaction itself).
func (w *World) delegateAuth(name string, target common.Address) types.SetCodeAuthorization {
	k := w.key(name)
	a := crypto.PubkeyToAddress(k.PublicKey)
	auth, err := types.SignSetCode(k, types.SetCodeAuthorization{
		ChainID: *uint256FromUint64(evmnode.ChainID),
		Address: target,
		Nonce:   w.nonce[a] + 1,
	})
	if err != nil {
		fail("signing authorization: %v", err)
	}
	return auth
}

// Uniswap V3 full-range ticks for the 0.3% fee tier (tick spacing 60).
const (
	v3Fee      = 3000
	v3MinTick  = -887220
	v3MaxTick  = 887220
	v3MinSqrt  = "4295128740"                                        // MIN_SQRT_RATIO + 1
	v3MaxSqrt  = "1461446703485210103287273052203988822378723970341" // MAX_SQRT_RATIO - 1
	v3PoolName = "V3:"
)

// createPoolV3 creates a Uniswap V3 pool of a and b (0.3%), initialises
// its price to rb/ra and adds full-range liquidity through the lp Bot,
// which pays the pool in uniswapV3MintCallback.
func (w *World) createPoolV3(factory, lpBot common.Address, a, b string, ra, rb *big.Int) common.Address {
	ta, tb := w.A(a), w.A(b)
	w.send("createPool V3 "+a+"/"+b, "deployer", factory, nil, w.callData(factory, "createPool", ta, tb, big.NewInt(v3Fee)), 6_000_000)
	w.flush()
	pool := w.view(factory, "getPool", ta, tb, big.NewInt(v3Fee))[0].(common.Address)
	if pool == (common.Address{}) {
		fail("V3 pool %s/%s not created", a, b)
	}
	w.kind[pool] = "UniswapV3Pool"
	w.name(v3PoolName+a+"/"+b, pool)
	r0, r1 := ra, rb
	if tb.Cmp(ta) < 0 { // token0 is the smaller address
		r0, r1 = rb, ra
	}
	// sqrtPriceX96 = sqrt(r1/r0)·2^96; liquidity = sqrt(r0·r1).
	sq := new(big.Int).Lsh(r1, 192)
	sq.Div(sq, r0).Sqrt(sq)
	liq := new(big.Int).Sqrt(new(big.Int).Mul(r0, r1))
	w.send("initialize V3 "+a+"/"+b, "deployer", pool, nil, w.callData(pool, "initialize", sq), 200_000)
	w.send("fund lp", "deployer", ta, nil, w.callData(ta, "transfer", lpBot, new(big.Int).Mul(ra, big.NewInt(2))), 100_000)
	w.send("fund lp", "deployer", tb, nil, w.callData(tb, "transfer", lpBot, new(big.Int).Mul(rb, big.NewInt(2))), 100_000)
	mint := call(pool, w.callData(pool, "mint", lpBot, big.NewInt(v3MinTick), big.NewInt(v3MaxTick), liq, []byte{}))
	w.send("mint V3 "+a+"/"+b, "deployer", lpBot, nil, w.pack("Bot", "execute", []Action{mint}), 1_000_000)
	w.flush()
	return pool
}

// poolV3 is the V3 pool of two named tokens, whichever order it was
// created in.
func (w *World) poolV3(a, b string) common.Address {
	if p, ok := w.addr[v3PoolName+a+"/"+b]; ok {
		return p
	}
	return w.A(v3PoolName + b + "/" + a)
}

// v3Direction returns swap's zeroForOne and the loosest price limit for
// selling tokenIn to pool.
func (w *World) v3Direction(pool, tokenIn common.Address) (bool, *big.Int) {
	zeroForOne := w.view(pool, "token0")[0].(common.Address) == tokenIn
	limit, _ := new(big.Int).SetString(v3MaxSqrt, 10)
	if zeroForOne {
		limit, _ = new(big.Int).SetString(v3MinSqrt, 10)
	}
	return zeroForOne, limit
}

// swapV3 is pool.swap selling tokenIn (amountSpecified > 0: exact input;
// < 0: exact output), paying the output to recipient; the pool calls back
// the bot, which runs the callback actions, or pays what the pool is owed
// when there are none.
func (w *World) swapV3(pool, tokenIn common.Address, amountSpecified *big.Int, recipient common.Address, callback []Action) Action {
	zeroForOne, limit := w.v3Direction(pool, tokenIn)
	var data []byte
	if len(callback) > 0 {
		data = w.encodeActions(callback)
	}
	return call(pool, w.callData(pool, "swap", recipient, zeroForOne, amountSpecified, limit, data))
}

// quoteV3 prices the swap of swapV3 at the head (Bot.quoteV3 by eth_call):
// what the pool is owed in tokenIn and what it pays out.
func (w *World) quoteV3(pool, tokenIn common.Address, amountSpecified *big.Int) (in, out *big.Int) {
	zeroForOne, limit := w.v3Direction(pool, tokenIn)
	v := w.view(w.A("bot"), "quoteV3", pool, zeroForOne, amountSpecified, limit)
	d0, d1 := v[0].(*big.Int), v[1].(*big.Int)
	if !zeroForOne {
		d0, d1 = d1, d0
	}
	if d0.Sign() <= 0 || d1.Sign() >= 0 {
		fail("quote of %s: deltas %s %s", w.Names[pool], v[0], v[1])
	}
	return d0, new(big.Int).Neg(d1)
}
