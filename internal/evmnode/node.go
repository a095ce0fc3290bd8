// Package evmnode runs a go-ethereum node in process, for flowq's scenario
// generator and tests: the node, eth and catalyst packages assembled in
// developer mode, with geth's tracing API (debug_traceTransaction,
// debug_traceBlockByNumber, the native callTracer and flatCallTracer) and
// its filter API (eth_getLogs) served
// over HTTP JSON-RPC on 127.0.0.1.
//
// The stock ethclient/simulated backend lists a debug module but has no
// debug_traceTransaction; registering tracers.APIs on a node assembled from
// node, eth and catalyst.NewSimulatedBeacon gives it. The native tracers
// register themselves when their package is imported (below).
//
// The chain is deterministic: the funded keys are fixed (Key), the genesis
// is fixed, every block is built by Mine with exactly the transactions it is
// given, a timestamp BlockInterval seconds after its parent's, a fixed fee
// recipient (Coinbase), fixed extra data and a prevrandao derived from the
// block number. The same transactions in the same order give the same
// blocks, hashes, receipts and traces on every run. The simulated beacon is
// started with period 0, so it never seals on its own.
//
// Forks: everything up to Prague is active from genesis (EIP-1559 base fee,
// Cancun, EIP-7702 set-code transactions); Osaka is not.
package evmnode

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"sync"

	"github.com/ethereum/go-ethereum/beacon/engine"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/consensus/misc/eip1559"
	"github.com/ethereum/go-ethereum/core"
	"github.com/ethereum/go-ethereum/core/rawdb"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/eth"
	"github.com/ethereum/go-ethereum/eth/catalyst"
	"github.com/ethereum/go-ethereum/eth/ethconfig"
	"github.com/ethereum/go-ethereum/eth/filters"
	"github.com/ethereum/go-ethereum/eth/tracers"
	_ "github.com/ethereum/go-ethereum/eth/tracers/native" // callTracer, flatCallTracer
	"github.com/ethereum/go-ethereum/log"
	"github.com/ethereum/go-ethereum/miner"
	"github.com/ethereum/go-ethereum/node"
	"github.com/ethereum/go-ethereum/p2p"
	"github.com/ethereum/go-ethereum/params"
)

// ChainID is the chain id of the in-process chain (go-ethereum's developer
// chain id).
const ChainID = 1337

// GenesisTime is the genesis block's timestamp (2024-01-01T00:00:00Z);
// block n has GenesisTime + n*BlockInterval.
const GenesisTime = 1704067200

// BlockInterval is the number of seconds between blocks.
const BlockInterval = 12

// GasLimit is the block gas limit (genesis and target).
const GasLimit = 30_000_000

// Coinbase is the fee recipient of every block: the "builder" that priority
// fees and direct payments (block.coinbase.transfer) go to.
var Coinbase = common.HexToAddress("0x00000000000000000000000000000000000b0b1d")

// extraData is every block's extra data.
var extraData = []byte("flowq evmnode")

// Key returns the i-th fixed funded key: keccak256("flowq evmnode key <i>").
// Keys 0..NumKeys-1 hold FundedBalance wei at genesis.
func Key(i int) *ecdsa.PrivateKey {
	k, err := crypto.ToECDSA(crypto.Keccak256([]byte(fmt.Sprintf("flowq evmnode key %d", i))))
	if err != nil {
		panic(err) // a keccak256 output is a valid secp256k1 key with overwhelming probability; these ten are
	}
	return k
}

// NumKeys is how many keys are funded at genesis.
const NumKeys = 10

// FundedBalance is each funded key's genesis balance: 1,000,000 ether.
var FundedBalance = new(big.Int).Mul(big.NewInt(1_000_000), big.NewInt(params.Ether))

// Config adds accounts to the genesis (contract code and storage placed at
// fixed addresses, or extra balances).
type Config struct {
	Alloc types.GenesisAlloc
	// Verbose sends go-ethereum's log to its default handler; otherwise it
	// is discarded.
	Verbose bool
}

// Node is a running in-process go-ethereum node.
type Node struct {
	stack   *node.Node
	eth     *eth.Ethereum
	beacon  *catalyst.SimulatedBeacon
	engine  *catalyst.ConsensusAPI
	signer  types.Signer
	mu      sync.Mutex
	closed  bool
	genesis *core.Genesis
}

// chainConfig is Prague from genesis, Osaka and later forks off.
func chainConfig() *params.ChainConfig {
	c := *params.AllDevChainProtocolChanges
	c.ChainID = big.NewInt(ChainID)
	c.OsakaTime = nil
	c.BogotaTime = nil
	c.AmsterdamTime = nil
	c.BPO1Time, c.BPO2Time, c.BPO3Time, c.BPO4Time, c.BPO5Time = nil, nil, nil, nil, nil
	c.BlobScheduleConfig = &params.BlobScheduleConfig{
		Cancun: params.DefaultCancunBlobConfig,
		Prague: params.DefaultPragueBlobConfig,
	}
	return &c
}

// Start assembles and starts a node with an HTTP JSON-RPC endpoint on
// 127.0.0.1 at a free port, serving the eth, debug, net and web3 modules.
func Start(cfg Config) (*Node, error) {
	if !cfg.Verbose {
		log.SetDefault(log.NewLogger(log.DiscardHandler()))
	}
	alloc := core.SystemContractAllocs() // EIP-4788, 2935, 7002, 7251 contracts the forks call
	for i := 0; i < NumKeys; i++ {
		alloc[crypto.PubkeyToAddress(Key(i).PublicKey)] = types.Account{Balance: new(big.Int).Set(FundedBalance)}
	}
	maps.Copy(alloc, cfg.Alloc)
	genesis := &core.Genesis{
		Config:     chainConfig(),
		Timestamp:  GenesisTime,
		GasLimit:   GasLimit,
		BaseFee:    big.NewInt(params.InitialBaseFee),
		Difficulty: big.NewInt(0),
		Coinbase:   Coinbase,
		ExtraData:  extraData,
		Alloc:      alloc,
	}

	nodeConf := node.DefaultConfig
	nodeConf.DataDir = "" // in memory
	nodeConf.IPCPath = ""
	nodeConf.P2P = p2p.Config{NoDiscovery: true, MaxPeers: 0, ListenAddr: ""}
	nodeConf.HTTPHost = "127.0.0.1"
	nodeConf.HTTPPort = 0 // a free port, read back with URL
	nodeConf.HTTPModules = []string{"eth", "debug", "net", "web3"}
	nodeConf.HTTPVirtualHosts = []string{"localhost", "127.0.0.1"}
	nodeConf.WSHost = ""
	nodeConf.AuthAddr = "127.0.0.1"
	nodeConf.AuthPort = 0
	stack, err := node.New(&nodeConf)
	if err != nil {
		return nil, fmt.Errorf("evmnode: %w", err)
	}

	ethConf := ethconfig.Defaults
	ethConf.Genesis = genesis
	ethConf.NetworkId = ChainID
	ethConf.SyncMode = ethconfig.FullSync
	ethConf.NoPruning = true // archive: eth_call and tracing at any past block
	ethConf.StateScheme = rawdb.HashScheme
	ethConf.TxPool.NoLocals = true
	ethConf.Miner.GasCeil = GasLimit
	ethConf.Miner.GasPrice = big.NewInt(1)
	ethConf.RPCGasCap = 100_000_000
	ethConf.RPCTxFeeCap = 0 // no cap
	backend, err := eth.New(stack, &ethConf)
	if err != nil {
		stack.Close()
		return nil, fmt.Errorf("evmnode: %w", err)
	}
	apis := tracers.APIs(backend.APIBackend)
	// eth_getLogs and the other filter calls, as a full node serves them
	// (an rpc.API copied from the tracers' keeps the rpc package, which
	// only fetching packages import, out of this one).
	logsAPI := apis[0]
	logsAPI.Namespace = "eth"
	logsAPI.Service = filters.NewFilterAPI(filters.NewFilterSystem(backend.APIBackend, filters.Config{}))
	stack.RegisterAPIs(append(apis, logsAPI))
	if err := stack.Start(); err != nil {
		stack.Close()
		return nil, fmt.Errorf("evmnode: %w", err)
	}
	// Period 0: the beacon never seals by itself; blocks come from Mine.
	beacon, err := catalyst.NewSimulatedBeacon(0, Coinbase, backend)
	if err != nil {
		stack.Close()
		return nil, fmt.Errorf("evmnode: %w", err)
	}
	if err := beacon.Start(); err != nil {
		stack.Close()
		return nil, fmt.Errorf("evmnode: %w", err)
	}
	return &Node{
		stack:   stack,
		eth:     backend,
		beacon:  beacon,
		engine:  catalyst.NewConsensusAPI(backend),
		signer:  types.LatestSignerForChainID(big.NewInt(ChainID)),
		genesis: genesis,
	}, nil
}

// URL is the HTTP JSON-RPC endpoint, http://127.0.0.1:PORT.
func (n *Node) URL() string { return n.stack.HTTPEndpoint() }

// Signer is the chain's transaction signer (Prague: every type up to 4).
func (n *Node) Signer() types.Signer { return n.signer }

// Ethereum gives the eth service, for in-process reads (the chain, the
// state). Tests prefer the JSON-RPC endpoint.
func (n *Node) Ethereum() *eth.Ethereum { return n.eth }

// Head returns the current head block's number.
func (n *Node) Head() uint64 { return n.eth.BlockChain().CurrentBlock().Number.Uint64() }

// Close stops the node.
func (n *Node) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil
	}
	n.closed = true
	return errors.Join(n.beacon.Stop(), n.stack.Close())
}

// Mine builds the next block with exactly txs, in that order, and makes it
// the head. Every transaction must be valid (nonce, balance, gas); one that
// reverts is included with status 0. It returns the block.
func (n *Node) Mine(ctx context.Context, txs ...*types.Transaction) (*types.Block, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, errors.New("evmnode: node is closed")
	}
	parent := n.eth.BlockChain().CurrentBlock()
	number := parent.Number.Uint64() + 1
	args := &miner.BuildPayloadArgs{
		Parent:       parent.Hash(),
		Timestamp:    parent.Time + BlockInterval,
		FeeRecipient: Coinbase,
		Random:       crypto.Keccak256Hash([]byte(fmt.Sprintf("flowq evmnode prevrandao %d", number))),
		Withdrawals:  types.Withdrawals{},
		BeaconRoot:   &common.Hash{},
		Version:      engine.PayloadV3,
	}
	block, env, err := n.eth.Miner().BuildTestingPayload(args, txs, len(txs) == 0, extraData)
	if err != nil {
		return nil, fmt.Errorf("evmnode: building block %d: %w", number, err)
	}
	if len(block.Transactions()) != len(txs) {
		return nil, fmt.Errorf("evmnode: block %d holds %d of the %d transactions", number, len(block.Transactions()), len(txs))
	}
	requests := make([]hexutil.Bytes, len(env.Requests))
	for i, r := range env.Requests {
		requests[i] = r
	}
	status, err := n.engine.NewPayloadV4(ctx, *env.ExecutionPayload, []common.Hash{}, &common.Hash{}, requests)
	if err != nil {
		return nil, fmt.Errorf("evmnode: importing block %d: %w", number, err)
	}
	if status.Status != engine.VALID {
		msg := ""
		if status.ValidationError != nil {
			msg = *status.ValidationError
		}
		return nil, fmt.Errorf("evmnode: block %d is %s: %s", number, status.Status, msg)
	}
	h := block.Hash()
	fc := engine.ForkchoiceStateV1{HeadBlockHash: h, SafeBlockHash: h, FinalizedBlockHash: h}
	res, err := n.engine.ForkchoiceUpdatedV3(ctx, fc, nil)
	if err != nil {
		return nil, fmt.Errorf("evmnode: setting head to block %d: %w", number, err)
	}
	if res.PayloadStatus.Status != engine.VALID {
		return nil, fmt.Errorf("evmnode: forkchoice to block %d: %s", number, res.PayloadStatus.Status)
	}
	if got := n.eth.BlockChain().CurrentBlock().Hash(); got != h {
		return nil, fmt.Errorf("evmnode: head is %s after importing block %d (%s)", got, number, h)
	}
	return block, nil
}

// Receipts returns the receipts of a block by hash.
func (n *Node) Receipts(hash common.Hash) types.Receipts {
	return n.eth.BlockChain().GetReceiptsByHash(hash)
}

// Nonce returns the nonce of addr at the head.
func (n *Node) Nonce(addr common.Address) (uint64, error) {
	st, err := n.eth.BlockChain().State()
	if err != nil {
		return 0, err
	}
	return st.GetNonce(addr), nil
}

// BaseFee returns the base fee the next block will have.
func (n *Node) BaseFee() *big.Int {
	bc := n.eth.BlockChain()
	head := bc.CurrentBlock()
	return eip1559.CalcBaseFee(bc.Config(), head)
}
