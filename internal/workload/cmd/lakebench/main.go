// Command lakebench is issue 20's measurement: the SYNTHETIC workload
// (package workload) written as a Parquet lake (package lake) by two
// independent shard writers, separate OS processes with no coordinator,
// and as a Badger index (index/ingest, as cmd/scale builds it), then the
// same statements run on embedded DuckDB over the lake (planner/sqlgen)
// and through the planner over Badger, interleaved, in one run.
//
//	go run -tags duckdb ./internal/workload/cmd/lakebench --n 100000 --dir /tmp/flowq-lakebench
//
// The queries need DuckDB: built without the duckdb tag the command says
// so and stops before it writes anything.
//
// A shard writer is this same executable started again with
// LAKEBENCH_WORKER=1 in its environment: it runs the generator itself
// (every writer generates every block, as the workload is one random
// stream, and analyses only the blocks of its ranges), writes each range
// as soon as its last block is generated (lake.WriteRange: a temporary
// file, synced and renamed), and prints one JSON line of what it did.
// CPU figures are getrusage's (user+system, every thread): a writer's
// from its process state, the queries' from this process.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/index/lake"
	"github.com/flowq/flowq/internal/cputime"
	"github.com/flowq/flowq/internal/workload"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/planner"
	"github.com/flowq/flowq/repl/gcfloor"
)

// workerEnv marks a shard writer process.
const workerEnv = "LAKEBENCH_WORKER"

func main() {
	gcfloor.Start() // as flowq runs (cmd/flowq): the figures are the product's
	if os.Getenv(workerEnv) == "1" {
		os.Exit(workerMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(benchMain(os.Args[1:], os.Stdout, os.Stderr))
}

// genFlags are the workload's flags, the same in the bench and its writers.
type genFlags struct {
	n         int
	seed      int64
	blockTxs  int
	rangeSize uint64
	scenarios string
}

func (g *genFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&g.n, "n", 100000, "synthetic transactions (rounded up to whole blocks)")
	fs.Int64Var(&g.seed, "seed", 1, "workload seed")
	fs.IntVar(&g.blockTxs, "block-txs", 100, "transactions per synthetic block")
	fs.Uint64Var(&g.rangeSize, "range-size", 100, "blocks per lake range file (100 blocks: 10,000 transactions a file at 100 a block)")
	fs.StringVar(&g.scenarios, "scenarios", "examples/scenarios/geth", "directory of scenario bundles")
}

func (g *genFlags) args() []string {
	return []string{"--n", fmt.Sprint(g.n), "--seed", fmt.Sprint(g.seed), "--block-txs", fmt.Sprint(g.blockTxs),
		"--range-size", fmt.Sprint(g.rangeSize), "--scenarios", g.scenarios}
}

func (g *genFlags) check() error {
	switch {
	case g.n <= 0:
		return fmt.Errorf("--n %d: want at least one transaction", g.n)
	case g.blockTxs <= 0:
		return fmt.Errorf("--block-txs %d: want at least one", g.blockTxs)
	case g.rangeSize == 0:
		return fmt.Errorf("--range-size 0: want at least one block")
	}
	return nil
}

func (g *genFlags) generator() (*workload.Generator, error) {
	sc, err := workload.LoadScenarios(g.scenarios)
	if err != nil {
		return nil, err
	}
	return workload.New(sc, workload.Options{Seed: g.seed, BlockTxs: g.blockTxs})
}

// blocks is the number of blocks of n transactions.
func (g *genFlags) blocks() int { return (g.n + g.blockTxs - 1) / g.blockTxs }

// workerReport is a shard writer's JSON line.
type workerReport struct {
	Shard    string  `json:"shard"`
	Rows     int     `json:"rows"`
	Files    int     `json:"files"`
	Failed   int     `json:"failed"`
	Outside  int     `json:"outside"`
	GenSec   float64 `json:"gen_sec"`   // wall time in the generator (this process generates every block)
	GenCPU   float64 `json:"gen_cpu"`   // the generating thread's CPU time in it
	WallSec  float64 `json:"wall_sec"`  // the writer's whole run
	CPUSec   float64 `json:"cpu_sec"`   // its own getrusage, user+system
	MaxRSSKB int64   `json:"maxrss_kb"` // peak resident set
}

// workerMain writes one shard's ranges: lakebench's writer process.
func workerMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lakebench worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var g genFlags
	g.register(fs)
	dir := fs.String("lake", "", "the lake's directory")
	shardText := fs.String("shard", "", "i/n: the ranges this writer writes")
	workers := fs.Int("workers", 0, "decoding and analysing goroutines (0: all cores)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	shard, err := lake.ParseShard(*shardText)
	if err == nil {
		err = g.check()
	}
	if err == nil && *dir == "" {
		err = errors.New("--lake DIR is required")
	}
	if err != nil {
		fmt.Fprintln(stderr, "lakebench worker:", err)
		return 2
	}
	rep, err := writeShard(context.Background(), &g, *dir, shard, *workers)
	if err != nil {
		fmt.Fprintf(stderr, "lakebench worker %s: %v\n", *shardText, err)
		return 1
	}
	rep.Shard = *shardText
	json.NewEncoder(stdout).Encode(rep)
	return 0
}

// writeShard generates the workload and writes the shard's ranges, each
// as soon as its blocks are all generated and analysed.
func writeShard(ctx context.Context, g *genFlags, dir string, shard lake.Shard, workers int) (workerReport, error) {
	var rep workerReport
	start, c0 := time.Now(), cputime.Process()
	gen, err := g.generator()
	if err != nil {
		return rep, err
	}
	l := lake.Layout{Dir: dir, Chain: "mainnet", RangeSize: g.rangeSize}
	if err := l.Check(); err != nil {
		return rep, err
	}
	var sum lake.Summary
	var failures []string
	opt := lake.IngestOptions{Workers: workers, Shard: shard, OnFailure: func(f lake.Failure) {
		if len(failures) < 5 {
			failures = append(failures, f.String())
		}
	}}
	// Blocks are analysed ten at a time (a range's bundles, 29 KB a
	// transaction of JSON, are not all held at once) and a range's rows
	// are written when the generator has moved past it.
	const analyseBlocks = 10
	var srcs []lake.Source
	pending := map[lake.Range][]lake.Row{}
	analyse := func() error {
		if len(srcs) == 0 {
			return nil
		}
		rows, err := lake.Analyse(ctx, l, srcs, opt, &sum)
		if err != nil {
			return err
		}
		srcs = srcs[:0]
		for r, rs := range rows {
			pending[r] = append(pending[r], rs...)
		}
		return nil
	}
	write := func() error {
		if err := analyse(); err != nil {
			return err
		}
		err := lake.WriteRows(ctx, l, pending, opt.Write, &sum)
		clear(pending)
		return err
	}
	var cur lake.Range
	var gt genTimer
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i := 0; i < g.blocks(); i++ {
		blk := gt.block(gen)
		r := l.RangeOf(blk.Number)
		if r != cur {
			if err := write(); err != nil {
				return rep, err
			}
			cur = r
		}
		if !shard.Has(l, r) {
			continue
		}
		b := blk.Bundle
		srcs = append(srcs, lake.Source{Name: fmt.Sprintf("synthetic:seed%d:block:%d", g.seed, blk.Number),
			Load: func(int) ([]byte, error) { return b, nil }})
		if len(srcs) == analyseBlocks {
			if err := analyse(); err != nil {
				return rep, err
			}
		}
	}
	if err := write(); err != nil {
		return rep, err
	}
	if sum.Failed > 0 {
		return rep, fmt.Errorf("%d transactions or inputs failed: %s", sum.Failed, strings.Join(failures, "; "))
	}
	rep.Rows, rep.Files, rep.Failed, rep.Outside = sum.Rows, len(sum.Files), sum.Failed, sum.Outside
	rep.GenSec, rep.GenCPU = gt.wall.Seconds(), gt.cpu.Seconds()
	rep.WallSec = time.Since(start).Seconds()
	rep.CPUSec = (cputime.Process() - c0).Seconds()
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		rep.MaxRSSKB = ru.Maxrss
	}
	return rep, nil
}

// genTimer times the generator: wall, and the CPU time of the calling
// thread (getrusage RUSAGE_THREAD; the caller locks its goroutine to
// its OS thread, so that thread runs nothing else meanwhile).
type genTimer struct{ wall, cpu time.Duration }

func (t *genTimer) block(gen *workload.Generator) workload.Block {
	t0, c0 := time.Now(), threadCPU()
	blk := gen.Block()
	t.wall += time.Since(t0)
	t.cpu += threadCPU() - c0
	return blk
}

// threadCPU is the calling thread's CPU time (user and system).
func threadCPU() time.Duration {
	const rusageThread = 1 // RUSAGE_THREAD (Linux)
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// shardRun is one writer process as the bench saw it.
type shardRun struct {
	rep    workerReport
	cpu    time.Duration // the process's rusage, from its state
	maxRSS int64         // kB
}

// startWorkers starts n writer processes of the lake at dir and waits for
// them all; any failure is an error naming the writer.
func startWorkers(g *genFlags, dir string, n, workers int, stderr io.Writer) ([]shardRun, time.Duration, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, 0, err
	}
	type proc struct {
		cmd *exec.Cmd
		out strings.Builder
	}
	procs := make([]*proc, n)
	start := time.Now()
	for i := range procs {
		p := &proc{}
		args := append(g.args(), "--lake", dir, "--shard", fmt.Sprintf("%d/%d", i, n), "--workers", fmt.Sprint(workers))
		p.cmd = exec.Command(exe, args...)
		p.cmd.Env = append(os.Environ(), workerEnv+"=1")
		p.cmd.Stdout, p.cmd.Stderr = &p.out, stderr
		if err := p.cmd.Start(); err != nil {
			for _, q := range procs[:i] {
				q.cmd.Process.Kill()
				q.cmd.Wait()
			}
			return nil, 0, fmt.Errorf("starting writer %d/%d: %w", i, n, err)
		}
		procs[i] = p
	}
	var errs []error
	runs := make([]shardRun, n)
	for i, p := range procs {
		if err := p.cmd.Wait(); err != nil {
			errs = append(errs, fmt.Errorf("writer %d/%d: %w", i, n, err))
			continue
		}
		if err := json.Unmarshal([]byte(p.out.String()), &runs[i].rep); err != nil {
			errs = append(errs, fmt.Errorf("writer %d/%d: its report %q: %w", i, n, p.out.String(), err))
			continue
		}
		st := p.cmd.ProcessState
		runs[i].cpu = st.UserTime() + st.SystemTime()
		if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
			runs[i].maxRSS = ru.Maxrss
		}
	}
	return runs, time.Since(start), errors.Join(errs...)
}

// engine runs a statement and counts its rows: the lake's (DuckDB) or
// Badger's (the planner). When key is not nil it is given each row's
// identity: a transaction's hash, or a count's group and figure
// ("KEY=N").
type engine interface {
	name() string
	run(ctx context.Context, src string, key func(string)) (int, error)
}

// badgerEngine runs statements through the planner over the index, as
// the REPL does, without rendering.
type badgerEngine struct {
	ix  *index.Index
	cfg *normalform.Config
}

func (b *badgerEngine) name() string { return "badger" }

func (b *badgerEngine) run(ctx context.Context, src string, key func(string)) (int, error) {
	st, err := lang.ParseOne("q", src)
	if err != nil {
		return 0, err
	}
	q, err := (&planner.Planner{Cfg: b.cfg}).Build(st)
	if err != nil {
		return 0, err
	}
	rows := 0
	err = (&planner.Executor{Src: b.ix, Cfg: b.cfg, MaxRows: -1, Timeout: -1, LendRows: true}).Run(ctx, q, func(r planner.Row) error {
		rows++
		if key != nil && len(r) >= 2 {
			if q.Kind == lang.StmtCount {
				key(r[0].Value + "=" + r[1].Value)
			} else {
				key(r[0].Value)
			}
		}
		return nil
	})
	return rows, err
}

// measurement is one statement's rounds on one engine.
type measurement struct {
	cpu, wall []time.Duration
	rows      int
}

func (m *measurement) add(cpu, wall time.Duration) {
	m.cpu, m.wall = append(m.cpu, cpu), append(m.wall, wall)
}

// mmm is min/median/max in ms.
func mmm(ds []time.Duration) string {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d.Microseconds())/1000) }
	return ms(s[0]) + " / " + ms(s[len(s)/2]) + " / " + ms(s[len(s)-1])
}

type opts struct {
	gen      genFlags
	dir      string
	shards   int
	workers  int
	rounds   int
	keepDirs bool
}

func benchMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("lakebench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o opts
	o.gen.register(fs)
	fs.StringVar(&o.dir, "dir", "", "working directory (required): DIR/lake and DIR/badger, replaced")
	fs.IntVar(&o.shards, "shards", 2, "shard writer processes, run in parallel")
	fs.IntVar(&o.workers, "workers", 0, "decoding and analysing goroutines of each writer and of the Badger ingest (0: all cores)")
	fs.IntVar(&o.rounds, "rounds", 5, "rounds of each statement on each engine (interleaved)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	err := o.gen.check()
	switch {
	case err != nil:
	case o.dir == "":
		err = errors.New("--dir DIR is required")
	case o.shards <= 0:
		err = fmt.Errorf("--shards %d: want at least one", o.shards)
	case o.rounds <= 0:
		err = fmt.Errorf("--rounds %d: want at least one", o.rounds)
	case fs.NArg() > 0:
		err = fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if err != nil {
		fmt.Fprintln(stderr, "lakebench:", err)
		return 2
	}
	if err := bench(context.Background(), &o, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "lakebench:", err)
		return 1
	}
	return 0
}

// statement is one measured statement, by name.
type statement struct {
	name, src string
}

func bench(ctx context.Context, o *opts, stdout, stderr io.Writer) error {
	if err := checkLakeEngine(); err != nil {
		return err
	}
	lakeDir, badgerDir := filepath.Join(o.dir, "lake"), filepath.Join(o.dir, "badger")
	for _, d := range []string{lakeDir, badgerDir} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(lakeDir, 0o755); err != nil {
		return err
	}
	gen, err := o.gen.generator() // fails early on a bad --scenarios
	if err != nil {
		return err
	}
	n := o.gen.blocks() * o.gen.blockTxs
	fmt.Fprintf(stdout, "machine: %d CPUs, %s; load: %s\n", runtime.NumCPU(), runtime.Version(), cputime.Load())
	fmt.Fprintf(stdout, "workload: SYNTHETIC, seed %d, %d transactions in %d blocks of %d, %d scenario shapes; lake ranges of %d blocks\n",
		o.gen.seed, n, o.gen.blocks(), o.gen.blockTxs, len(gen.Shapes()), o.gen.rangeSize)

	// 1. The lake: shard writers in parallel.
	runs, lakeWall, err := startWorkers(&o.gen, lakeDir, o.shards, o.workers, stderr)
	if err != nil {
		return err
	}
	var lakeRows, lakeFiles int
	var lakeCPU, lakeGenCPU time.Duration
	for _, r := range runs {
		lakeRows += r.rep.Rows
		lakeFiles += r.rep.Files
		lakeCPU += r.cpu
		gen := time.Duration(r.rep.GenCPU * float64(time.Second))
		lakeGenCPU += gen
		fmt.Fprintf(stdout, "lake writer %s: %d rows in %d files, %.1f s wall, CPU %.1f s (%.0f µs/tx of its rows; generating every block %.1f s of it, %.1f s wall), peak RSS %d MB\n",
			r.rep.Shard, r.rep.Rows, r.rep.Files, r.rep.WallSec, r.cpu.Seconds(),
			float64(r.cpu.Microseconds())/float64(max(r.rep.Rows, 1)), gen.Seconds(), r.rep.GenSec, r.maxRSS>>10)
	}
	files, err := lake.Files(lakeDir)
	if err != nil {
		return err
	}
	var lakeBytes int64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return err
		}
		lakeBytes += st.Size()
	}
	if len(files) != lakeFiles {
		return fmt.Errorf("the writers reported %d files, the lake holds %d", lakeFiles, len(files))
	}
	if lakeRows != n {
		return fmt.Errorf("the writers wrote %d rows of %d transactions", lakeRows, n)
	}
	lakeLoad := cputime.Load()
	fmt.Fprintf(stdout, "lake: %d rows, %d files, %d bytes (%.0f B/tx) in %.1f s wall: %.0f tx/s; CPU %.1f s, %.0f µs/tx (%.0f without the generator); load %s\n",
		lakeRows, len(files), lakeBytes, float64(lakeBytes)/float64(n), lakeWall.Seconds(), float64(n)/lakeWall.Seconds(),
		lakeCPU.Seconds(), float64(lakeCPU.Microseconds())/float64(n), float64((lakeCPU-lakeGenCPU).Microseconds())/float64(n), lakeLoad)

	// 2. Badger, from the same generator.
	ix, err := index.Open(badgerDir)
	if err != nil {
		return err
	}
	defer ix.Close()
	start, c0 := time.Now(), cputime.Process()
	g := ingest.NewIngester(ctx, ix, ingest.Options{Workers: o.workers})
	var gt genTimer
	runtime.LockOSThread()
	for i := 0; i < o.gen.blocks(); i++ {
		blk := gt.block(gen)
		if err := g.Add(ingest.BundleInput(fmt.Sprintf("synthetic:seed%d:block:%d", o.gen.seed, blk.Number), blk.Bundle)); err != nil {
			return err
		}
	}
	runtime.UnlockOSThread()
	sum, err := g.Close()
	if err != nil {
		return err
	}
	badgerWall, badgerCPU := time.Since(start), cputime.Process()-c0
	if sum.Stored != n || sum.Failed != 0 {
		return fmt.Errorf("badger ingest: %s (want %d stored)", sum, n)
	}
	st, err := ix.Stats(ctx)
	if err != nil {
		return err
	}
	var kv, findings int64
	for k, s := range st {
		kv += s.KeyBytes + s.ValueBytes
		if k == index.KindBlock {
			findings += s.KeyBytes + s.ValueBytes
		}
	}
	disk, _ := dirSize(badgerDir)
	badgerLoad := cputime.Load()
	fmt.Fprintf(stdout, "badger: %d transactions in %.1f s wall: %.0f tx/s; CPU %.1f s, %.0f µs/tx (%.0f without the generator); keys+values %.0f B/tx (%.0f of them block findings), on disk %.0f B/tx; load %s\n",
		n, badgerWall.Seconds(), float64(n)/badgerWall.Seconds(), badgerCPU.Seconds(), float64(badgerCPU.Microseconds())/float64(n),
		float64((badgerCPU-gt.cpu).Microseconds())/float64(n),
		float64(kv)/float64(n), float64(findings)/float64(n), float64(disk)/float64(n), badgerLoad)

	// 3. The statements, interleaved.
	ref, err := pick(ctx, ix, o.gen.seed)
	if err != nil {
		return err
	}
	stmts := []statement{
		{"count by family", "count by family"},
		{"match TX at shape", "match " + ref.Hash.Hex() + " at shape"},
		{"a bot's transactions", "find where bot = " + normalform.AddrKey(ref.Recipient)},
		{"a block range (10 blocks)", fmt.Sprintf("find where block between %d and %d", ref.Loc.Block, ref.Loc.Block+9)},
		{"a filtered scan", "find where pools >= 3 and hops >= 4"},
	}
	lk, err := openLake(lakeDir)
	if err != nil {
		return err
	}
	defer lk.close()
	engines := []engine{lk, &badgerEngine{ix: ix, cfg: normalform.DefaultConfig()}, lk.sqlOnlyEngine()}
	res := make([][]measurement, len(stmts))
	for i := range res {
		res[i] = make([]measurement, len(engines))
	}
	loads := []string{cputime.Load()}
	for round := 0; round < o.rounds; round++ {
		for i, s := range stmts {
			for j, e := range engines {
				c0, t0 := cputime.Process(), time.Now()
				rows, err := e.run(ctx, s.src, nil)
				wall, cpu := time.Since(t0), cputime.Process()-c0
				if err != nil {
					return fmt.Errorf("%s on %s: %w", s.src, e.name(), err)
				}
				m := &res[i][j]
				if round > 0 && rows != m.rows {
					return fmt.Errorf("%s on %s: %d rows, then %d", s.src, e.name(), m.rows, rows)
				}
				m.rows = rows
				m.add(cpu, wall)
			}
			if err := sameRows(s, res[i], engines); err != nil {
				return err
			}
		}
	}
	loads = append(loads, cputime.Load())
	// The answers themselves, once more, not timed: the same transactions
	// (or groups and counts) on both engines.
	for _, s := range stmts {
		if err := sameKeys(ctx, s, engines[0], engines[1]); err != nil {
			return err
		}
	}

	// 4. The table.
	fmt.Fprintf(stdout, "\n%d transactions (SYNTHETIC, seed %d), %d shard writers in parallel; load before/after the queries %s / %s\n\n",
		n, o.gen.seed, o.shards, loads[0], loads[1])
	fmt.Fprintln(stdout, "| | lake (Parquet, DuckDB) | Badger (planner) |")
	fmt.Fprintln(stdout, "|---|---|---|")
	fmt.Fprintf(stdout, "| write: tx/s (wall) | %.0f (%d writers) | %.0f |\n", float64(n)/lakeWall.Seconds(), o.shards, float64(n)/badgerWall.Seconds())
	perTx := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n) }
	fmt.Fprintf(stdout, "| write: CPU µs/tx, all processes | %.0f (%.0f without the generator, which each writer runs over every block) | %.0f (%.0f without the generator) |\n",
		perTx(lakeCPU), perTx(lakeCPU-lakeGenCPU), perTx(badgerCPU), perTx(badgerCPU-gt.cpu))
	fmt.Fprintf(stdout, "| bytes/tx | %.0f (Parquet files) | %.0f keys+values (%.0f without block findings), %.0f on disk |\n",
		float64(lakeBytes)/float64(n), float64(kv)/float64(n), float64(kv-findings)/float64(n), float64(disk)/float64(n))
	fmt.Fprintf(stdout, "| files | %d | |\n", len(files))
	fmt.Fprintf(stdout, "\n%d rounds, each statement on the lake, on Badger, then on the lake counting the SQL's rows only; rows are the same on all (checked: their numbers each round, the transactions or groups and counts once more); ms, min / median / max\n\n", o.rounds)
	fmt.Fprintln(stdout, "| statement | rows | lake CPU | lake wall | Badger CPU | Badger wall | lake SQL only: CPU | wall |")
	fmt.Fprintln(stdout, "|---|---:|---|---|---|---|---|---|")
	for i, s := range stmts {
		l, b, q := &res[i][0], &res[i][1], &res[i][2]
		fmt.Fprintf(stdout, "| `%s` (%s) | %d | %s | %s | %s | %s | %s | %s |\n", short(s.src), s.name, l.rows,
			mmm(l.cpu), mmm(l.wall), mmm(b.cpu), mmm(b.wall), mmm(q.cpu), mmm(q.wall))
	}
	return nil
}

// sameRows fails when the engines gave a statement different numbers of
// rows.
func sameRows(s statement, res []measurement, engines []engine) error {
	for j := 1; j < len(engines); j++ {
		if a, b := res[0].rows, res[j].rows; a != b {
			return fmt.Errorf("DIFFERENT ANSWERS: %s: %d rows on %s, %d on %s", s.src, a, engines[0].name(), b, engines[j].name())
		}
	}
	return nil
}

// sameKeys fails when two engines answer a statement with different
// transactions (or groups, or counts), naming one on one side only.
func sameKeys(ctx context.Context, s statement, a, b engine) error {
	keys := func(e engine) (map[string]int, error) {
		m := map[string]int{}
		_, err := e.run(ctx, s.src, func(k string) { m[k]++ })
		if err != nil {
			return nil, fmt.Errorf("%s on %s: %w", s.src, e.name(), err)
		}
		return m, nil
	}
	ka, err := keys(a)
	if err != nil {
		return err
	}
	kb, err := keys(b)
	if err != nil {
		return err
	}
	onlyIn := func(x, y map[string]int) []string {
		var out []string
		for k, n := range x {
			if y[k] != n {
				out = append(out, k)
			}
		}
		sort.Strings(out)
		return out
	}
	if d := onlyIn(ka, kb); len(d) > 0 {
		return fmt.Errorf("DIFFERENT ANSWERS: %s: %d rows of %s are not so on %s, the first %s", s.src, len(d), a.name(), b.name(), d[0])
	}
	if d := onlyIn(kb, ka); len(d) > 0 {
		return fmt.Errorf("DIFFERENT ANSWERS: %s: %d rows of %s are not so on %s, the first %s", s.src, len(d), b.name(), a.name(), d[0])
	}
	return nil
}

// short abbreviates the hashes and addresses of a statement.
func short(src string) string {
	f := strings.Fields(src)
	for i, w := range f {
		if strings.HasPrefix(w, "0x") && len(w) > 14 {
			f[i] = w[:8] + "…"
		}
	}
	return strings.Join(f, " ")
}

// pick is a random transaction of the index (its bot is a busy one: the
// workload's bots are skewed).
func pick(ctx context.Context, ix *index.Index, seed int64) (*index.Record, error) {
	var refs []index.Ref
	if err := ix.ByBlocks(ctx, index.AllBlocks, func(r index.Ref) error { refs = append(refs, r); return nil }); err != nil {
		return nil, err
	}
	if len(refs) == 0 {
		return nil, errors.New("empty index")
	}
	r := refs[rand.New(rand.NewSource(seed+1)).Intn(len(refs))]
	return ix.Get(r.Hash)
}

// dirSize is the allocated size of the files under dir.
func dirSize(dir string) (int64, error) {
	var n int64
	err := filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			} else {
				n += fi.Size()
			}
		}
		return err
	})
	return n, err
}
