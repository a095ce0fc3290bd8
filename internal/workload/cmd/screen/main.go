// Command screen is issue 19's screening run: on N SYNTHETIC transactions
// (package workload) served by a loopback JSON-RPC node (workload.Node on
// 127.0.0.1, in this process), it ingests every block twice, into two
// fresh indexes:
//
//   - traced: every block traced (index/fetch in geth mode:
//     debug_traceBlockByNumber with callTracer, eth_getBlockReceipts,
//     eth_getBlockByNumber), as `flowq ingest --rpc URL --blocks A..B`;
//   - screened: every block from receipts (eth_getBlockReceipts,
//     eth_getBlockByNumber with full transactions; fetch.Client.Screen,
//     keeping them), then traces fetched only for the suspects
//     (fetch.SuspectWhy: a detection, a cycle, a V4 PoolManager, or a
//     coalition that loses no token) with debug_traceTransaction alone,
//     the receipt and header being the screening's
//     (Client.ConfirmScreened); --refetch-receipts confirms as
//     Client.Confirm and `flowq ingest --rpc URL --blocks A..B --mode
//     receipts --confirm traces` do, fetching eth_getTransactionReceipt
//     and eth_getBlockByNumber again.
//
// The blocks are made and served a chunk at a time (--chunk blocks), and
// the two ingests take turns on each chunk (which one goes first
// alternates), so that both see the same machine. It prints, per side,
// the node's requests and answer bytes by method, wall time and the
// process's CPU time (getrusage: client, node and Badger are one process,
// so a side's CPU is the process's during that side's turns), then the
// screening counts and the verdicts of the two indexes side by side.
//
//	go run ./internal/workload/cmd/screen --n 100000
package main

import (
	"context"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/fetch"
	"github.com/flowq/flowq/index/fetch/screen"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/internal/cputime"
	"github.com/flowq/flowq/internal/workload"
	"github.com/flowq/flowq/normalform"
)

func main() {
	var c config
	flag.IntVar(&c.n, "n", 100000, "synthetic transactions (rounded up to whole blocks)")
	flag.Int64Var(&c.seed, "seed", 1, "workload seed")
	flag.IntVar(&c.blockTxs, "block-txs", 100, "transactions per synthetic block")
	flag.IntVar(&c.chunk, "chunk", 50, "blocks made, served and ingested at a time")
	flag.StringVar(&c.scenarios, "scenarios", "examples/scenarios/geth", "directory of scenario bundles")
	flag.StringVar(&c.dir, "dir", "", "directory for the two indexes (default: a temporary one, removed at the end)")
	byScenario := flag.Bool("by-scenario", false, "also print the counts by scenario")
	flag.BoolVar(&c.refetch, "refetch-receipts", false, "confirm as before the screened data was kept: fetch each suspect's receipt and header again with its trace")
	weights := flag.String("weights", "", "scenario weights name=w,... over the defaults (10 each; star_r 2, star_s 1)")
	flag.Parse()
	var err error
	if c.weights, err = parseWeights(*weights); err != nil {
		fmt.Fprintln(os.Stderr, "screen:", err)
		os.Exit(2)
	}
	if flag.NArg() > 0 || c.n <= 0 || c.blockTxs <= 0 || c.chunk <= 0 {
		fmt.Fprintln(os.Stderr, "usage: screen [--n N] [--seed S] [--block-txs K] [--chunk B] [--scenarios DIR] [--dir DIR]  (N, K, B > 0)")
		os.Exit(2)
	}
	res, err := run(context.Background(), c, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "screen:", err)
		os.Exit(1)
	}
	res.print(os.Stdout)
	if *byScenario {
		res.printScenarios(os.Stdout)
	}
}

type config struct {
	n         int
	seed      int64
	blockTxs  int
	chunk     int
	scenarios string
	dir       string
	weights   map[string]int // nil: workload.DefaultWeights
	refetch   bool           // Confirm, not ConfirmScreened
}

// parseWeights reads "name=w,name=w" on top of workload.DefaultWeights.
func parseWeights(s string) (map[string]int, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]int{}
	for k, v := range workload.DefaultWeights {
		out[k] = v
	}
	for _, f := range strings.Split(s, ",") {
		name, w, ok := strings.Cut(strings.TrimSpace(f), "=")
		n, err := strconv.Atoi(w)
		if !ok || err != nil || n < 0 || name == "" {
			return nil, fmt.Errorf("--weights %q: want name=weight,... (weights 0 or more), not %q", s, f)
		}
		out[name] = n
	}
	return out, nil
}

// side is what one way of ingesting cost.
type side struct {
	node      workload.NodeStats
	wall, cpu time.Duration
}

type result struct {
	txs, blocks int
	from, to    uint64
	traced      side
	screen      side // receipts ingest
	confirm     side // trace fetches of the suspects
	screened    int
	suspects    int
	suspectsBy  map[screen.Reason]int
	reused      int
	keptMax     int64 // the most bytes the Screened held at once
	confirmed   int
	changed     int
	missing     int
	// verdicts[traced][screened-index] counts transactions; modes counts
	// the screened index's records by mode.
	verdicts    map[[2]normalform.Verdict]int
	onlyTraced  int // in the traced index, not in the screened one
	onlyScreen  int
	modes       map[normalform.Mode]int
	loadBefore  string
	loadAfter   string
	tracedStore int
	// scenario names each transaction (lowercase hash without 0x, 32
	// bytes); lostBy and suspectBy count by scenario.
	scenario  map[normalform.Hash]string
	lostBy    map[string]int
	suspectBy map[string]int
	perScen   map[string]int
}

func (r *result) both() side {
	return side{node: r.screen.node.Add(r.confirm.node), wall: r.screen.wall + r.confirm.wall, cpu: r.screen.cpu + r.confirm.cpu}
}

// run does the two ingests; progress goes to log (nil: none).
func run(ctx context.Context, c config, log io.Writer) (*result, error) {
	if log == nil {
		log = io.Discard
	}
	sc, err := workload.LoadScenarios(c.scenarios)
	if err != nil {
		return nil, err
	}
	gen, err := workload.New(sc, workload.Options{Seed: c.seed, BlockTxs: c.blockTxs, Weights: c.weights})
	if err != nil {
		return nil, err
	}
	dir := c.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "flowq-screen-"); err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
	}
	ixT, err := index.Open(filepath.Join(dir, "traced"))
	if err != nil {
		return nil, fmt.Errorf("the traced index: %w", err)
	}
	defer ixT.Close()
	ixS, err := index.Open(filepath.Join(dir, "screened"))
	if err != nil {
		return nil, fmt.Errorf("the screened index: %w", err)
	}
	defer ixS.Close()

	node := workload.NewNode()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: node}
	go srv.Serve(ln)
	defer srv.Close()
	url := "http://" + ln.Addr().String()
	fo := fetch.Options{Retries: -1}
	fo.Mode = fetch.Geth
	tc, err := fetch.Dial(ctx, url, fo)
	if err != nil {
		return nil, err
	}
	defer tc.Close()
	fo.Mode = fetch.Receipts
	rc, err := fetch.Dial(ctx, url, fo)
	if err != nil {
		return nil, err
	}
	defer rc.Close()

	kept := fetch.NewScreened()
	res := &result{suspectsBy: map[screen.Reason]int{}, verdicts: map[[2]normalform.Verdict]int{}, modes: map[normalform.Mode]int{}, loadBefore: cputime.Load(),
		scenario: map[normalform.Hash]string{}, lostBy: map[string]int{}, suspectBy: map[string]int{}, perScen: map[string]int{}}
	blocks := (c.n + c.blockTxs - 1) / c.blockTxs
	res.blocks = blocks
	var opt ingest.Options
	measure := func(s *side, f func() error) error {
		st0, c0, t0 := node.Stats(), cputime.Process(), time.Now()
		err := f()
		s.wall += time.Since(t0)
		s.cpu += cputime.Process() - c0
		s.node = s.node.Add(node.Stats().Sub(st0))
		return err
	}
	traced := func(lo, hi uint64) error {
		return measure(&res.traced, func() error {
			rep, err := tc.IngestBlocks(ctx, ixT, lo, hi, opt)
			if err == nil && !rep.Complete() {
				err = fmt.Errorf("traced ingest of blocks %d..%d incomplete: %s", lo, hi, rep)
			}
			res.tracedStore += rep.Stored
			return err
		})
	}
	screened := func(lo, hi uint64) error {
		err := measure(&res.screen, func() error {
			keep := kept
			if c.refetch {
				keep = nil
			}
			rep, err := rc.Screen(ctx, ixS, lo, hi, opt, keep)
			res.keptMax = max(res.keptMax, kept.Bytes())
			if err == nil && !rep.Complete() {
				err = fmt.Errorf("receipts ingest of blocks %d..%d incomplete: %s", lo, hi, rep)
			}
			return err
		})
		if err != nil {
			return err
		}
		return measure(&res.confirm, func() error {
			rep, err := tc.ConfirmScreened(ctx, ixS, lo, hi, opt, kept)
			kept.Drop(hi + 1)
			res.screened += rep.Screened
			res.suspects += rep.Suspects
			res.reused += rep.Reused
			for w, n := range rep.SuspectsBy {
				res.suspectsBy[w] += n
			}
			res.confirmed += rep.Confirmed
			res.changed += len(rep.Changed)
			res.missing += len(rep.Missing)
			if err == nil && (len(rep.Missing) > 0 || len(rep.Failures) > 0) {
				err = fmt.Errorf("confirming blocks %d..%d: %s", lo, hi, rep)
			}
			return err
		})
	}
	start := time.Now()
	for k := 0; k*c.chunk < blocks; k++ {
		var lo, hi uint64
		for i := k * c.chunk; i < min((k+1)*c.chunk, blocks); i++ {
			b := gen.Block()
			if i == 0 {
				res.from = b.Number
			}
			if i == k*c.chunk {
				lo = b.Number
			}
			hi = b.Number
			res.txs += len(b.Scenarios)
			hs, err := b.TxHashes()
			if err != nil {
				return nil, err
			}
			for j, h := range hs {
				var x normalform.Hash
				if _, err := hex.Decode(x[:], []byte(strings.TrimPrefix(h, "0x"))); err != nil {
					return nil, fmt.Errorf("block %d: transaction hash %q: %v", b.Number, h, err)
				}
				res.scenario[x] = b.Scenarios[j]
				res.perScen[b.Scenarios[j]]++
			}
			if err := node.Add(b); err != nil {
				return nil, err
			}
		}
		res.to = hi
		first, second := traced, screened
		if k%2 == 1 {
			first, second = screened, traced
		}
		if err := first(lo, hi); err != nil {
			return nil, err
		}
		if err := second(lo, hi); err != nil {
			return nil, err
		}
		node.Drop(hi + 1)
		if (k+1)%20 == 0 {
			fmt.Fprintf(log, "  %d of %d blocks, %d transactions, %.0f s\n", min((k+1)*c.chunk, blocks), blocks, res.txs, time.Since(start).Seconds())
		}
	}
	res.loadAfter = cputime.Load()
	if err := compare(ctx, ixT, ixS, res); err != nil {
		return nil, err
	}
	return res, nil
}

// compare reads both indexes and counts their verdicts side by side.
func compare(ctx context.Context, ixT, ixS *index.Index, res *result) error {
	rng := index.Blocks(res.from, res.to)
	tv := make(map[normalform.Hash]normalform.Verdict, res.txs)
	all := func(*index.Record) (bool, error) { return true, nil }
	if err := ixT.Filter(ctx, rng, false, all, false, func(r *index.Record) error {
		tv[r.Hash] = r.Verdict
		return nil
	}); err != nil {
		return fmt.Errorf("reading the traced index: %w", err)
	}
	if err := ixS.Filter(ctx, rng, false, all, false, func(r *index.Record) error {
		res.modes[r.Mode]++
		v, ok := tv[r.Hash]
		if !ok {
			res.onlyScreen++
			return nil
		}
		delete(tv, r.Hash)
		res.verdicts[[2]normalform.Verdict{v, r.Verdict}]++
		if r.Mode == normalform.ModeTraces {
			res.suspectBy[res.scenario[r.Hash]]++
		}
		if v == normalform.VerdictArbitrage && r.Verdict != v {
			res.lostBy[res.scenario[r.Hash]]++
		}
		return nil
	}); err != nil {
		return fmt.Errorf("reading the screened index: %w", err)
	}
	res.onlyTraced = len(tv)
	return nil
}

// lost counts the transactions the traced index calls v and the screened
// one does not.
func (r *result) lost(v normalform.Verdict) int {
	n := 0
	for k, c := range r.verdicts {
		if k[0] == v && k[1] != v {
			n += c
		}
	}
	return n
}

func mb(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }

func pct(a, b float64) string {
	if b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", 100*(1-a/b))
}

func (r *result) print(w io.Writer) {
	fmt.Fprintf(w, "machine: %d CPUs, %s; load before %s, after %s\n", runtime.NumCPU(), runtime.Version(), r.loadBefore, r.loadAfter)
	fmt.Fprintf(w, "workload: SYNTHETIC, %d transactions in %d blocks (%d..%d), served by a loopback node in this process\n", r.txs, r.blocks, r.from, r.to)
	fmt.Fprintf(w, "screening: %d screened from receipts, %d to confirm (%.1f%%), %d confirmed (traced), %d changed, %d missing\n",
		r.screened, r.suspects, 100*float64(r.suspects)/float64(max(r.screened, 1)), r.confirmed, r.changed, r.missing)
	var why []string
	for _, x := range screen.Reasons {
		why = append(why, fmt.Sprintf("%s %d", x, r.suspectsBy[x]))
	}
	fmt.Fprintf(w, "to confirm because: %s; confirmed with the screened receipt (trace alone): %d; screened data kept at most %s\n",
		strings.Join(why, ", "), r.reused, mb(r.keptMax))
	b := r.both()
	row := func(name string, s side) {
		fmt.Fprintf(w, "  %-22s %9d calls %9d HTTP %12s out %10s in  wall %8.2f s  cpu %8.2f s\n",
			name, s.node.Requests(), s.node.HTTPRequests, mb(s.node.BodyOut), mb(s.node.BodyIn), s.wall.Seconds(), s.cpu.Seconds())
	}
	fmt.Fprintln(w, "node traffic and time (cpu: the whole process's, client + node + Badger, during the side's turns):")
	row("traced, every block", r.traced)
	row("screen (receipts)", r.screen)
	row("confirm (traces)", r.confirm)
	row("screen + confirm", b)
	fmt.Fprintf(w, "saved by screening: bytes %s, calls %s, wall %s, cpu %s\n",
		pct(float64(b.node.BodyOut), float64(r.traced.node.BodyOut)), pct(float64(b.node.Requests()), float64(r.traced.node.Requests())),
		pct(b.wall.Seconds(), r.traced.wall.Seconds()), pct(b.cpu.Seconds(), r.traced.cpu.Seconds()))
	fmt.Fprintln(w, "answer bytes by method:")
	for _, s := range []struct {
		name string
		s    side
	}{{"traced", r.traced}, {"screen", r.screen}, {"confirm", r.confirm}} {
		for _, m := range s.s.node.MethodNames() {
			ms := s.s.node.Methods[m]
			fmt.Fprintf(w, "  %-8s %-26s %9d calls %12s\n", s.name, m, ms.Requests, mb(ms.Bytes))
		}
	}
	fmt.Fprintln(w, "verdicts, traced index (rows) by screened index (columns):")
	vs := []normalform.Verdict{normalform.VerdictNone, normalform.VerdictWarning, normalform.VerdictArbitrage}
	fmt.Fprintf(w, "  %-10s", "")
	for _, v := range vs {
		fmt.Fprintf(w, " %10s", v)
	}
	fmt.Fprintln(w)
	for _, t := range vs {
		fmt.Fprintf(w, "  %-10s", t)
		for _, s := range vs {
			fmt.Fprintf(w, " %10d", r.verdicts[[2]normalform.Verdict{t, s}])
		}
		fmt.Fprintln(w)
	}
	modes := make([]string, 0, len(r.modes))
	for m, c := range r.modes {
		modes = append(modes, fmt.Sprintf("%s %d", m, c))
	}
	sort.Strings(modes)
	fmt.Fprintf(w, "screened index by mode: %s; only in traced: %d, only in screened: %d; traced arbitrage not arbitrage when screened: %d\n",
		strings.Join(modes, ", "), r.onlyTraced, r.onlyScreen, r.lost(normalform.VerdictArbitrage))
}

func (r *result) printScenarios(w io.Writer) {
	names := make([]string, 0, len(r.perScen))
	for n := range r.perScen {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "by scenario: transactions, confirmed (traced), traced arbitrage not arbitrage when screened:")
	for _, n := range names {
		fmt.Fprintf(w, "  %-24s %8d %8d %8d\n", n, r.perScen[n], r.suspectBy[n], r.lostBy[n])
	}
}
