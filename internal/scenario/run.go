// Package scenario builds flowq's scenario transactions: real, publicly
// built contracts (Uniswap V2 factory, pair and Router02, Uniswap V3
// factory and pool, WETH9, OpenZeppelin ERC-20, ERC-721 and ERC-1155
// presets, all from the npm registry) and this project's own bots
// (contracts/*.sol, compiled with the npm solc package), run on an
// in-process go-ethereum node (internal/evmnode) and read back over its
// JSON-RPC with flowq's fetcher (index/fetch).
//
// Each scenario is one transaction, in its own block (the legs of a
// sandwich share one), with a known truth: its class, and the gross balance
// change of every tracked address in every tracked token, read from the
// chain at the block before and after (Truth; between the transactions of
// a shared block, at the state the node replays the block to). Generate
// writes the bundles (geth callTracer shape and the Parity shape of geth's
// flatCallTracer, each with its receipt and block header) and truth.json
// to examples/scenarios; the generator is
// `go run ./internal/scenario/cmd/gen`.
//
// The chain is deterministic (see evmnode), so the same code gives the
// same bundles byte for byte; the tests check that.
package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/flowq/flowq/index/fetch"
	"github.com/flowq/flowq/internal/evmnode"
	"github.com/flowq/flowq/normalform"
)

// Options configure Start.
type Options struct {
	NPMDir  string // default NPMDir()
	Verbose bool   // go-ethereum's log
}

// Ran is a scenario that ran: its transaction and block, its index in the
// block and how many transactions the block holds.
type Ran struct {
	Scenario
	Hash     common.Hash
	Block    uint64
	Index    int
	BlockTxs int
}

// Env is a running node with every scenario mined on it.
type Env struct {
	Node  *evmnode.Node
	World *World
	Ran   []Ran
	rpc   *fetch.Client
}

func recovered(err *error) {
	if r := recover(); r != nil {
		f, ok := r.(failure)
		if !ok {
			panic(r)
		}
		*err = f.err
	}
}

// Start starts a node, deploys the contracts and runs every scenario.
func Start(ctx context.Context, opt Options) (env *Env, err error) {
	dir := opt.NPMDir
	if dir == "" {
		dir = NPMDir()
	}
	art, err := LoadArtifacts(dir)
	if err != nil {
		return nil, err
	}
	node, err := evmnode.Start(evmnode.Config{Alloc: genesisAlloc(art), Verbose: opt.Verbose})
	if err != nil {
		return nil, err
	}
	rpc, err := fetch.Dial(ctx, node.URL(), fetch.Options{Concurrency: 2})
	if err != nil {
		node.Close()
		return nil, err
	}
	e := &Env{Node: node, rpc: rpc}
	defer func() {
		if err != nil {
			e.Close()
			env = nil
		}
	}()
	defer recovered(&err)
	w := newWorld(ctx, node, rpc, art)
	e.World = w
	for _, p := range phases() {
		p.setup(w)
		var scs []Scenario
		var txs []*types.Transaction
		for i, sc := range p.scenarios {
			if sc.SameBlock && i == 0 {
				return nil, fmt.Errorf("scenario %s: SameBlock on a phase's first scenario", sc.Name)
			}
			scs, txs = append(scs, sc), append(txs, sc.build(w))
			if i+1 < len(p.scenarios) && p.scenarios[i+1].SameBlock {
				continue
			}
			b, rs := w.mineBlock(txs)
			for j, sc := range scs {
				h := txs[j].Hash()
				if (rs[j].Status == 1) != (sc.Name != "reverted_attempt") {
					return nil, fmt.Errorf("scenario %s: transaction %s has status %d%s", sc.Name, h.Hex(), rs[j].Status, e.why(ctx, h))
				}
				e.Ran = append(e.Ran, Ran{Scenario: sc, Hash: h, Block: b.NumberU64(), Index: j, BlockTxs: len(txs)})
			}
			scs, txs = nil, nil
		}
	}
	return e, nil
}

// why returns the revert reasons in a transaction's call trace.
func (e *Env) why(ctx context.Context, h common.Hash) string {
	var tr json.RawMessage
	if err := e.rpc.Call(ctx, &tr, "debug_traceTransaction", h, map[string]any{"tracer": "callTracer"}); err != nil {
		return ": " + err.Error()
	}
	var reasons []string
	var walk func(f map[string]any, depth int)
	walk = func(f map[string]any, depth int) {
		if msg, ok := f["error"].(string); ok {
			r, _ := f["revertReason"].(string)
			reasons = append(reasons, fmt.Sprintf("depth %d %v -> %v: %s %s", depth, f["from"], f["to"], msg, r))
		}
		calls, _ := f["calls"].([]any)
		for _, c := range calls {
			if m, ok := c.(map[string]any); ok {
				walk(m, depth+1)
			}
		}
	}
	var root map[string]any
	_ = json.Unmarshal(tr, &root)
	walk(root, 0)
	return fmt.Sprintf(" (%v)", reasons)
}

// Close stops the node.
func (e *Env) Close() {
	if e.rpc != nil {
		e.rpc.Close()
	}
	if e.Node != nil {
		e.Node.Close()
	}
}

// Truth reads every scenario's truth from the chain.
func (e *Env) Truth(ctx context.Context) (t *Truth, err error) {
	defer recovered(&err)
	w := e.World
	// snap(n, i) is the state before transaction i of block n (i = the
	// block's transaction count: after the block). Block boundaries are
	// read at the blocks themselves; the states between a block's
	// transactions with debug_traceCall's txIndex (the state the node
	// replays the block to, as it does to trace a transaction).
	type at struct {
		n uint64
		i int
	}
	snaps := map[at]snapshot{}
	snap := func(n uint64, i, txs int) snapshot {
		k := at{n, i}
		switch i {
		case 0:
			k = at{n - 1, -1}
		case txs:
			k = at{n, -1}
		}
		if s, ok := snaps[k]; ok {
			return s
		}
		s := w.readSnapshot(ctx, k.n, k.i)
		snaps[k] = s
		return s
	}
	addrs, toks := w.tracked()
	t = &Truth{
		Format: TruthFormat, Doc: TruthDoc, ChainID: evmnode.ChainID,
		WrappedNative: lower(MainnetWETH), Coinbase: lower(evmnode.Coinbase),
		Names: map[string]string{},
	}
	if ur, ok := w.addr["universalRouter"]; ok {
		t.Routers = []string{lower(ur)}
	}
	for _, a := range addrs {
		t.Addresses = append(t.Addresses, lower(a))
		t.Names[lower(a)] = w.Names[a]
	}
	for _, tk := range toks {
		t.Tokens = append(t.Tokens, tk.Key())
	}
	for _, r := range e.Ran {
		tc := w.truthOf(ctx, r, snap(r.Block, r.Index, r.BlockTxs), snap(r.Block, r.Index+1, r.BlockTxs))
		var ethClaim string // the PoolManager's ERC-6909 claim on ETH (id 0), when there is one
		if pm, ok := w.addr["poolManager"]; ok {
			ethClaim = normalform.Token{Addr: pm, Kind: normalform.Multi6909}.Key()
		}
		if err := checkTruth(tc, ethClaim); err != nil {
			return nil, err
		}
		t.Scenarios = append(t.Scenarios, tc)
		for k := range snaps {
			if k.n < r.Block {
				delete(snaps, k)
			}
		}
	}
	return t, nil
}

// Bundles fetches every scenario's bundle over JSON-RPC in the given mode
// (fetch.Geth or fetch.Flat), indented, keyed by scenario name.
func (e *Env) Bundles(ctx context.Context, mode fetch.Mode) (map[string][]byte, error) {
	c, err := fetch.Dial(ctx, e.Node.URL(), fetch.Options{Mode: mode})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	hashes := make([]common.Hash, len(e.Ran))
	for i, r := range e.Ran {
		hashes[i] = r.Hash
	}
	raw, err := c.Txs(ctx, hashes)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for i, r := range e.Ran {
		out[r.Name] = Indent(raw[i])
	}
	return out, nil
}

// Indent is how bundles are stored: indented by one space, one trailing
// newline.
func Indent(raw []byte) []byte {
	var buf bytes.Buffer
	if err := json.Indent(&buf, bytes.TrimSpace(raw), "", " "); err != nil {
		return raw
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

// Generate runs everything and writes dir/geth/*.json, dir/parity/*.json
// and dir/truth.json.
func Generate(ctx context.Context, opt Options, dir string) error {
	env, err := Start(ctx, opt)
	if err != nil {
		return err
	}
	defer env.Close()
	truth, err := env.Truth(ctx)
	if err != nil {
		return err
	}
	geth, err := env.Bundles(ctx, fetch.Geth)
	if err != nil {
		return err
	}
	flat, err := env.Bundles(ctx, fetch.Flat)
	if err != nil {
		return err
	}
	for sub, files := range map[string]map[string][]byte{"geth": geth, "parity": flat} {
		d := filepath.Join(dir, sub)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		old, _ := filepath.Glob(filepath.Join(d, "*.json"))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(d, name+".json"), data, 0o644); err != nil {
				return err
			}
		}
	}
	data, err := MarshalTruth(truth)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "truth.json"), data, 0o644)
}

// MarshalTruth is truth.json's encoding (indented, stable order).
func MarshalTruth(t *Truth) ([]byte, error) {
	data, err := json.MarshalIndent(t, "", " ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// ReadTruth reads a truth file.
func ReadTruth(path string) (*Truth, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t Truth
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if t.Format != TruthFormat {
		return nil, fmt.Errorf("%s: format %q, want %q", path, t.Format, TruthFormat)
	}
	if len(t.Scenarios) == 0 {
		return nil, errors.New(path + ": no scenarios")
	}
	return &t, nil
}

// Names lists the scenario names in order.
func Names() []string {
	var out []string
	for _, s := range Scenarios() {
		out = append(out, s.Name)
	}
	return out
}
