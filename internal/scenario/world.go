package scenario

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/flowq/flowq/index/fetch"
	"github.com/flowq/flowq/internal/evmnode"
)

// Gas pricing of every transaction: a 1 gwei tip over the base fee, capped
// at 100 gwei.
var (
	tipCap = big.NewInt(1_000_000_000)
	feeCap = big.NewInt(100_000_000_000)
)

// ether returns x·10^18 for a decimal string x ("0.0125", "1500000000").
func ether(x string) *big.Int {
	r, ok := new(big.Rat).SetString(x)
	if !ok {
		panic("scenario: bad amount " + x)
	}
	r.Mul(r, new(big.Rat).SetInt(big.NewInt(1_000_000_000_000_000_000)))
	if !r.IsInt() {
		panic("scenario: amount has more than 18 decimals: " + x)
	}
	return new(big.Int).Set(r.Num())
}

// failure aborts the world's construction; Run recovers it into an error.
type failure struct{ err error }

func fail(format string, args ...any) { panic(failure{fmt.Errorf(format, args...)}) }

// World is the chain the scenarios run on: the node, a JSON-RPC client to
// it, the named accounts and contracts, and a queue of transactions for the
// next block.
type World struct {
	ctx   context.Context
	node  *evmnode.Node
	rpc   *fetch.Client
	art   map[string]*Artifact
	keys  map[string]*ecdsa.PrivateKey
	nonce map[common.Address]uint64

	// Names maps every named address to its name ("WETH", "bot", "A:BEAN/WETH").
	Names map[common.Address]string
	addr  map[string]common.Address
	kind  map[common.Address]string // artifact name of contracts

	// Tokens are the fungible tokens tracked for the truth (ERC-20s, WETH
	// and the pairs' LP tokens), in creation order.
	Tokens []common.Address
	// NFTs tracked: ERC-721 ids and ERC-1155 ids per contract.
	NFT721  map[common.Address][]int64
	NFT1155 map[common.Address][]int64
	// Claims are ERC-6909 ids tracked per contract: the PoolManager's
	// claims, one per V4 currency (its address as the id; 0 for ETH).
	Claims map[common.Address][]common.Address

	queue    []*types.Transaction
	labels   []string
	queueGas uint64
}

func newWorld(ctx context.Context, node *evmnode.Node, rpc *fetch.Client, art map[string]*Artifact) *World {
	w := &World{
		ctx: ctx, node: node, rpc: rpc, art: art,
		keys: map[string]*ecdsa.PrivateKey{}, nonce: map[common.Address]uint64{},
		Names: map[common.Address]string{}, addr: map[string]common.Address{}, kind: map[common.Address]string{},
		NFT721: map[common.Address][]int64{}, NFT1155: map[common.Address][]int64{},
		Claims: map[common.Address][]common.Address{},
	}
	return w
}

// name records a named address.
func (w *World) name(n string, a common.Address) common.Address {
	if old, ok := w.addr[n]; ok && old != a {
		fail("name %s used twice", n)
	}
	w.addr[n] = a
	w.Names[a] = n
	return a
}

// A returns the address named n.
func (w *World) A(n string) common.Address {
	a, ok := w.addr[n]
	if !ok {
		fail("no address named %q", n)
	}
	return a
}

// account registers funded key i under a name.
func (w *World) account(n string, i int) common.Address {
	k := evmnode.Key(i)
	a := crypto.PubkeyToAddress(k.PublicKey)
	w.keys[n] = k
	return w.name(n, a)
}

func (w *World) key(n string) *ecdsa.PrivateKey {
	k, ok := w.keys[n]
	if !ok {
		fail("no key named %q", n)
	}
	return k
}

// pack encodes a call of contract kind's method.
func (w *World) pack(kind, method string, args ...any) []byte {
	a, ok := w.art[kind]
	if !ok {
		fail("no artifact %s", kind)
	}
	data, err := a.ABI.Pack(method, args...)
	if err != nil {
		fail("packing %s.%s: %v", kind, method, err)
	}
	return data
}

// callData encodes a call of the contract at addr (its kind is known).
func (w *World) callData(addr common.Address, method string, args ...any) []byte {
	k, ok := w.kind[addr]
	if !ok {
		fail("no contract kind for %s", addr)
	}
	return w.pack(k, method, args...)
}

// newTx signs a dynamic-fee transaction from the named account with the
// next nonce.
func (w *World) newTx(from string, to *common.Address, value *big.Int, data []byte, gas uint64) *types.Transaction {
	k := w.key(from)
	a := crypto.PubkeyToAddress(k.PublicKey)
	if value == nil {
		value = new(big.Int)
	}
	tx := types.MustSignNewTx(k, w.node.Signer(), &types.DynamicFeeTx{
		ChainID: big.NewInt(evmnode.ChainID), Nonce: w.nonce[a], GasTipCap: tipCap, GasFeeCap: feeCap,
		Gas: gas, To: to, Value: value, Data: data,
	})
	w.nonce[a]++
	return tx
}

// send queues a call for the next setup block; a block is mined when the
// queue's gas would pass the block gas limit.
func (w *World) send(label, from string, to common.Address, value *big.Int, data []byte, gas uint64) {
	w.enqueue(label, w.newTx(from, &to, value, data, gas))
}

func (w *World) enqueue(label string, tx *types.Transaction) {
	if w.queueGas+tx.Gas() > evmnode.GasLimit-1_000_000 {
		w.flush()
	}
	w.queue = append(w.queue, tx)
	w.labels = append(w.labels, label)
	w.queueGas += tx.Gas()
}

// deploy queues a contract creation and returns its address.
func (w *World) deploy(name, from, kind string, args ...any) common.Address {
	a, ok := w.art[kind]
	if !ok {
		fail("no artifact %s", kind)
	}
	code := append([]byte{}, a.Bytecode...)
	if len(args) > 0 {
		enc, err := a.ABI.Pack("", args...)
		if err != nil {
			fail("packing %s constructor: %v", kind, err)
		}
		code = append(code, enc...)
	}
	sender := crypto.PubkeyToAddress(w.key(from).PublicKey)
	addr := crypto.CreateAddress(sender, w.nonce[sender])
	w.enqueue("deploy "+name, w.newTx(from, nil, nil, code, 7_000_000))
	w.kind[addr] = kind
	return w.name(name, addr)
}

// flush mines the queued transactions in one block and checks that each
// succeeded.
func (w *World) flush() {
	if len(w.queue) == 0 {
		return
	}
	b, err := w.node.Mine(w.ctx, w.queue...)
	if err != nil {
		fail("setup: %v", err)
	}
	for i, r := range w.node.Receipts(b.Hash()) {
		if r.Status != types.ReceiptStatusSuccessful {
			fail("setup transaction %q (%s) in block %d failed", w.labels[i], r.TxHash.Hex(), b.NumberU64())
		}
	}
	w.queue, w.labels, w.queueGas = nil, nil, 0
}

// mineBlock mines txs, in order, in one block of their own and returns the
// block and its receipts.
func (w *World) mineBlock(txs []*types.Transaction) (*types.Block, types.Receipts) {
	w.flush()
	b, err := w.node.Mine(w.ctx, txs...)
	if err != nil {
		fail("%v", err)
	}
	rs := w.node.Receipts(b.Hash())
	if len(rs) != len(txs) {
		fail("block %d has %d receipts for %d transactions", b.NumberU64(), len(rs), len(txs))
	}
	return b, rs
}

// --- reading the chain over JSON-RPC --------------------------------------

// callArgs is an eth_call request object.
type callArgs struct {
	To   common.Address `json:"to"`
	Data hexutil.Bytes  `json:"data"`
}

// view calls a view method at the head and unpacks its results.
func (w *World) view(addr common.Address, method string, args ...any) []any {
	w.flush()
	k := w.kind[addr]
	data := w.pack(k, method, args...)
	var out hexutil.Bytes
	if err := w.rpc.Call(w.ctx, &out, "eth_call", callArgs{To: addr, Data: data}, "latest"); err != nil {
		fail("eth_call %s.%s: %v", w.Names[addr], method, err)
	}
	vals, err := w.art[k].ABI.Unpack(method, out)
	if err != nil {
		fail("unpacking %s.%s: %v", w.Names[addr], method, err)
	}
	return vals
}

func (w *World) viewBig(addr common.Address, method string, args ...any) *big.Int {
	return w.view(addr, method, args...)[0].(*big.Int)
}

// reserves returns a pair's reserves of tokenIn and tokenOut.
func (w *World) reserves(pair, tokenIn common.Address) (rIn, rOut *big.Int) {
	v := w.view(pair, "getReserves")
	r0, r1 := v[0].(*big.Int), v[1].(*big.Int)
	t0 := w.view(pair, "token0")[0].(common.Address)
	if t0 == tokenIn {
		return r0, r1
	}
	return r1, r0
}

// amountOut is UniswapV2Library.getAmountOut: a 0.3% fee.
func amountOut(in, rIn, rOut *big.Int) *big.Int {
	inFee := new(big.Int).Mul(in, big.NewInt(997))
	num := new(big.Int).Mul(inFee, rOut)
	den := new(big.Int).Add(new(big.Int).Mul(rIn, big.NewInt(1000)), inFee)
	return num.Div(num, den)
}

// amountIn is UniswapV2Library.getAmountIn.
func amountIn(out, rIn, rOut *big.Int) *big.Int {
	num := new(big.Int).Mul(new(big.Int).Mul(rIn, out), big.NewInt(1000))
	den := new(big.Int).Mul(new(big.Int).Sub(rOut, out), big.NewInt(997))
	return num.Div(num, den).Add(num, big.NewInt(1))
}

// --- pairs ----------------------------------------------------------------

// pairKey names a pair: "A:BEAN/WETH" (factory A or B).
func pairKey(f, a, b string) string { return f + ":" + a + "/" + b }

// createPool creates the pair of tokens a and b on factory f ("A" or "B")
// and adds liquidity ra of a and rb of b from the deployer by transfer and
// mint, as the router would.
func (w *World) createPool(f, a, b string, ra, rb *big.Int) common.Address {
	fac := w.A("factory" + f)
	ta, tb := w.A(a), w.A(b)
	w.send("createPair "+pairKey(f, a, b), "deployer", fac, nil, w.callData(fac, "createPair", ta, tb), 3_500_000)
	w.flush()
	pair := w.view(fac, "getPair", ta, tb)[0].(common.Address)
	if pair == (common.Address{}) {
		fail("pair %s not created", pairKey(f, a, b))
	}
	w.kind[pair] = "UniswapV2Pair"
	w.name(pairKey(f, a, b), pair)
	w.Tokens = append(w.Tokens, pair) // LP token
	deployer := w.A("deployer")
	w.send("fund "+pairKey(f, a, b), "deployer", ta, nil, w.callData(ta, "transfer", pair, ra), 200_000)
	w.send("fund "+pairKey(f, a, b), "deployer", tb, nil, w.callData(tb, "transfer", pair, rb), 200_000)
	w.send("mint "+pairKey(f, a, b), "deployer", pair, nil, w.callData(pair, "mint", deployer), 400_000)
	return pair
}

// swapArgs returns (amount0Out, amount1Out) for taking out of tokenOut.
func (w *World) swapArgs(pair, tokenOut common.Address, out *big.Int) (*big.Int, *big.Int) {
	t0 := w.view(pair, "token0")[0].(common.Address)
	if t0 == tokenOut {
		return out, new(big.Int)
	}
	return new(big.Int), out
}

// --- the bot's actions ----------------------------------------------------

// Action is the Bot contract's Action struct.
type Action struct {
	Kind   uint8
	Target common.Address
	Value  *big.Int
	Data   []byte
}

const (
	actCall       = 0
	actCoinbase   = 1
	actMinBalance = 2
)

func call(target common.Address, data []byte) Action {
	return Action{Kind: actCall, Target: target, Value: new(big.Int), Data: data}
}

// encodeActions is abi.encode(Action[]), the `data` of a flash swap.
func (w *World) encodeActions(acts []Action) []byte {
	typ := w.art["Bot"].ABI.Methods["execute"].Inputs
	enc, err := abi.Arguments(typ).Pack(acts)
	if err != nil {
		fail("encoding actions: %v", err)
	}
	return enc
}

// swapCall is pair.swap taking out of tokenOut, paying to `to`, with the
// given callback actions (none: no callback).
func (w *World) swapCall(pair, tokenOut common.Address, out *big.Int, to common.Address, callback []Action) Action {
	a0, a1 := w.swapArgs(pair, tokenOut, out)
	var data []byte
	if len(callback) > 0 {
		data = w.encodeActions(callback)
	}
	return call(pair, w.callData(pair, "swap", a0, a1, to, data))
}

func (w *World) transferCall(token, to common.Address, amount *big.Int) Action {
	return call(token, w.callData(token, "transfer", to, amount))
}

// lower is an address's lowercase hex.
func lower(a common.Address) string { return strings.ToLower(a.Hex()) }
