package scenario

import (
	"bytes"
	"context"
	"fmt"
	"math/big"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/flowq/flowq/index/fetch"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/block"
	"github.com/flowq/flowq/normalform/trace"
)

var (
	blocksOnce sync.Once
	blocksRan  []RanBlock
	blocksErr  error
)

// liveBlocks runs the block scenarios once on the live node.
func liveBlocks(t *testing.T) (*Env, []RanBlock) {
	t.Helper()
	env := live(t)
	blocksOnce.Do(func() { blocksRan, blocksErr = env.RunBlocks(context.Background()) })
	if blocksErr != nil {
		t.Fatalf("running the block scenarios: %v", blocksErr)
	}
	if len(blocksRan) != len(BlockScenarios()) {
		t.Fatalf("%d block scenarios ran, want %d", len(blocksRan), len(BlockScenarios()))
	}
	return env, blocksRan
}

// fetchBlock fetches one whole block over JSON-RPC in the given trace
// shape (debug_traceBlockByNumber or trace_block, with receipts and
// header), decodes it and analyses each transaction, in index order.
func fetchBlock(t *testing.T, env *Env, mode fetch.Mode, n uint64) []*normalform.Analysis {
	t.Helper()
	ctx := context.Background()
	c, err := fetch.Dial(ctx, env.Node.URL(), fetch.Options{Mode: mode})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bundle, err := c.Block(ctx, n)
	if err != nil {
		t.Fatalf("block %d: %v", n, err)
	}
	res := trace.Decode(bundle, trace.Options{Source: fmt.Sprintf("block %d", n)})
	if len(res.Errors) > 0 {
		t.Fatalf("block %d: %v", n, res.Errors)
	}
	var txs []*normalform.Analysis
	for _, tx := range res.Txs {
		a, err := normalform.Analyze(tx, normalform.DefaultConfig())
		if err != nil {
			t.Fatalf("block %d tx %s: %v", n, tx.Meta.Hash.Hex(), err)
		}
		txs = append(txs, a)
	}
	sort.SliceStable(txs, func(i, j int) bool { return txs[i].Tx.Meta.Index < txs[j].Tx.Meta.Index })
	return txs
}

// neg is -x as a decimal.
func neg(x *big.Int) string { return new(big.Int).Neg(x).String() }

// TestBlockScenarios: every block scenario, mined on the in-process node
// and fetched whole in both trace shapes, gives exactly the findings its
// plan names, with the evidence the chain's state says: the attacker, its
// front and back legs, the victims and each victim's amounts (its
// balances over the block), the pools, the directions, and the gain in
// the token exactly (the attacker's balance over the block); a back-run
// names the large swap it corrects, its gain the arbitrageur's balance
// over the block. The controls find nothing.
func TestBlockScenarios(t *testing.T) {
	env, ran := liveBlocks(t)
	for _, mode := range []fetch.Mode{fetch.Geth, fetch.Flat} {
		for _, rb := range ran {
			t.Run(fmt.Sprintf("%s/%v", rb.Name, mode), func(t *testing.T) {
				txs := fetchBlock(t, env, mode, rb.Block)
				if len(txs) != len(rb.Txs) {
					t.Fatalf("%d transactions, want %d", len(txs), len(rb.Txs))
				}
				for i, a := range txs {
					if a.Tx.Meta.Hash.Hex() != rb.Txs[i].Hex() {
						t.Fatalf("tx %d is %s, want %s", i, a.Tx.Meta.Hash.Hex(), rb.Txs[i].Hex())
					}
				}
				r, err := block.Analyze(rb.Block, txs, nil)
				if err != nil {
					t.Fatal(err)
				}
				if r.Partial {
					t.Errorf("whole block read as partial: missing %v", r.Missing)
				}
				if rb.Control && (len(r.Sandwiches) != 0 || len(r.Backruns) != 0) {
					t.Fatalf("control found sandwiches %+v back-runs %+v", r.Sandwiches, r.Backruns)
				}
				checkSandwiches(t, rb, r)
				checkBackruns(t, rb, r)
			})
		}
	}
}

func checkSandwiches(t *testing.T, rb RanBlock, r *block.Report) {
	t.Helper()
	if len(r.Sandwiches) != len(rb.Sandwiches) {
		t.Fatalf("sandwiches %+v, want %d", r.Sandwiches, len(rb.Sandwiches))
	}
	for i, want := range rb.Sandwiches {
		got := r.Sandwiches[i]
		hash := func(k int) string { return rb.Txs[k].Hex() }
		if got.Sender != want.Sender || got.Bot != want.Bot {
			t.Errorf("attacker %s/%s, want %s (%s) / %s (%s)", got.Sender, got.Bot, want.Sender, rb.Names[want.Sender], want.Bot, rb.Names[want.Bot])
		}
		if got.Front.Tx != hash(want.Front) || got.Back.Tx != hash(want.Back) {
			t.Errorf("legs %+v %+v, want txs %d and %d", got.Front, got.Back, want.Front, want.Back)
		}
		if !reflect.DeepEqual(got.Pools, want.Pools) {
			t.Errorf("pools %v, want %v", got.Pools, want.Pools)
		}
		if got.Token != want.Token {
			t.Errorf("token %s, want %s (%s)", got.Token, want.Token, rb.Names[want.Token])
		}
		// The gain in τ is the attacker's balance of τ over the block
		// exactly, and it kept none of τ'.
		if g := rb.Delta[want.Bot][want.Token]; got.Gain != g.String() {
			t.Errorf("gain %s, want %s (the attacker's %s over the block)", got.Gain, g, rb.Names[want.Token])
		}
		if left := rb.Delta[want.Bot][want.Other]; left.Sign() != 0 || len(got.Left) != 0 {
			t.Errorf("left %v; the chain says %s %s", got.Left, left, rb.Names[want.Other])
		}
		for _, legs := range [][]block.Swap{got.FrontSwaps, got.BackSwaps} {
			if len(legs) != len(want.Pools) {
				t.Fatalf("leg swaps %+v, want one per pool", legs)
			}
		}
		for k, f := range got.FrontSwaps {
			b := got.BackSwaps[k]
			if f.Pool != want.Pools[k] || b.Pool != want.Pools[k] || f.In != want.Token || f.Out != want.Other || b.In != want.Other || b.Out != want.Token {
				t.Errorf("front %+v back %+v: want %s→%s then back on %s", f, b, rb.Names[want.Token], rb.Names[want.Other], rb.Names[want.Pools[k]])
			}
		}
		// One pool: the attacker's τ over the legs is what the back leg
		// bought less what the front sold.
		if len(want.Pools) == 1 {
			f, b := got.FrontSwaps[0], got.BackSwaps[0]
			d := new(big.Int)
			d.SetString(b.AmountOut, 10)
			fi, _ := new(big.Int).SetString(f.AmountIn, 10)
			d.Sub(d, fi)
			if w := rb.Delta[want.Bot][want.Token]; want.Back >= 0 && len(want.Pools) == 1 && d.Cmp(w) != 0 && !strings.Contains(rb.Name, "arbitrage") {
				t.Errorf("back leg bought %s, front sold %s: %s, want %s", b.AmountOut, f.AmountIn, d, w)
			}
		}
		if len(got.Victims) != len(want.Victims) {
			t.Fatalf("victims %+v, want txs %v", got.Victims, want.Victims)
		}
		for k, v := range got.Victims {
			vb := want.VictimBots[k]
			if v.Tx != hash(want.Victims[k]) || v.Bot != vb || v.Pool != want.Pools[0] || v.In != want.Token || v.Out != want.Other {
				t.Errorf("victim %+v, want tx %d by %s, %s→%s", v, want.Victims[k], rb.Names[vb], rb.Names[want.Token], rb.Names[want.Other])
			}
			if v.AmountIn != neg(rb.Delta[vb][want.Token]) || v.AmountOut != rb.Delta[vb][want.Other].String() {
				t.Errorf("victim %s sold %s bought %s; the chain says %s and %s", rb.Names[vb], v.AmountIn, v.AmountOut, neg(rb.Delta[vb][want.Token]), rb.Delta[vb][want.Other])
			}
		}
		roles := map[int]string{want.Front: block.RoleFront, want.Back: block.RoleBack}
		for _, v := range want.Victims {
			roles[v] = block.RoleVictim
		}
		for k, role := range roles {
			if !contains(r.Txs[k].Roles, role) {
				t.Errorf("tx %d roles %v, want %s", k, r.Txs[k].Roles, role)
			}
		}
	}
}

func checkBackruns(t *testing.T, rb RanBlock, r *block.Report) {
	t.Helper()
	if len(r.Backruns) != len(rb.Backruns) {
		t.Fatalf("back-runs %+v, want %d", r.Backruns, len(rb.Backruns))
	}
	for i, want := range rb.Backruns {
		got := r.Backruns[i]
		if got.Tx != rb.Txs[want.Tx].Hex() || got.Sender != want.Sender || got.Bot != want.Bot {
			t.Errorf("back-run %+v, want tx %d by %s", got.Ref, want.Tx, rb.Names[want.Bot])
		}
		// A back-run's gain is in the cycle token's unit (WETH: ETH).
		cfg := normalform.DefaultConfig()
		if unit := cfg.Unit(normalform.FungibleToken(common.HexToAddress(want.Token))).Key(); got.Token != unit {
			t.Errorf("token %s, want %s (the unit of %s)", got.Token, unit, rb.Names[want.Token])
		}
		// A pure back-run's gain is the arbitrageur's balance over the
		// block; a back leg's cycle, its planned gain (the sandwich that
		// holds it is checked against the chain).
		g := rb.Delta[want.Bot][want.Token]
		if want.Gain != nil {
			g = want.Gain
		}
		if got.Gain != g.String() {
			t.Errorf("gain %s, want %s %s", got.Gain, g, rb.Names[want.Token])
		}
		if len(got.Swaps) != 1 || len(got.Corrects) != 1 {
			t.Fatalf("swaps %+v corrects %+v, want one on %s", got.Swaps, got.Corrects, rb.Names[want.Pool])
		}
		s, c := got.Swaps[0], got.Corrects[0]
		if s.Pool != want.Pool || c.Pool != want.Pool || c.Tx != rb.Txs[want.Corrects].Hex() || c.Bot != want.Corrector {
			t.Errorf("swap %+v corrects %+v, want on %s tx %d by %s", s, c, rb.Names[want.Pool], want.Corrects, rb.Names[want.Corrector])
		}
		if s.In != c.Out || s.Out != c.In {
			t.Errorf("swap %s→%s does not trade against %s→%s", s.In, s.Out, c.In, c.Out)
		}
		// The corrected swap's amounts are its trader's balances over the
		// block.
		if d := rb.Delta[want.Corrector]; d != nil && (c.AmountIn != neg(d[c.In]) || c.AmountOut != d[c.Out].String()) {
			t.Errorf("corrected swap sold %s bought %s; the chain says %s and %s", c.AmountIn, c.AmountOut, neg(d[c.In]), d[c.Out])
		}
		if !contains(r.Txs[want.Tx].Roles, block.RoleBackrun) || !contains(r.Txs[want.Corrects].Roles, block.RoleCorrected) {
			t.Errorf("roles %v and %v", r.Txs[want.Tx].Roles, r.Txs[want.Corrects].Roles)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// TestBlockAnalysisLeavesTransactions: block analysis changes nothing of
// the transactions it reads: each one's verdict, canonical normal form,
// hashes and encoded normal form are the same after it as before, and the
// same as the transaction analysed alone.
func TestBlockAnalysisLeavesTransactions(t *testing.T) {
	env, ran := liveBlocks(t)
	for _, rb := range ran {
		txs := fetchBlock(t, env, fetch.Geth, rb.Block)
		type snap struct {
			verdict   string
			canonical string
			hashes    normalform.Hashes
			nf        []byte
		}
		take := func(a *normalform.Analysis) snap {
			return snap{a.Verdict.String(), a.Canonical(normalform.Exact), a.Hashes(), normalform.EncodeNF(a)}
		}
		before := make([]snap, len(txs))
		for i, a := range txs {
			before[i] = take(a)
		}
		if _, err := block.Analyze(rb.Block, txs, nil); err != nil {
			t.Fatal(err)
		}
		for i, a := range txs {
			after := take(a)
			alone, err := normalform.Analyze(a.Tx, normalform.DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			single := take(alone)
			for _, s := range []snap{after, single} {
				if s.verdict != before[i].verdict || s.canonical != before[i].canonical || s.hashes != before[i].hashes || !bytes.Equal(s.nf, before[i].nf) {
					t.Errorf("%s tx %d: %+v, before block analysis %+v", rb.Name, i, s, before[i])
				}
			}
		}
	}
}
