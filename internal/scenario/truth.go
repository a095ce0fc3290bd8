package scenario

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"

	"github.com/flowq/flowq/index/fetch"
	"github.com/flowq/flowq/normalform"
)

// TruthFormat names the truth file's format; it changes when a field
// changes meaning.
const TruthFormat = "flowq-scenario-truth/1"

// TruthDoc is written at the top of truth.json.
const TruthDoc = "Ground truth of the scenario bundles, read from the in-process chain with eth_call balanceOf/ownerOf " +
	"and eth_getBalance at the block before and after each transaction, never from flowq. See examples/scenarios/README.md."

// Truth is examples/scenarios/truth.json.
type Truth struct {
	Format        string `json:"format"`
	Doc           string `json:"doc"`
	ChainID       uint64 `json:"chain_id"`
	WrappedNative string `json:"wrapped_native"`
	Coinbase      string `json:"coinbase"`
	// Routers are the scenario chain's routers for rule R5 (the Universal
	// Router the fourth phase deploys): the scenario chain's configuration
	// lists them as Ethereum's lists the mainnet Universal Router.
	Routers []string `json:"routers,omitempty"`
	// Names maps lowercase addresses to the names the scenarios use.
	Names map[string]string `json:"names"`
	// Addresses and Tokens are what was read at every block: every gross
	// change not listed in a scenario's Gross is zero for these.
	Addresses []string    `json:"tracked_addresses"`
	Tokens    []string    `json:"tracked_tokens"`
	Scenarios []TruthCase `json:"scenarios"`
}

// TruthCase is one scenario's truth.
type TruthCase struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Notes       string `json:"notes,omitempty"`
	// Files are the bundles, relative to the truth file's directory.
	Geth   string `json:"geth_bundle"`
	Parity string `json:"parity_bundle"`

	Tx    string `json:"tx"`
	Block uint64 `json:"block"`
	// TxIndex and BlockTxs are written when the block holds several
	// scenario transactions (a sandwich's legs): the transaction's index in
	// it and how many it holds. Its balances before and after are those
	// around the transaction, not around the block.
	TxIndex  *int   `json:"tx_index,omitempty"`
	BlockTxs int    `json:"block_txs,omitempty"`
	Type     uint64 `json:"tx_type"`
	From     string `json:"from"`
	To       string `json:"to"`
	Status   string `json:"status"` // success | failed

	// Class is the expected classification: "arbitrage" or "none".
	Class string `json:"class"`
	// Origin is where the arbitrage's cycle closes ("" for none), and
	// Profit the gross change there (Gross[Origin]).
	Origin     string            `json:"origin,omitempty"`
	OriginName string            `json:"origin_name,omitempty"`
	Profit     map[string]string `json:"gross_profit,omitempty"`
	// Gain (written for the scenarios that set Scenario.Gain) is the
	// origin's whole gain from its trade: Gross[Origin] with the coinbase
	// payment (which the origin makes, by design) and the payouts added
	// back, the native asset folded into the wrapped native (WETH).
	Gain map[string]string `json:"origin_gain,omitempty"`
	// Payouts are what the scenario's payees (an owner's wallet, a cold
	// wallet) received from the origin: their gross change, per token.
	Payouts []Payout `json:"payouts,omitempty"`

	GasUsed           uint64 `json:"gas_used"`
	EffectiveGasPrice string `json:"effective_gas_price"`
	BaseFee           string `json:"base_fee"`
	// GasCost = gas_used × effective_gas_price, paid by From.
	GasCost string `json:"gas_cost"`
	// PriorityFees = gas_used × (effective_gas_price − base_fee), credited to the coinbase by the protocol.
	PriorityFees string `json:"priority_fees"`
	// CoinbasePayment is what the transaction itself paid the coinbase:
	// its balance change minus the priority fees.
	CoinbasePayment string `json:"coinbase_payment"`

	// Gross: per address, per token key, the gross balance change (after −
	// before, with the gas cost added back at From and the priority fees
	// taken off at the coinbase). Only non-zero entries are listed.
	Gross map[string]map[string]string `json:"gross"`
}

// Payout is a part of the origin's gain paid to another address.
type Payout struct {
	To     string `json:"to"`
	ToName string `json:"to_name"`
	Token  string `json:"token"`
	Amount string `json:"amount"`
}

// snapshot is every tracked balance at one block.
type snapshot map[common.Address]map[string]*big.Int

// tracked returns the addresses and the token keys read at every block.
func (w *World) tracked() ([]common.Address, []normalform.Token) {
	var addrs []common.Address
	for a := range w.Names {
		addrs = append(addrs, a)
	}
	sort.Slice(addrs, func(i, j int) bool { return strings.Compare(lower(addrs[i]), lower(addrs[j])) < 0 })
	toks := []normalform.Token{normalform.NativeToken}
	for _, t := range w.Tokens {
		toks = append(toks, normalform.FungibleToken(t))
	}
	for c, ids := range w.NFT721 {
		for _, id := range ids {
			tk := normalform.Token{Addr: c, Kind: normalform.NFT721}
			tk.ID.SetUint64(uint64(id))
			toks = append(toks, tk)
		}
	}
	for c, ids := range w.NFT1155 {
		for _, id := range ids {
			tk := normalform.Token{Addr: c, Kind: normalform.Multi1155}
			tk.ID.SetUint64(uint64(id))
			toks = append(toks, tk)
		}
	}
	for c, ids := range w.Claims {
		for _, id := range ids {
			tk := normalform.Token{Addr: c, Kind: normalform.Multi6909}
			tk.ID.SetBytes20(id[:])
			toks = append(toks, tk)
		}
	}
	sort.SliceStable(toks, func(i, j int) bool { return toks[i].Key() < toks[j].Key() })
	return addrs, toks
}

// readSnapshot reads all tracked balances over JSON-RPC, at the end of
// block n (txIndex < 0) or before its transaction txIndex: eth_getBalance
// for the native asset, balanceOf for ERC-20 tokens and LP tokens, ownerOf
// for ERC-721 ids, balanceOf(account, id) for ERC-1155 and ERC-6909 (the
// PoolManager's claims). Inside a block the same calls go through
// debug_traceCall with its txIndex, which runs them on the state the node
// replays the block to; a native balance is read
// there by a call to balanceReaderCode (placed by a state override), the
// result being the call tracer's output.
func (w *World) readSnapshot(ctx context.Context, n uint64, txIndex int) snapshot {
	addrs, toks := w.tracked()
	block := hexutil.EncodeUint64(n)
	where := fmt.Sprintf("block %d", n)
	if txIndex >= 0 {
		where = fmt.Sprintf("block %d before transaction %d", n, txIndex)
	}
	snap := snapshot{}
	// read is one value: a native balance (out) or call output (raw),
	// directly or as a traced call's output (frame).
	type read struct {
		out   *hexutil.Big
		raw   *hexutil.Bytes
		frame *tracedCall
	}
	var reqs []fetch.Request
	call := func(to common.Address, data []byte) *read {
		if txIndex < 0 {
			r := &read{raw: new(hexutil.Bytes)}
			reqs = append(reqs, fetch.Request{Method: "eth_call", Args: []any{callArgs{To: to, Data: data}, block}, Result: r.raw})
			return r
		}
		r := &read{frame: new(tracedCall)}
		cfg := map[string]any{"tracer": "callTracer", "txIndex": hexutil.Uint(txIndex)}
		if to == balanceReader {
			cfg["stateOverrides"] = map[common.Address]map[string]any{balanceReader: {"code": hexutil.Bytes(balanceReaderCode)}}
		}
		reqs = append(reqs, fetch.Request{Method: "debug_traceCall", Args: []any{callArgs{To: to, Data: data}, block, cfg}, Result: r.frame})
		return r
	}
	type slot struct {
		a   common.Address
		key string
		r   *read
	}
	var slots []slot
	for _, a := range addrs {
		snap[a] = map[string]*big.Int{}
		for _, t := range toks {
			var r *read
			switch t.Kind {
			case normalform.Native:
				if txIndex < 0 {
					r = &read{out: new(hexutil.Big)}
					reqs = append(reqs, fetch.Request{Method: "eth_getBalance", Args: []any{a, block}, Result: r.out})
				} else {
					r = call(balanceReader, common.LeftPadBytes(a.Bytes(), 32))
				}
			case normalform.Fungible:
				r = call(t.Addr, w.pack("ERC20", "balanceOf", a))
			case normalform.Multi1155:
				r = call(t.Addr, w.pack("ERC1155PresetMinterPauser", "balanceOf", a, t.ID.ToBig()))
			case normalform.Multi6909:
				r = call(t.Addr, w.pack("PoolManager", "balanceOf", a, t.ID.ToBig()))
			case normalform.NFT721:
				continue // below, once per id
			}
			slots = append(slots, slot{a, t.Key(), r})
		}
	}
	type owner struct {
		key string
		r   *read
	}
	var owners []owner
	for _, t := range toks {
		if t.Kind != normalform.NFT721 {
			continue
		}
		owners = append(owners, owner{t.Key(), call(t.Addr, w.pack("ERC721PresetMinterPauserAutoId", "ownerOf", t.ID.ToBig()))})
	}
	const chunk = 1000 // go-ethereum's default batch limit
	for lo := 0; lo < len(reqs); lo += chunk {
		if err := w.rpc.Batch(ctx, reqs[lo:min(lo+chunk, len(reqs))]); err != nil {
			fail("reading balances at %s: %v", where, err)
		}
	}
	bytesOf := func(r *read) []byte {
		if r.frame == nil {
			return *r.raw
		}
		if r.frame.Error != "" {
			fail("reading balances at %s: a call to %s failed: %s", where, r.frame.To.Hex(), r.frame.Error)
		}
		return r.frame.Output
	}
	for _, s := range slots {
		if s.r.out != nil {
			snap[s.a][s.key] = (*big.Int)(s.r.out)
			continue
		}
		snap[s.a][s.key] = new(big.Int).SetBytes(bytesOf(s.r))
	}
	for _, o := range owners {
		who := common.BytesToAddress(bytesOf(o.r))
		if _, ok := snap[who]; ok {
			snap[who][o.key] = big.NewInt(1)
		}
	}
	return snap
}

// tracedCall is the part of a callTracer frame the snapshot reads.
type tracedCall struct {
	To     common.Address `json:"to"`
	Output hexutil.Bytes  `json:"output"`
	Error  string         `json:"error"`
}

// balanceReader is where a state override places balanceReaderCode for
// debug_traceCall: an address no scenario uses.
var balanceReader = common.HexToAddress("0x0000000000000000000000000000000000ba1a2e")

// balanceReaderCode returns the native balance of the address in its
// call data's first word: PUSH1 0 CALLDATALOAD BALANCE PUSH1 0 MSTORE
// PUSH1 32 PUSH1 0 RETURN.
var balanceReaderCode = []byte{0x60, 0x00, 0x35, 0x31, 0x60, 0x00, 0x52, 0x60, 0x20, 0x60, 0x00, 0xf3}

// receiptFacts is what the truth reads from the receipt and header.
type receiptFacts struct {
	Status            hexutil.Uint64 `json:"status"`
	GasUsed           hexutil.Uint64 `json:"gasUsed"`
	EffectiveGasPrice *hexutil.Big   `json:"effectiveGasPrice"`
	Type              hexutil.Uint64 `json:"type"`
	From              common.Address `json:"from"`
	To                common.Address `json:"to"`
	BlockNumber       hexutil.Uint64 `json:"blockNumber"`
	TransactionIndex  hexutil.Uint64 `json:"transactionIndex"`
}

// truthOf computes a scenario's truth from the snapshots around its
// transaction.
func (w *World) truthOf(ctx context.Context, ran Ran, before, after snapshot) TruthCase {
	sc, hash := ran.Scenario, ran.Hash
	var r receiptFacts
	if err := w.rpc.Call(ctx, &r, "eth_getTransactionReceipt", hash); err != nil {
		fail("receipt of %s: %v", sc.Name, err)
	}
	var h struct {
		BaseFee *hexutil.Big   `json:"baseFeePerGas"`
		Miner   common.Address `json:"miner"`
	}
	if err := w.rpc.Call(ctx, &h, "eth_getBlockByNumber", hexutil.EncodeUint64(uint64(r.BlockNumber)), false); err != nil {
		fail("header of %s: %v", sc.Name, err)
	}
	price := (*big.Int)(r.EffectiveGasPrice)
	base := (*big.Int)(h.BaseFee)
	gasCost := new(big.Int).Mul(new(big.Int).SetUint64(uint64(r.GasUsed)), price)
	prio := new(big.Int).Mul(new(big.Int).SetUint64(uint64(r.GasUsed)), new(big.Int).Sub(price, base))
	tc := TruthCase{
		Name: sc.Name, Description: sc.Description, Notes: sc.Notes,
		Geth: "geth/" + sc.Name + ".json", Parity: "parity/" + sc.Name + ".json",
		Tx: hash.Hex(), Block: uint64(r.BlockNumber), Type: uint64(r.Type),
		From: lower(r.From), To: lower(r.To), Status: "success",
		Class:   sc.Class,
		GasUsed: uint64(r.GasUsed), EffectiveGasPrice: price.String(), BaseFee: base.String(),
		GasCost: gasCost.String(), PriorityFees: prio.String(),
		Gross: map[string]map[string]string{},
	}
	if r.Status != 1 {
		tc.Status = "failed"
	}
	if int(r.TransactionIndex) != ran.Index || uint64(r.BlockNumber) != ran.Block {
		fail("scenario %s: the receipt puts it at block %d index %d, the run at block %d index %d", sc.Name, r.BlockNumber, r.TransactionIndex, ran.Block, ran.Index)
	}
	if ran.BlockTxs > 1 {
		i := ran.Index
		tc.TxIndex, tc.BlockTxs = &i, ran.BlockTxs
	}
	nativeKey := normalform.NativeToken.Key()
	coinbasePay := new(big.Int)
	get := func(s snapshot, a common.Address, key string) *big.Int {
		if v := s[a][key]; v != nil {
			return v
		}
		return new(big.Int)
	}
	for a := range after {
		keys := map[string]bool{}
		for k := range after[a] {
			keys[k] = true
		}
		for k := range before[a] {
			keys[k] = true
		}
		for key := range keys {
			d := new(big.Int).Sub(get(after, a, key), get(before, a, key))
			if key == nativeKey {
				if a == r.From {
					d.Add(d, gasCost)
				}
				if a == h.Miner {
					d.Sub(d, prio)
					coinbasePay.Set(d)
				}
			}
			if d.Sign() == 0 {
				continue
			}
			if tc.Gross[lower(a)] == nil {
				tc.Gross[lower(a)] = map[string]string{}
			}
			tc.Gross[lower(a)][key] = d.String()
		}
	}
	tc.CoinbasePayment = coinbasePay.String()
	if sc.Origin != "" {
		o := w.A(sc.Origin)
		tc.Origin, tc.OriginName = lower(o), sc.Origin
		tc.Profit = tc.Gross[lower(o)]
		if tc.Profit == nil {
			tc.Profit = map[string]string{}
		}
	}
	for _, p := range sc.Payees {
		a := lower(w.A(p))
		var keys []string
		for k := range tc.Gross[a] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			tc.Payouts = append(tc.Payouts, Payout{To: a, ToName: p, Token: k, Amount: tc.Gross[a][k]})
		}
	}
	if sc.Gain {
		tc.Gain = originGain(tc)
	}
	return tc
}

// originGain is Gross[Origin] with the coinbase payment and the payouts
// added back, the native asset folded into WETH; zero entries dropped.
func originGain(tc TruthCase) map[string]string {
	native, weth := normalform.NativeToken.Key(), normalform.FungibleToken(MainnetWETH).Key()
	sum := map[string]*big.Int{}
	add := func(k, v string) {
		if k == native {
			k = weth
		}
		x, ok := new(big.Int).SetString(v, 10)
		if !ok {
			fail("scenario %s: bad amount %q", tc.Name, v)
		}
		if sum[k] == nil {
			sum[k] = new(big.Int)
		}
		sum[k].Add(sum[k], x)
	}
	for k, v := range tc.Gross[tc.Origin] {
		add(k, v)
	}
	add(native, tc.CoinbasePayment)
	for _, p := range tc.Payouts {
		add(p.Token, p.Amount)
	}
	out := map[string]string{}
	for k, v := range sum {
		if v.Sign() != 0 {
			out[k] = v.String()
		}
	}
	return out
}

// checkTruth makes sure the chain did what the scenario meant to. ethClaim
// is the key of the PoolManager's claim on ETH (empty when there is none):
// a V4 bot may keep its gain as that claim (v4_claims_arb_mint).
func checkTruth(tc TruthCase, ethClaim string) error {
	weth := normalform.FungibleToken(MainnetWETH).Key()
	switch {
	case tc.Class == "arbitrage" && tc.Status != "success":
		return fmt.Errorf("scenario %s: the arbitrage failed on chain", tc.Name)
	case tc.Class == "arbitrage":
		// The gain in WETH and ETH together (a V4 bot is paid in ETH).
		p, ok := new(big.Int).SetString(tc.Profit[weth], 10)
		if n, isNative := new(big.Int).SetString(tc.Profit[normalform.NativeToken.Key()], 10); isNative {
			if !ok {
				p, ok = new(big.Int), true
			}
			p.Add(p, n)
		}
		if c, isClaim := new(big.Int).SetString(tc.Profit[ethClaim], 10); ethClaim != "" && isClaim {
			if !ok {
				p, ok = new(big.Int), true
			}
			p.Add(p, c)
		}
		if !ok || p.Sign() <= 0 {
			return fmt.Errorf("scenario %s: no WETH gain at %s (%v)", tc.Name, tc.OriginName, tc.Profit)
		}
		if tc.Gain != nil {
			g, ok := new(big.Int).SetString(tc.Gain[weth], 10)
			if !ok || g.Cmp(p) < 0 || len(tc.Gain) != 1 {
				return fmt.Errorf("scenario %s: the origin's gain %v is not one WETH amount at least its gross %v", tc.Name, tc.Gain, tc.Profit)
			}
		}
	case tc.Name == "reverted_attempt" && tc.Status != "failed":
		return fmt.Errorf("scenario %s: expected a failed transaction", tc.Name)
	case tc.Class == "none" && tc.Name != "reverted_attempt" && tc.Status != "success":
		return fmt.Errorf("scenario %s: the transaction failed", tc.Name)
	}
	return nil
}
