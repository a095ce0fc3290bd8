package scenario

import (
	"context"
	"fmt"
	"math/big"
	"strconv"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/core/types"
)

// Block scenarios (issue 18): several transactions mined in one block, on
// the scenario chain after every per-transaction scenario, each with the
// block findings it must give (sandwiches, back-runs) or none (the
// controls). Their truth is the chain's: every actor's balance of every
// token the block trades, read at the block before and at the block
// (eth_call balanceOf at a block number). They are not part of Scenarios()
// or of examples/scenarios: RunBlocks runs them on a started Env and
// leaves the per-transaction truth's tracked addresses and tokens as they
// were.
//
// The actors are Bot contracts (contracts/Bot.sol), each owned by its own
// sender, so that a transaction's sender and bot (its recipient) say who
// traded:
//
//	blk_mev     the attacker's bot, sent by searcher
//	blk_mev2    another searcher's bot, sent by operator
//	blk_user    a user's bot, sent by user
//	blk_victim  another user's bot, sent by victim
//	blk_arb     an arbitrageur's bot, sent by collector

// BlockScenario is one block of several transactions with the findings
// block analysis must give.
type BlockScenario struct {
	Name        string
	Description string
	// Control: the block must give no finding.
	Control bool
	build   func(w *World) blockPlan
}

// blockPlan is a block scenario's transactions and expected findings, in
// names.
type blockPlan struct {
	txs        []*types.Transaction
	sandwiches []plannedSandwich
	backruns   []plannedBackrun
	// actors and tokens whose balances the truth reads.
	actors, tokens []string
}

type plannedSandwich struct {
	sender, bot  string
	front, back  int
	victims      []int
	pools        []string
	token, other string // τ (sold by the front, bought back), τ'
	victimBots   []string
	gain         *big.Int // when set: the planned gain, checked against the chain
}

type plannedBackrun struct {
	sender, bot string
	tx          int
	token       string   // the cycle's token
	pool        string   // the pool it trades against
	corrects    int      // the transaction whose swap it corrects
	corrector   string   // that transaction's bot
	gain        *big.Int // when set: the cycle's planned gain (else the bot's balance over the block)
}

// RanBlock is a block scenario that ran: its block, transactions, the
// findings it must give (addresses lower-case hex, token keys) and its
// truth, every actor's balance change of every token over the block.
type RanBlock struct {
	Name, Description string
	Control           bool
	Block             uint64
	Txs               []common.Hash
	Sandwiches        []WantSandwich
	Backruns          []WantBackrun
	// Delta[actor][token] is the actor's balance at the block less its
	// balance at the block before (signed, base units).
	Delta map[string]map[string]*big.Int
	// Names are the actors', tokens' and pools' names, by address.
	Names map[string]string
}

// WantSandwich is a sandwich's expected evidence.
type WantSandwich struct {
	Sender, Bot string
	Front, Back int
	Victims     []int
	VictimBots  []string
	Pools       []string
	Token       string // τ
	Other       string // τ'
}

// WantBackrun is a back-run's expected evidence.
type WantBackrun struct {
	Sender, Bot string
	Tx          int
	Token       string
	Pool        string
	Corrects    int
	Corrector   string
	// Gain is the cycle's gain when the transaction does more than the
	// cycle (planned; nil: the bot's balance over the block).
	Gain *big.Int
}

// blockTokens are the block scenarios' ERC-20s: one per scenario family,
// so that each block trades on pools of its own.
var blockTokens = []string{"SWA", "SWB", "SWC", "SWD"}

// setupBlocks deploys the block scenarios' tokens, bots and pools and
// funds the bots.
func (w *World) setupBlocks() {
	deployer, weth := w.A("deployer"), w.A("WETH")
	supply := ether("1000000000000")
	for _, sym := range blockTokens {
		w.deploy(sym, "deployer", "ERC20PresetFixedSupply", sym+" Token", sym, supply, deployer)
	}
	for _, b := range []struct{ bot, owner string }{
		{"blk_mev", "searcher"}, {"blk_mev2", "operator"}, {"blk_user", "user"}, {"blk_victim", "victim"}, {"blk_arb", "collector"},
	} {
		w.deploy(b.bot, "deployer", "Bot", w.A(b.owner))
	}
	w.flush()
	// SWA: a V3 pool at 2,000 SWA per WETH, 300 WETH deep.
	w.createPoolV3(w.A("factoryV3"), w.A("lp"), "WETH", "SWA", ether("300"), ether("600000"))
	// SWB, SWC: the same price on both factories (10,000 per WETH, 100
	// WETH deep), for a back leg that arbitrages and a back-run.
	// SWD: one pool per factory too, for the controls.
	for _, t := range []string{"SWB", "SWC", "SWD"} {
		w.createPool("A", "WETH", t, ether("100"), ether("1000000"))
		w.createPool("B", "WETH", t, ether("100"), ether("1000000"))
	}
	for _, bot := range []string{"blk_mev", "blk_user", "blk_victim", "blk_arb"} {
		w.send("fund "+bot, "deployer", weth, nil, w.callData(weth, "transfer", w.A(bot), ether("100")), 100_000)
	}
	// SWD for the controls' sellers: a victim selling the other way and a
	// second searcher's back leg.
	for _, bot := range []string{"blk_victim", "blk_mev2"} {
		w.send("fund "+bot, "deployer", w.A("SWD"), nil, w.callData(w.A("SWD"), "transfer", w.A(bot), ether("100000")), 100_000)
	}
	w.flush()
}

// v2sim prices V2 swaps made one after another in one block, from the
// pairs' reserves at the head and each swap's effect on them.
type v2sim struct {
	w *World
	r map[common.Address]map[common.Address]*big.Int
}

func (s *v2sim) reserve(pair, tok common.Address) *big.Int {
	if s.r == nil {
		s.r = map[common.Address]map[common.Address]*big.Int{}
	}
	m := s.r[pair]
	if m == nil {
		v := s.w.view(pair, "getReserves")
		t0 := s.w.view(pair, "token0")[0].(common.Address)
		t1 := s.w.view(pair, "token1")[0].(common.Address)
		m = map[common.Address]*big.Int{t0: v[0].(*big.Int), t1: v[1].(*big.Int)}
		s.r[pair] = m
	}
	r, ok := m[tok]
	if !ok {
		fail("pair %s holds no %s", s.w.Names[pair], s.w.Names[tok])
	}
	return r
}

// swap sells in of tokIn to pair for tokOut and returns what it pays.
func (s *v2sim) swap(pair, tokIn, tokOut common.Address, in *big.Int) *big.Int {
	rIn, rOut := s.reserve(pair, tokIn), s.reserve(pair, tokOut)
	out := amountOut(in, rIn, rOut)
	s.r[pair][tokIn] = new(big.Int).Add(rIn, in)
	s.r[pair][tokOut] = new(big.Int).Sub(rOut, out)
	return out
}

// v2Swap is the bot's V2 swap of in tokIn for tokOut on pair: pay the
// pair, then take the output. It returns the actions and the output.
func (w *World) v2Swap(s *v2sim, bot string, pair, tokIn, tokOut string, in *big.Int) ([]Action, *big.Int) {
	p, ti, to := w.A(pair), w.A(tokIn), w.A(tokOut)
	out := s.swap(p, ti, to, in)
	return []Action{w.transferCall(ti, p, in), w.swapCall(p, to, out, w.A(bot), nil)}, out
}

func blockScenarios() []BlockScenario {
	weth := "WETH"
	return []BlockScenario{
		{
			Name: "block_v3_sandwich_two_victims",
			Description: "a sandwich of two victims on a Uniswap V3 pool (WETH/SWA): the attacker's bot buys exactly 6,000 SWA (exact output, paying WETH in the callback), " +
				"two users' bots sell 5 and 4 WETH for SWA on the same pool, the attacker's bot sells its 6,000 SWA back for WETH",
			build: func(w *World) blockPlan {
				pool := v3PoolName + "WETH/SWA"
				p, wa, swa := w.A(pool), w.A(weth), w.A("SWA")
				x := ether("6000")
				return blockPlan{
					txs: []*types.Transaction{
						w.execute("searcher", w.A("blk_mev"), []Action{w.swapV3(p, wa, new(big.Int).Neg(x), w.A("blk_mev"), nil)}),
						w.execute("user", w.A("blk_user"), []Action{w.swapV3(p, wa, ether("5"), w.A("blk_user"), nil)}),
						w.execute("victim", w.A("blk_victim"), []Action{w.swapV3(p, wa, ether("4"), w.A("blk_victim"), nil)}),
						w.execute("searcher", w.A("blk_mev"), []Action{w.swapV3(p, swa, x, w.A("blk_mev"), nil)}),
					},
					sandwiches: []plannedSandwich{{sender: "searcher", bot: "blk_mev", front: 0, back: 3, victims: []int{1, 2},
						victimBots: []string{"blk_user", "blk_victim"}, pools: []string{pool}, token: weth, other: "SWA"}},
					actors: []string{"blk_mev", "blk_user", "blk_victim"}, tokens: []string{weth, "SWA"},
				}
			},
		},
		{
			Name: "block_sandwich_back_arbitrage",
			Description: "a V2 sandwich whose back leg is also an arbitrage through a second pool: the attacker's bot buys SWB with 2 WETH on A:WETH/SWB, a user's bot buys SWB with 6 WETH there; " +
				"in the back leg the attacker's bot first runs the cycle the victim opened (it pays 2 WETH to B:WETH/SWB, which pays its SWB straight to A:WETH/SWB, which pays the bot WETH), " +
				"then sells A:WETH/SWB all the SWB its front bought",
			build: func(w *World) blockPlan {
				s := &v2sim{w: w}
				a, b := pairKey("A", weth, "SWB"), pairKey("B", weth, "SWB")
				frontIn := ether("2")
				front, x := w.v2Swap(s, "blk_mev", a, weth, "SWB", frontIn)
				victim, _ := w.v2Swap(s, "blk_user", a, weth, "SWB", ether("6"))
				in := ether("2")
				y := s.swap(w.A(b), w.A(weth), w.A("SWB"), in)
				z := s.swap(w.A(a), w.A("SWB"), w.A(weth), y)
				arbGain := new(big.Int).Sub(z, in)
				mustGain("block_sandwich_back_arbitrage (cycle)", arbGain)
				sell, z2 := w.v2Swap(s, "blk_mev", a, "SWB", weth, x)
				back := append([]Action{
					w.transferCall(w.A(weth), w.A(b), in),
					w.swapCall(w.A(b), w.A("SWB"), y, w.A(a), nil),
					w.swapCall(w.A(a), w.A(weth), z, w.A("blk_mev"), nil),
				}, sell...)
				gain := new(big.Int).Sub(new(big.Int).Add(arbGain, z2), frontIn)
				mustGain("block_sandwich_back_arbitrage", gain)
				return blockPlan{
					txs: []*types.Transaction{
						w.execute("searcher", w.A("blk_mev"), front),
						w.execute("user", w.A("blk_user"), victim),
						w.execute("searcher", w.A("blk_mev"), back),
					},
					sandwiches: []plannedSandwich{{sender: "searcher", bot: "blk_mev", front: 0, back: 2, victims: []int{1},
						victimBots: []string{"blk_user"}, pools: []string{a}, token: weth, other: "SWB", gain: gain}},
					// The back leg's cycle WETH → B → SWB → A → WETH trades
					// A against the victim's move (the front is the
					// attacker's own); its gain is the cycle's, priced by
					// the pairs' formula (the sandwich's gain, which holds
					// it, is checked against the chain).
					backruns: []plannedBackrun{{sender: "searcher", bot: "blk_mev", tx: 2, token: weth, pool: a, corrects: 1, corrector: "blk_user", gain: arbGain}},
					actors:   []string{"blk_mev", "blk_user"}, tokens: []string{weth, "SWB"},
				}
			},
		},
		{
			Name: "block_backrun_large_swap",
			Description: "a back-run after a large swap: a user's bot buys SWC with 1 WETH on A:WETH/SWC, another user's bot with 20 WETH (the large swap); " +
				"an arbitrageur's bot then pays 4 WETH to B:WETH/SWC, which pays its SWC straight to A:WETH/SWC, which pays the bot WETH",
			build: func(w *World) blockPlan {
				s := &v2sim{w: w}
				a, b := pairKey("A", weth, "SWC"), pairKey("B", weth, "SWC")
				small, _ := w.v2Swap(s, "blk_victim", a, weth, "SWC", ether("1"))
				large, _ := w.v2Swap(s, "blk_user", a, weth, "SWC", ether("20"))
				in := ether("4")
				y := s.swap(w.A(b), w.A(weth), w.A("SWC"), in)
				z := s.swap(w.A(a), w.A("SWC"), w.A(weth), y)
				mustGain("block_backrun_large_swap", new(big.Int).Sub(z, in))
				arb := []Action{
					w.transferCall(w.A(weth), w.A(b), in),
					w.swapCall(w.A(b), w.A("SWC"), y, w.A(a), nil),
					w.swapCall(w.A(a), w.A(weth), z, w.A("blk_arb"), nil),
				}
				return blockPlan{
					txs: []*types.Transaction{
						w.execute("victim", w.A("blk_victim"), small),
						w.execute("user", w.A("blk_user"), large),
						w.execute("collector", w.A("blk_arb"), arb),
					},
					backruns: []plannedBackrun{{sender: "collector", bot: "blk_arb", tx: 2, token: weth, pool: a, corrects: 1, corrector: "blk_user"}},
					actors:   []string{"blk_arb", "blk_user", "blk_victim"}, tokens: []string{weth, "SWC"},
				}
			},
		},
		{
			Name: "block_control_other_pool", Control: true,
			Description: "the control: the attacker's bot buys SWD with 2 WETH on A:WETH/SWD, a user's bot buys SWD with 6 WETH on B:WETH/SWD (another pool), " +
				"the attacker's bot sells its SWD back on A:WETH/SWD: two unrelated swaps of one bot around a trade elsewhere",
			build: func(w *World) blockPlan {
				s := &v2sim{w: w}
				a, b := pairKey("A", weth, "SWD"), pairKey("B", weth, "SWD")
				front, x := w.v2Swap(s, "blk_mev", a, weth, "SWD", ether("2"))
				victim, _ := w.v2Swap(s, "blk_user", b, weth, "SWD", ether("6"))
				back, _ := w.v2Swap(s, "blk_mev", a, "SWD", weth, x)
				return blockPlan{
					txs: []*types.Transaction{
						w.execute("searcher", w.A("blk_mev"), front),
						w.execute("user", w.A("blk_user"), victim),
						w.execute("searcher", w.A("blk_mev"), back),
					},
					actors: []string{"blk_mev", "blk_user"}, tokens: []string{weth, "SWD"},
				}
			},
		},
		{
			Name: "block_control_victim_other_way", Control: true,
			Description: "the control: the attacker's bot buys SWD with 2 WETH on A:WETH/SWD, a user's bot sells 30,000 SWD for WETH on the same pool (the other way), " +
				"the attacker's bot sells its SWD back there",
			build: func(w *World) blockPlan {
				s := &v2sim{w: w}
				a := pairKey("A", weth, "SWD")
				front, x := w.v2Swap(s, "blk_mev", a, weth, "SWD", ether("2"))
				victim, _ := w.v2Swap(s, "blk_victim", a, "SWD", weth, ether("30000"))
				back, _ := w.v2Swap(s, "blk_mev", a, "SWD", weth, x)
				return blockPlan{
					txs: []*types.Transaction{
						w.execute("searcher", w.A("blk_mev"), front),
						w.execute("victim", w.A("blk_victim"), victim),
						w.execute("searcher", w.A("blk_mev"), back),
					},
					actors: []string{"blk_mev", "blk_victim"}, tokens: []string{weth, "SWD"},
				}
			},
		},
		{
			Name: "block_control_different_attackers", Control: true,
			Description: "the control: one searcher's bot buys SWD with 2 WETH on A:WETH/SWD, a user's bot buys SWD with 6 WETH there, " +
				"and another searcher's bot (another sender, another bot) sells as much SWD as the first bought back there",
			build: func(w *World) blockPlan {
				s := &v2sim{w: w}
				a := pairKey("A", weth, "SWD")
				front, x := w.v2Swap(s, "blk_mev", a, weth, "SWD", ether("2"))
				victim, _ := w.v2Swap(s, "blk_user", a, weth, "SWD", ether("6"))
				back, _ := w.v2Swap(s, "blk_mev2", a, "SWD", weth, x)
				return blockPlan{
					txs: []*types.Transaction{
						w.execute("searcher", w.A("blk_mev"), front),
						w.execute("user", w.A("blk_user"), victim),
						w.execute("operator", w.A("blk_mev2"), back),
					},
					actors: []string{"blk_mev", "blk_mev2", "blk_user"}, tokens: []string{weth, "SWD"},
				}
			},
		},
	}
}

// BlockScenarios lists the block scenarios in the order RunBlocks mines
// them.
func BlockScenarios() []BlockScenario { return blockScenarios() }

// RunBlocks deploys the block scenarios' contracts and pools on e's chain
// (after every scenario Start ran), mines each block scenario in a block
// of its own and reads its truth. The names it adds are kept out of the
// per-transaction truth (Env.Truth reads the same addresses and tokens
// after it as before).
func (e *Env) RunBlocks(ctx context.Context) (out []RanBlock, err error) {
	defer recovered(&err)
	w := e.World
	w.ctx = ctx
	oldNames := make(map[common.Address]bool, len(w.Names))
	for a := range w.Names {
		oldNames[a] = true
	}
	oldTokens := len(w.Tokens)
	defer func() {
		for a := range w.Names {
			if !oldNames[a] {
				delete(w.Names, a)
			}
		}
		w.Tokens = w.Tokens[:oldTokens]
	}()
	w.setupBlocks()
	for _, sc := range blockScenarios() {
		plan := sc.build(w)
		b, rs := w.mineBlock(plan.txs)
		n := b.NumberU64()
		rb := RanBlock{Name: sc.Name, Description: sc.Description, Control: sc.Control, Block: n,
			Delta: map[string]map[string]*big.Int{}, Names: map[string]string{}}
		for i, tx := range plan.txs {
			if rs[i].Status != types.ReceiptStatusSuccessful {
				return nil, fmt.Errorf("block scenario %s: transaction %d (%s) failed%s", sc.Name, i, tx.Hash().Hex(), e.why(ctx, tx.Hash()))
			}
			rb.Txs = append(rb.Txs, tx.Hash())
		}
		addr := func(name string) string {
			a := lower(w.A(name))
			rb.Names[a] = name
			return a
		}
		for _, s := range plan.sandwiches {
			ws := WantSandwich{Sender: addr(s.sender), Bot: addr(s.bot), Front: s.front, Back: s.back, Victims: s.victims,
				Token: normalformKey(w.A(s.token)), Other: normalformKey(w.A(s.other))}
			rb.Names[ws.Token], rb.Names[ws.Other] = s.token, s.other
			for _, v := range s.victimBots {
				ws.VictimBots = append(ws.VictimBots, addr(v))
			}
			for _, p := range s.pools {
				ws.Pools = append(ws.Pools, addr(p))
			}
			rb.Sandwiches = append(rb.Sandwiches, ws)
		}
		for _, br := range plan.backruns {
			rb.Backruns = append(rb.Backruns, WantBackrun{Sender: addr(br.sender), Bot: addr(br.bot), Tx: br.tx,
				Token: normalformKey(w.A(br.token)), Pool: addr(br.pool), Corrects: br.corrects, Corrector: addr(br.corrector), Gain: br.gain})
		}
		for _, actor := range plan.actors {
			a := addr(actor)
			rb.Delta[a] = map[string]*big.Int{}
			for _, tok := range plan.tokens {
				t := w.A(tok)
				k := normalformKey(t)
				rb.Names[k] = tok
				after := w.balanceAt(ctx, t, w.A(actor), n)
				before := w.balanceAt(ctx, t, w.A(actor), n-1)
				rb.Delta[a][k] = new(big.Int).Sub(after, before)
			}
		}
		for i, s := range rb.Sandwiches {
			g := rb.Delta[s.Bot][s.Token]
			if g.Sign() <= 0 {
				return nil, fmt.Errorf("block scenario %s: the attacker gained %s of %s over the block: the plan does not sandwich", sc.Name, g, rb.Names[s.Token])
			}
			if p := plan.sandwiches[i].gain; p != nil && p.Cmp(g) != 0 {
				return nil, fmt.Errorf("block scenario %s: the attacker gained %s of %s over the block, the plan says %s", sc.Name, g, rb.Names[s.Token], p)
			}
		}
		out = append(out, rb)
	}
	return out, nil
}

// normalformKey is a fungible token's key as flowq writes it (lower-case
// hex).
func normalformKey(a common.Address) string { return lower(a) }

// balanceAt is token.balanceOf(who) at the end of block n.
func (w *World) balanceAt(ctx context.Context, token, who common.Address, n uint64) *big.Int {
	var out hexutil.Bytes
	data := w.pack("ERC20PresetFixedSupply", "balanceOf", who)
	if err := w.rpc.Call(ctx, &out, "eth_call", callArgs{To: token, Data: data}, "0x"+strconv.FormatUint(n, 16)); err != nil {
		fail("eth_call %s.balanceOf(%s) at block %d: %v", w.Names[token], w.Names[who], n, err)
	}
	v, err := w.art["ERC20PresetFixedSupply"].ABI.Unpack("balanceOf", out)
	if err != nil {
		fail("unpacking %s.balanceOf: %v", w.Names[token], err)
	}
	return v[0].(*big.Int)
}
