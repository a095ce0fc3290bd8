// Command scale is issue 8's scale run: it ingests N SYNTHETIC
// transactions (package workload) into a Badger index through the real
// ingest path (ingest.Ingester: decode, analyse, batched writes), prints
// throughput, bytes per transaction and peak memory, then measures query
// latency through the planner on the result.
//
//	go run ./internal/workload/cmd/scale --n 1000000 --index /tmp/flowq-scale
//
// With --n 0 it only runs the queries against an existing index (built
// by an earlier run with the same seed).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/internal/cputime"
	"github.com/flowq/flowq/internal/workload"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/planner"
	"github.com/flowq/flowq/repl/gcfloor"
)

func main() {
	gcfloor.Start() // as flowq runs (cmd/flowq): the figures are the product's
	n := flag.Int("n", 100000, "synthetic transactions to ingest (0: queries only)")
	dir := flag.String("index", "", "index directory (required; created when missing)")
	seed := flag.Int64("seed", 1, "workload seed")
	blockTxs := flag.Int("block-txs", 100, "transactions per synthetic block")
	scen := flag.String("scenarios", "examples/scenarios/geth", "directory of scenario bundles")
	queries := flag.Int("queries", 200, "random keys per lookup kind")
	every := flag.Int("report", 100000, "report progress every this many transactions")
	workers := flag.Int("workers", 0, "decode and analysis goroutines (0: all cores)")
	batch := flag.Int("batch", 0, "transactions per Badger write (0: the default)")
	memprofile := flag.String("memprofile", "", "write a heap profile here after the ingest")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the whole run here")
	settle := flag.Duration("settle", 3*time.Minute, "before the queries, wait up to this long for Badger's pending compactions (0: do not wait); the queries' CPU is the process's, compactions included")
	tracefile := flag.String("trace", "", "write a runtime trace of the whole run here (go tool trace)")
	flag.Parse()
	settleFor = *settle
	memProfile = *memprofile
	// The whole run's trace and CPU profile, each when asked for.
	var stops []func()
	stop := func() {
		for _, f := range stops {
			f()
		}
	}
	for _, r := range []struct {
		path  string
		start func(io.Writer) error
		stop  func()
	}{{*tracefile, trace.Start, trace.Stop}, {*cpuprofile, pprof.StartCPUProfile, pprof.StopCPUProfile}} {
		if r.path == "" {
			continue
		}
		f, err := os.Create(r.path)
		if err == nil {
			err = r.start(f)
		}
		if err != nil {
			stop()
			fmt.Fprintln(os.Stderr, "scale:", err)
			os.Exit(1)
		}
		stops = append(stops, r.stop)
	}
	defer stop()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "scale: --index DIR is required")
		os.Exit(2)
	}
	if err := run(*n, *dir, *seed, *blockTxs, *scen, *queries, *every, *workers, *batch); err != nil {
		stop()
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

var memProfile string

// referencePasses is how many passes of the machine's reference work
// (cputime.Reference) are timed before the run and after it.
const referencePasses = 21

// memKB reads a field of /proc/self/status (VmHWM: peak resident set,
// VmRSS: current), in kB.
func memKB(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field+":") {
			var v int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(l, field+":"), "kB")), &v)
			return v
		}
	}
	return -1
}

func run(n int, dir string, seed int64, blockTxs int, scen string, queries, every, workers, batch int) error {
	ctx := context.Background()
	sc, err := workload.LoadScenarios(scen)
	if err != nil {
		return err
	}
	gen, err := workload.New(sc, workload.Options{Seed: seed, BlockTxs: blockTxs})
	if err != nil {
		return err
	}
	fmt.Printf("machine: %d CPUs, %s; load: %s\n", runtime.NumCPU(), runtime.Version(), cputime.Load())
	fmt.Printf("reference before: %s\n", cputime.Reference(referencePasses))
	defer func() { fmt.Printf("reference after: %s\n", cputime.Reference(referencePasses)) }()
	fmt.Printf("workload: SYNTHETIC, seed %d, %d transactions a block, %d scenario shapes: %s\n",
		seed, blockTxs, len(gen.Shapes()), strings.Join(gen.Shapes(), " "))
	ix, err := index.Open(dir)
	if err != nil {
		return err
	}
	defer ix.Close()

	if n > 0 {
		var ms0 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		start, c0 := time.Now(), cputime.Process()
		g := ingest.NewIngester(ctx, ix, ingest.Options{Workers: workers, BatchTxs: batch})
		done, lastReport := 0, 0
		var genTime, genCPU time.Duration
		// The generator's CPU time is its thread's (this goroutine locked
		// to it): issue 22's figure includes it, and is given without it.
		runtime.LockOSThread()
		// Bundles (about 3 MB a block) are written into buffers the
		// ingest gives back once it has decoded them (Input.Release), not
		// allocated afresh: a third of the ingest's garbage otherwise.
		free := make(chan []byte, 64)
		for done < n {
			var buf []byte
			select {
			case buf = <-free:
			default:
			}
			t0, u0 := time.Now(), cputime.Thread()
			blk := gen.BlockAppend(buf)
			genTime += time.Since(t0)
			genCPU += cputime.Thread() - u0
			in := ingest.BundleInput(fmt.Sprintf("synthetic:seed%d:block:%d", seed, blk.Number), blk.Bundle)
			in.Release = func() {
				select {
				case free <- blk.Bundle:
				default:
				}
			}
			if err := g.Add(in); err != nil {
				return err
			}
			done += len(blk.Scenarios)
			if done-lastReport >= every {
				lastReport = done
				el := time.Since(start)
				fmt.Printf("  %8d tx queued  %6.1f s  %7.0f tx/s  %s\n", done, el.Seconds(), float64(done)/el.Seconds(), memLine())
			}
		}
		runtime.UnlockOSThread()
		sum, err := g.Close()
		if err != nil {
			return err
		}
		el := time.Since(start)
		fmt.Printf("ingest: %s\n", sum)
		fmt.Printf("ingest: %d tx in %.1f s: %.0f tx/s (generation %.1f s of it, in this goroutine)\n",
			done, el.Seconds(), float64(sum.Stored+sum.Skipped)/el.Seconds(), genTime.Seconds())
		cpu := cputime.Process() - c0
		fmt.Printf("ingest CPU: %.1f s user+system, %.1f µs a transaction (generation included); load: %s\n",
			cpu.Seconds(), float64(cpu.Microseconds())/float64(max(done, 1)), cputime.Load())
		fmt.Printf("ingest CPU without generation: %.1f µs a transaction (generation %.1f s of CPU on its thread, %.1f µs a transaction)\n",
			float64((cpu-genCPU).Microseconds())/float64(max(done, 1)), genCPU.Seconds(), float64(genCPU.Microseconds())/float64(max(done, 1)))
		var ms1 runtime.MemStats
		runtime.ReadMemStats(&ms1)
		fmt.Printf("allocated: %.1f kB a transaction (%d GC cycles)\n",
			float64(ms1.TotalAlloc-ms0.TotalAlloc)/1e3/float64(max(done, 1)), ms1.NumGC-ms0.NumGC)
		fmt.Printf("memory after the ingest: %s\n", memLine())
		if memProfile != "" {
			f, err := os.Create(memProfile)
			if err != nil {
				return err
			}
			runtime.GC()
			if err := pprof.WriteHeapProfile(f); err != nil {
				return err
			}
			f.Close()
		}
	}
	if err := stats(ctx, ix); err != nil {
		return err
	}
	if queries > 0 {
		settleIndex(ix)
		return measure(ctx, ix, seed, queries)
	}
	return nil
}

// settleFor is --settle.
var settleFor time.Duration

// settleIndex waits, up to settleFor, until Badger has no compaction to
// run, and says how long it waited and whether it got there: a query's
// CPU time is the process's, and a compaction left by the ingest (or by
// opening an index whose level 0 is full) would run beside the queries
// and be counted as theirs.
func settleIndex(ix *index.Index) {
	if settleFor <= 0 {
		fmt.Println("settle: not waited for compactions (--settle 0): queries' CPU includes any that run")
		return
	}
	start, c0 := time.Now(), cputime.Process()
	quiet := 0
	for time.Since(start) < settleFor && quiet < 5 {
		if ix.CompactionPending() {
			quiet = 0
		} else {
			quiet++
		}
		time.Sleep(200 * time.Millisecond)
	}
	state := "no compaction pending"
	if quiet < 5 {
		state = "compactions still pending: the queries' CPU includes them"
	}
	fmt.Printf("settle: waited %.1f s (%.1f s of CPU) for Badger's compactions; %s\n",
		time.Since(start).Seconds(), (cputime.Process() - c0).Seconds(), state)
}

// memLine reports the peak resident set (VmHWM), the current one split
// into anonymous memory (RssAnon: the Go heap, Badger's caches and
// memtables) and mapped files (RssFile: Badger's tables and value log,
// which the kernel can drop), and the Go heap in use.
func memLine() string {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return fmt.Sprintf("VmHWM %d MB  RSS %d MB = anon %d + file %d  Go heap in use %d MB",
		memKB("VmHWM")>>10, memKB("VmRSS")>>10, memKB("RssAnon")>>10, memKB("RssFile")>>10, ms.HeapInuse>>20)
}

func stats(ctx context.Context, ix *index.Index) error {
	t0 := time.Now()
	st, err := ix.Stats(ctx)
	if err != nil {
		return err
	}
	txs := st[index.KindTx].Keys
	if txs == 0 {
		return fmt.Errorf("empty index")
	}
	var total int64
	fmt.Printf("index: %d transactions (stats in %.1f s)\n", txs, time.Since(t0).Seconds())
	fmt.Printf("  %-8s %10s %12s %10s\n", "kind", "keys", "bytes", "B/tx")
	for _, k := range index.Kinds {
		s, ok := st[k]
		if !ok {
			continue
		}
		b := s.KeyBytes + s.ValueBytes
		total += b
		fmt.Printf("  %-8s %10d %12d %10.1f\n", k, s.Keys, b, float64(b)/float64(txs))
	}
	fmt.Printf("  %-8s %10s %12d %10.1f  (keys+values per transaction)\n", "total", "", total, float64(total)/float64(txs))
	if size, err := dirSize(ix.Path()); err == nil {
		fmt.Printf("  on disk (allocated blocks, before compaction): %d MB, %.0f B/tx\n", size>>20, float64(size)/float64(txs))
	}
	return nil
}

func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512 // allocated, not the preallocated length
			} else {
				n += fi.Size()
			}
		}
		return err
	})
	return n, err
}

// sample reads up to k random transactions of the index (a uniform
// sample of positions, through the position index).
func sample(ctx context.Context, ix *index.Index, seed int64, k int) ([]*index.Record, error) {
	var refs []index.Ref
	if err := ix.ByBlocks(ctx, index.AllBlocks, func(r index.Ref) error { refs = append(refs, r); return nil }); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewSource(seed))
	rng.Shuffle(len(refs), func(i, j int) { refs[i], refs[j] = refs[j], refs[i] })
	if len(refs) > k {
		refs = refs[:k]
	}
	out := make([]*index.Record, 0, len(refs))
	for _, r := range refs {
		rec, err := ix.Get(r.Hash)
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	return out, nil
}

type timing struct {
	name  string
	cpu   []time.Duration // process CPU time (user+system, every goroutine)
	d     []time.Duration
	first []time.Duration
	rows  int
}

func (t *timing) report() {
	sort.Slice(t.d, func(i, j int) bool { return t.d[i] < t.d[j] })
	sort.Slice(t.first, func(i, j int) bool { return t.first[i] < t.first[j] })
	q := func(ds []time.Duration, p float64) float64 {
		if len(ds) == 0 {
			return 0
		}
		return float64(ds[int(p*float64(len(ds)-1))].Microseconds()) / 1000
	}
	sort.Slice(t.cpu, func(i, j int) bool { return t.cpu[i] < t.cpu[j] })
	fmt.Printf("  %-34s n=%-4d rows/query %7.1f  median %8.3f ms  P95 %8.3f ms  first row: median %7.3f ms  CPU min/median/max %.3f/%.3f/%.3f ms\n",
		t.name, len(t.d), float64(t.rows)/float64(max(len(t.d), 1)), q(t.d, 0.5), q(t.d, 0.95), q(t.first, 0.5),
		q(t.cpu, 0), q(t.cpu, 0.5), q(t.cpu, 1))
}

// query parses, plans and runs one statement through the planner, as the
// REPL does, without rendering; it returns the time, the time to the
// first row and the rows.
func query(ctx context.Context, ix *index.Index, cfg *normalform.Config, src string) (time.Duration, time.Duration, int, error) {
	c0 := cputime.Process()
	defer func() { lastCPU = cputime.Process() - c0 }()
	start := time.Now()
	st, err := lang.ParseOne("q", src)
	if err != nil {
		return 0, 0, 0, err
	}
	q, err := (&planner.Planner{Cfg: cfg}).Build(st)
	if err != nil {
		return 0, 0, 0, err
	}
	rows := 0
	var first time.Duration
	err = (&planner.Executor{Src: ix, Cfg: cfg, MaxRows: -1, Timeout: -1, LendRows: true}).Run(ctx, q, func(planner.Row) error {
		if rows == 0 {
			first = time.Since(start)
		}
		rows++
		return nil
	})
	total := time.Since(start)
	if rows == 0 {
		first = total
	}
	return total, first, rows, err
}

// lastCPU is the process CPU time of the last query.
var lastCPU time.Duration

func measure(ctx context.Context, ix *index.Index, seed int64, k int) error {
	cfg := normalform.DefaultConfig()
	recs, err := sample(ctx, ix, seed+1, k)
	if err != nil {
		return err
	}
	fmt.Printf("queries: %d random transactions as keys; parse, plan and execute through planner.Executor, rows counted (lent, as JSON lines and CSV take them), not rendered\n", len(recs))
	kinds := []struct {
		name string
		q    func(r *index.Record) string
	}{
		{"hash: find where exact = H", func(r *index.Record) string { return "find where exact = " + r.Hashes.Exact.Hex() }},
		{"tx: show TX", func(r *index.Record) string { return "show " + r.Hash.Hex() }},
		{"bot: find where bot = B limit 20", func(r *index.Record) string {
			return fmt.Sprintf("find where bot = %s limit 20", normalform.AddrKey(r.Recipient))
		}},
		{"block: find where block between N and N", func(r *index.Record) string {
			return fmt.Sprintf("find where block between %d and %d", r.Loc.Block, r.Loc.Block)
		}},
		{"shape: find where shape = H limit 20", func(r *index.Record) string {
			return "find where shape = " + r.Hashes.Shape.Hex() + " limit 20"
		}},
	}
	for _, kd := range kinds {
		t := &timing{name: kd.name}
		for _, r := range recs {
			d, first, rows, err := query(ctx, ix, cfg, kd.q(r))
			if err != nil {
				return fmt.Errorf("%s: %w", kd.q(r), err)
			}
			t.d, t.first, t.rows, t.cpu = append(t.d, d), append(t.first, first), t.rows+rows, append(t.cpu, lastCPU)
		}
		t.report()
	}
	// Whole answers: a bot's every transaction (a random transaction's
	// bot is a busy one: the workload's bots are skewed), a block range.
	whole := &timing{name: "bot: find where bot = B (all rows)"}
	for _, r := range recs[:min(len(recs), 20)] {
		d, first, rows, err := query(ctx, ix, cfg, fmt.Sprintf("find where bot = %s", normalform.AddrKey(r.Recipient)))
		if err != nil {
			return err
		}
		whole.d, whole.first, whole.rows, whole.cpu = append(whole.d, d), append(whole.first, first), whole.rows+rows, append(whole.cpu, lastCPU)
	}
	whole.report()
	for _, src := range []string{"find where pools >= 3 and hops >= 4", "find where pools >= 3 and hops >= 4 limit 100", "count by family"} {
		t := &timing{name: src}
		for range 5 {
			d, first, rows, err := query(ctx, ix, cfg, src)
			if err != nil {
				return fmt.Errorf("%s: %w", src, err)
			}
			t.d, t.first, t.rows, t.cpu = append(t.d, d), append(t.first, first), t.rows+rows, append(t.cpu, lastCPU)
		}
		t.report()
	}
	return nil
}
