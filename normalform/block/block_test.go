package block_test

import (
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/block"
	"github.com/flowq/flowq/normalform/gen"
	"github.com/flowq/flowq/normalform/trace"
)

const scenarios = "../../examples/scenarios"

type truthCase struct {
	Name         string                       `json:"name"`
	Tx           string                       `json:"tx"`
	Block        uint64                       `json:"block"`
	TxIndex      *int                         `json:"tx_index"`
	BlockTxs     int                          `json:"block_txs"`
	To           string                       `json:"to"`
	PriorityFees string                       `json:"priority_fees"`
	Coinbase     string                       `json:"coinbase_payment"`
	Gross        map[string]map[string]string `json:"gross"`
}

func readTruth(t *testing.T) map[string]truthCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(scenarios, "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Scenarios []truthCase `json:"scenarios"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]truthCase{}
	for _, c := range doc.Scenarios {
		out[c.Name] = c
	}
	return out
}

func analyzeFile(t testing.TB, path string) *normalform.Analysis {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res := trace.Decode(data, trace.Options{Source: path})
	if len(res.Errors) > 0 || len(res.Txs) != 1 {
		t.Fatalf("%s: %d txs, errors %v", path, len(res.Txs), res.Errors)
	}
	a, err := normalform.Analyze(res.Txs[0], normalform.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func dec(t *testing.T, s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("bad decimal %q", s)
	}
	return v
}

// TestScenarioSandwich: the scenario block of three (front, victim, back)
// is one sandwich, whose gain is the bot's WETH over the two legs as the
// chain says, and the block paid its builder the priority fees.
func TestScenarioSandwich(t *testing.T) {
	truth := readTruth(t)
	names := []string{"sandwich_front", "sandwich_victim", "sandwich_back"}
	var txs []*normalform.Analysis
	for i, n := range names {
		c := truth[n]
		if c.TxIndex == nil || *c.TxIndex != i || c.BlockTxs != 3 {
			t.Fatalf("%s: truth index %v of %d", n, c.TxIndex, c.BlockTxs)
		}
		txs = append(txs, analyzeFile(t, filepath.Join(scenarios, "geth", n+".json")))
	}
	blk := truth["sandwich_front"].Block
	r, err := block.Analyze(blk, txs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Partial || len(r.Txs) != 3 {
		t.Fatalf("partial %v, %d txs", r.Partial, len(r.Txs))
	}
	if len(r.Sandwiches) != 1 {
		t.Fatalf("sandwiches %+v, want one", r.Sandwiches)
	}
	sw := r.Sandwiches[0]
	bot := strings.ToLower(truth["sandwich_front"].To)
	weth := "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2"
	want := new(big.Int)
	for _, n := range []string{"sandwich_front", "sandwich_back"} {
		want.Add(want, dec(t, truth[n].Gross[bot][weth]))
	}
	if sw.Gain != want.String() || sw.Token != weth || sw.Bot != bot {
		t.Errorf("gain %s %s at %s, want %s %s at %s", sw.Gain, sw.Token, sw.Bot, want, weth, bot)
	}
	if len(sw.Left) != 0 {
		t.Errorf("left %v, want nothing (every FLOKI sold back)", sw.Left)
	}
	if sw.Front.Tx != truth["sandwich_front"].Tx || sw.Back.Tx != truth["sandwich_back"].Tx ||
		len(sw.Victims) != 1 || sw.Victims[0].Tx != truth["sandwich_victim"].Tx {
		t.Errorf("legs %+v %+v victims %+v", sw.Front, sw.Back, sw.Victims)
	}
	// The pool is the one whose balance the truth shows moving.
	pool := ""
	for a, g := range truth["sandwich_victim"].Gross {
		if g[weth] == "5000000000000000000" && a != weth {
			pool = a
		}
	}
	if len(sw.Pools) != 1 || sw.Pools[0] != pool {
		t.Errorf("pools %v, want [%s]", sw.Pools, pool)
	}
	v := sw.Victims[0]
	if v.In != weth || v.AmountIn != "5000000000000000000" || "-"+v.AmountOut != truth["sandwich_victim"].Gross[pool]["0xf56125607e28a0eb82ca329bd358a9c95f994431"] {
		t.Errorf("victim swap %+v", v)
	}
	roles := [][]string{{block.RoleFront}, {block.RoleVictim}, {block.RoleBack}}
	for i, row := range r.Txs {
		if !reflect.DeepEqual(row.Roles, roles[i]) {
			t.Errorf("tx %d roles %v, want %v", i, row.Roles, roles[i])
		}
	}
	prio, paid := new(big.Int), new(big.Int)
	for _, n := range names {
		prio.Add(prio, dec(t, truth[n].PriorityFees))
		paid.Add(paid, dec(t, truth[n].Coinbase))
	}
	if r.Builder.PriorityFees != prio.String() || r.Builder.Payments != paid.String() ||
		r.Builder.Total != new(big.Int).Add(prio, paid).String() {
		t.Errorf("builder %+v, want priority %s payments %s", r.Builder, prio, paid)
	}
	if len(r.Backruns) != 0 {
		t.Errorf("backruns %+v, want none", r.Backruns)
	}
	// Without the back leg, no sandwich.
	r2, err := block.Analyze(blk, txs[:2], nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r2.Sandwiches) != 0 {
		t.Errorf("front and victim only: %+v", r2.Sandwiches)
	}
	// Without the victim, a gap: the block is partial and nothing spans it.
	r3, err := block.Analyze(blk, []*normalform.Analysis{txs[0], txs[2]}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r3.Partial || !reflect.DeepEqual(r3.Missing, []int{1}) || len(r3.Sandwiches) != 0 {
		t.Errorf("victim missing: partial %v missing %v sandwiches %+v", r3.Partial, r3.Missing, r3.Sandwiches)
	}
}

// swapTx: sender EOA calls bot BOT, which pays `in` of tokIn into POOL
// and receives `out` of tokOut.
func swapTx(t testing.TB, index int, eoa, bot, pool, in, tokIn, out, tokOut string) *normalform.Analysis {
	t.Helper()
	b := &gen.Builder{}
	root := b.F(eoa, bot,
		b.T(bot, pool, in, tokIn, bot),
		b.F(bot, pool, b.T(pool, bot, out, tokOut, pool), b.Static(pool, tokOut)))
	tx := b.Tx(eoa, bot, 100000, root)
	m := &tx.Meta
	m.Block, m.HasBlock, m.Index, m.HasIndex = 7, true, index, true
	m.Hash, m.HasHash = common.BigToHash(big.NewInt(int64(1000+index))), true
	a, err := normalform.Analyze(tx, normalform.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// arbTx: bot ARB runs Figure 1(a) through P1 (WETH→USDT) and P2
// (USDT→WETH), gaining 0.1 WETH.
func arbTx(t testing.TB, index int) *normalform.Analysis {
	t.Helper()
	b := &gen.Builder{}
	root := b.F("ARBEOA", "ARB",
		b.T("ARB", "P1", "1", "WETH", "ARB"),
		b.F("ARB", "P1", b.T("P1", "P2", "2940", "USDT", "P1"), b.Static("P1", "USDT")),
		b.F("ARB", "P2", b.T("P2", "ARB", "1.1", "WETH", "P2"), b.Static("P2", "WETH")))
	tx := b.Tx("ARBEOA", "ARB", 100000, root)
	m := &tx.Meta
	m.Block, m.HasBlock, m.Index, m.HasIndex = 7, true, index, true
	m.Hash, m.HasHash = common.BigToHash(big.NewInt(int64(1000+index))), true
	a, err := normalform.Analyze(tx, normalform.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if a.Verdict != normalform.VerdictArbitrage {
		t.Fatalf("arbTx: verdict %s", a.Verdict)
	}
	return a
}

func TestHandMade(t *testing.T) {
	cases := []struct {
		name       string
		txs        func() []*normalform.Analysis
		sandwiches int
		victims    int
		gain       string
		backruns   int
	}{
		{"sandwich of two victims", func() []*normalform.Analysis {
			return []*normalform.Analysis{
				swapTx(t, 0, "A", "BOTA", "POOL", "3", "WETH", "300", "TKN"),
				swapTx(t, 1, "U1", "BOTU1", "POOL", "5", "WETH", "450", "TKN"),
				swapTx(t, 2, "U2", "BOTU2", "POOL", "1", "WETH", "80", "TKN"),
				swapTx(t, 3, "A", "BOTA", "POOL", "300", "TKN", "3.5", "WETH"),
			}
		}, 1, 2, "500000000000000000", 0},
		{"the same bot from another sender is the same attacker", func() []*normalform.Analysis {
			return []*normalform.Analysis{
				swapTx(t, 0, "A", "BOTA", "POOL", "3", "WETH", "300", "TKN"),
				swapTx(t, 1, "U1", "BOTU1", "POOL", "5", "WETH", "450", "TKN"),
				swapTx(t, 2, "A2", "BOTA", "POOL", "300", "TKN", "3.2", "WETH"),
			}
		}, 1, 1, "200000000000000000", 0},
		{"same pool, same direction, unrelated senders: no sandwich", func() []*normalform.Analysis {
			return []*normalform.Analysis{
				swapTx(t, 0, "A", "BOTA", "POOL", "3", "WETH", "300", "TKN"),
				swapTx(t, 1, "U1", "BOTU1", "POOL", "5", "WETH", "450", "TKN"),
				swapTx(t, 2, "U2", "BOTU2", "POOL", "300", "TKN", "3.5", "WETH"),
			}
		}, 0, 0, "", 0},
		{"front without back: no sandwich", func() []*normalform.Analysis {
			return []*normalform.Analysis{
				swapTx(t, 0, "A", "BOTA", "POOL", "3", "WETH", "300", "TKN"),
				swapTx(t, 1, "U1", "BOTU1", "POOL", "5", "WETH", "450", "TKN"),
				swapTx(t, 2, "U2", "BOTU2", "POOL", "1", "WETH", "80", "TKN"),
			}
		}, 0, 0, "", 0},
		{"back leg on another pool: no sandwich", func() []*normalform.Analysis {
			return []*normalform.Analysis{
				swapTx(t, 0, "A", "BOTA", "POOL", "3", "WETH", "300", "TKN"),
				swapTx(t, 1, "U1", "BOTU1", "POOL", "5", "WETH", "450", "TKN"),
				swapTx(t, 2, "A", "BOTA", "POOL2", "300", "TKN", "3.5", "WETH"),
			}
		}, 0, 0, "", 0},
		{"victim trading the other way: no sandwich", func() []*normalform.Analysis {
			return []*normalform.Analysis{
				swapTx(t, 0, "A", "BOTA", "POOL", "3", "WETH", "300", "TKN"),
				swapTx(t, 1, "U1", "BOTU1", "POOL", "450", "TKN", "5", "WETH"),
				swapTx(t, 2, "A", "BOTA", "POOL", "300", "TKN", "3.5", "WETH"),
			}
		}, 0, 0, "", 0},
		{"back-run of a large swap on P1", func() []*normalform.Analysis {
			return []*normalform.Analysis{
				swapTx(t, 0, "U1", "BOTU1", "P1", "30000", "USDT", "9", "WETH"),
				swapTx(t, 1, "U2", "BOTU2", "P1", "300", "USDT", "0.1", "WETH"),
				arbTx(t, 2),
			}
		}, 0, 0, "", 1},
		{"an arbitrage after a swap the same way: no back-run", func() []*normalform.Analysis {
			return []*normalform.Analysis{
				swapTx(t, 0, "U1", "BOTU1", "P1", "9", "WETH", "30000", "USDT"),
				arbTx(t, 1),
			}
		}, 0, 0, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			txs := c.txs()
			r, err := block.Analyze(7, txs, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Sandwiches) != c.sandwiches || len(r.Backruns) != c.backruns {
				t.Fatalf("sandwiches %+v backruns %+v; want %d and %d", r.Sandwiches, r.Backruns, c.sandwiches, c.backruns)
			}
			if c.sandwiches == 1 {
				sw := r.Sandwiches[0]
				if len(sw.Victims) != c.victims || sw.Gain != c.gain {
					t.Errorf("victims %d gain %s; want %d, %s", len(sw.Victims), sw.Gain, c.victims, c.gain)
				}
			}
			if c.backruns == 1 {
				br := r.Backruns[0]
				if len(br.Corrects) != 1 || br.Corrects[0].Index != 0 || br.Corrects[0].Pool != strings.ToLower(gen.Addr("P1").Hex()) ||
					br.Gain != "100000000000000000" {
					t.Errorf("backrun %+v: want it to correct tx 0 on P1 (the larger swap), gain 0.1 WETH", br)
				}
				if !reflect.DeepEqual(r.Txs[0].Roles, []string{block.RoleCorrected}) || !reflect.DeepEqual(r.Txs[2].Roles, []string{block.RoleBackrun}) {
					t.Errorf("roles %+v", r.Txs)
				}
			}
		})
	}
}

func TestAnalyzeRefusesOtherBlocks(t *testing.T) {
	a := swapTx(t, 0, "A", "BOTA", "POOL", "3", "WETH", "300", "TKN")
	if _, err := block.Analyze(8, []*normalform.Analysis{a}, nil); err == nil || !strings.Contains(err.Error(), "not of this block") {
		t.Errorf("err %v", err)
	}
	b := swapTx(t, 0, "U", "BOTU", "POOL", "3", "WETH", "300", "TKN")
	if _, err := block.Analyze(7, []*normalform.Analysis{a, b}, nil); err == nil || !strings.Contains(err.Error(), "index order") {
		t.Errorf("err %v", err)
	}
}

// TestBackrunNeedsEveryEarlierTx: a back-run names the largest earlier
// swap it corrects, a claim about every earlier transaction; with one of
// them missing (here the large swap, index 0) the block says it is
// partial and names no back-run, rather than the smaller swap it sees.
func TestBackrunNeedsEveryEarlierTx(t *testing.T) {
	large := swapTx(t, 0, "U1", "BOTU1", "P1", "30000", "USDT", "9", "WETH")
	small := swapTx(t, 1, "U2", "BOTU2", "P1", "300", "USDT", "0.1", "WETH")
	arb := arbTx(t, 2)
	whole, err := block.Analyze(7, []*normalform.Analysis{large, small, arb}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole.Backruns) != 1 || whole.Backruns[0].Corrects[0].Index != 0 {
		t.Fatalf("whole block: back-runs %+v, want one correcting tx 0", whole.Backruns)
	}
	for _, c := range []struct {
		name string
		txs  []*normalform.Analysis
	}{
		{"large swap missing", []*normalform.Analysis{small, arb}},
		{"only the arbitrage", []*normalform.Analysis{arb}},
	} {
		r, err := block.Analyze(7, c.txs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Partial || len(r.Backruns) != 0 {
			t.Errorf("%s: partial %v missing %v back-runs %+v; want partial and none", c.name, r.Partial, r.Missing, r.Backruns)
		}
		for _, row := range r.Txs {
			if len(row.Roles) != 0 {
				t.Errorf("%s: tx %d roles %v", c.name, row.Index, row.Roles)
			}
		}
	}
}

const mainnetBlock = "../trace/testdata/corpus/mev-inspect-rs/res/11017338.data.json"

// analyzeBlockFile decodes a whole-block file and analyses each of its
// transactions, in index order.
func analyzeBlockFile(t testing.TB, path string) []*normalform.Analysis {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res := trace.Decode(data, trace.Options{Source: path})
	if len(res.Errors) > 0 {
		t.Fatalf("%s: %v", path, res.Errors)
	}
	var txs []*normalform.Analysis
	for _, tx := range res.Txs {
		a, err := normalform.Analyze(tx, normalform.DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		txs = append(txs, a)
	}
	sort.SliceStable(txs, func(i, j int) bool { return txs[i].Tx.Meta.Index < txs[j].Tx.Meta.Index })
	return txs
}

// TestMainnetBlock11017338: the corpus's whole mainnet block (124
// transactions, Parity traces with logs) holds three WETH sandwiches on
// Uniswap V2 pairs, each with one victim trading through Router02, and no
// back-run (no transaction of the block is an arbitrage). Two attackers
// send their back leg from another account than the front, to the same
// bot. Each gain is what the back leg bought less what the front sold
// (one pool, every token bought sold back).
func TestMainnetBlock11017338(t *testing.T) {
	txs := analyzeBlockFile(t, mainnetBlock)
	r, err := block.Analyze(11017338, txs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Partial || len(r.Txs) != 124 || len(r.Backruns) != 0 {
		t.Fatalf("partial %v, %d txs, back-runs %+v", r.Partial, len(r.Txs), r.Backruns)
	}
	router := "0x7a250d5630b4cf539739df2c5dacb4c659f2488d"
	want := []struct {
		front, victim, back int
		bot, pool, tok      string
		gain                string
		sameSender          bool
	}{
		{1, 41, 42, "0x5f3e759d09e1059e4c46d6984f07cbb36a73bdf1", "0x164ed0df02b3747315b50b806b79962ad9517578", "0x468ab3b1f63a1c14b361bc367c3cc92277588da1", "308149869734581526", false},
		{13, 16, 17, "0x8be4db5926232bc5b02b841dbede8161924495c4", "0xdc7d8cc3a22fe0ec69770e02931f43451b7b975e", "0x178c820f862b14f316509ec36b13123da19a6054", "137754556540143430", false},
		{82, 86, 97, "0xafe0e7de1ff45bc31618b39dfe42dd9439eebb32", "0x9b7dad79fc16106b47a3dab791f389c167e15eb0", "0x967da4048cd07ab37855c090aaf366e4ce1b9f48", "60198174049200506", true},
	}
	if len(r.Sandwiches) != len(want) {
		t.Fatalf("%d sandwiches, want %d: %+v", len(r.Sandwiches), len(want), r.Sandwiches)
	}
	weth := "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2"
	for i, w := range want {
		s := r.Sandwiches[i]
		if s.Front.Index != w.front || s.Back.Index != w.back || len(s.Victims) != 1 || s.Victims[0].Index != w.victim {
			t.Errorf("sandwich %d: front %d back %d victims %+v; want %d, %d, [%d]", i, s.Front.Index, s.Back.Index, s.Victims, w.front, w.back, w.victim)
			continue
		}
		f, b, v := s.FrontSwaps[0], s.BackSwaps[0], s.Victims[0]
		if s.Bot != w.bot || (f.Sender == b.Sender) != w.sameSender || !reflect.DeepEqual(s.Pools, []string{w.pool}) || s.Token != weth {
			t.Errorf("sandwich %d: bot %s senders %s %s pools %v token %s", i, s.Bot, f.Sender, b.Sender, s.Pools, s.Token)
		}
		if f.In != weth || f.Out != w.tok || v.In != weth || v.Out != w.tok || b.In != w.tok || b.Out != weth || v.Bot != router {
			t.Errorf("sandwich %d: directions front %+v victim %+v back %+v", i, f, v, b)
		}
		gain := new(big.Int).Sub(dec(t, b.AmountOut), dec(t, f.AmountIn))
		if s.Gain != w.gain || gain.String() != w.gain || b.AmountIn != f.AmountOut || len(s.Left) != 0 {
			t.Errorf("sandwich %d: gain %s (back bought %s, front sold %s), sold back %s of %s bought, left %v; want %s", i, s.Gain, b.AmountOut, f.AmountIn, b.AmountIn, f.AmountOut, s.Left, w.gain)
		}
	}
}

// TestTrailingMissingTransactions decodes the sandwich's front leg alone:
// its bundle's header lists the block's three transactions, and the front
// is the first. The decoder carries the count (Result.BlockTxs) and block
// analysis reports the last two missing, partial, where Analyze (which
// does not know the count) saw a whole block of one.
func TestTrailingMissingTransactions(t *testing.T) {
	truth := readTruth(t)
	c := truth["sandwich_front"]
	path := filepath.Join(scenarios, "geth", "sandwich_front.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	res := trace.Decode(data, trace.Options{Source: path})
	if len(res.Errors) > 0 || len(res.Txs) != 1 {
		t.Fatalf("%d txs, errors %v", len(res.Txs), res.Errors)
	}
	if got := res.BlockTxs[c.Block]; got != 3 || len(res.BlockTxs) != 1 {
		t.Fatalf("BlockTxs %v, want block %d: 3", res.BlockTxs, c.Block)
	}
	a, err := normalform.Analyze(res.Txs[0], normalform.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	r, err := block.AnalyzeCount(c.Block, []*normalform.Analysis{a}, nil, res.BlockTxs[c.Block])
	if err != nil {
		t.Fatal(err)
	}
	if !r.Partial || !reflect.DeepEqual(r.Missing, []int{1, 2}) {
		t.Errorf("partial %v, missing %v; want partial, missing [1 2]", r.Partial, r.Missing)
	}
	if len(r.Sandwiches) != 0 {
		t.Errorf("found %d sandwiches in a block seen in part", len(r.Sandwiches))
	}
	// Without the count, only the gaps before the last transaction given.
	if r, err := block.Analyze(c.Block, []*normalform.Analysis{a}, nil); err != nil || r.Partial {
		t.Errorf("Analyze without the count: partial %v, err %v", r.Partial, err)
	}
	// A transaction past the header's count is an error, naming both.
	if _, err := block.AnalyzeCount(c.Block, []*normalform.Analysis{a}, nil, 0); err == nil || !strings.Contains(err.Error(), "lists 0 transactions") {
		t.Errorf("index past the count: %v", err)
	}
	// A parity bundle gives the count too.
	pdata, err := os.ReadFile(filepath.Join(scenarios, "parity", "sandwich_front.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := trace.Decode(pdata, trace.Options{}).BlockTxs[c.Block]; got != 3 {
		t.Errorf("parity bundle: BlockTxs %d, want 3", got)
	}
}
