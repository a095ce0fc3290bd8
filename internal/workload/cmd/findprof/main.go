// Command findprof runs one query against an index several times, with the
// process CPU of each run, and optionally a CPU profile of the runs only:
// a profiler's view of one query on a large index (scale's queries are many).
//
//	findprof --index DIR --n 10 --cpuprofile /tmp/find.prof 'find where pools >= 3 and hops >= 4'
//
// Rows are counted, not rendered. They are lent (planner.Executor.LendRows,
// as flowq's JSON-lines and CSV output take them) unless --rows owned asks
// for each its own, as the table output keeps them; --rows both alternates
// the two in one process, run by run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/internal/cputime"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/planner"
	"github.com/flowq/flowq/repl/gcfloor"
)

func main() {
	gcfloor.Start() // as flowq runs (cmd/flowq): the figures are the product's
	dir := flag.String("index", "", "index directory (required)")
	n := flag.Int("n", 5, "runs")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the runs here")
	memprof := flag.String("memprofile", "", "write an allocation profile of the runs here")
	rowsMode := flag.String("rows", "lent", "lent: the executor lends each row (LendRows); owned: each row its own; both: the two alternating, run by run")
	flag.Parse()
	if *dir == "" || flag.NArg() != 1 || !slices.Contains([]string{"lent", "owned", "both"}, *rowsMode) {
		fmt.Fprintln(os.Stderr, "usage: findprof --index DIR [--n N] [--rows lent|owned|both] [--cpuprofile FILE] 'QUERY'")
		os.Exit(2)
	}
	if *memprof != "" {
		runtime.MemProfileRate = 4096
	}
	modes := []string{*rowsMode}
	if *rowsMode == "both" {
		modes = []string{"lent", "owned"}
	}
	err := run(*dir, *n, *prof, modes, flag.Arg(0))
	if err == nil && *memprof != "" {
		var f *os.File
		if f, err = os.Create(*memprof); err == nil {
			err = pprof.Lookup("allocs").WriteTo(f, 0)
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "findprof:", err)
		os.Exit(1)
	}
}

func run(dir string, n int, prof string, modes []string, src string) error {
	ix, err := index.OpenReadOnly(dir)
	if err != nil {
		return err
	}
	defer ix.Close()
	cfg := normalform.DefaultConfig()
	// the machine's speed beside the runs (cputime.Reference), outside the profile
	fmt.Printf("reference before: %s\n", cputime.Reference(21))
	defer func() { fmt.Printf("reference after: %s\n", cputime.Reference(21)) }()
	if prof != "" {
		f, err := os.Create(prof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	fmt.Printf("load: %s  rows: %s\n", cputime.Load(), strings.Join(modes, ", "))
	cpus := map[string][]time.Duration{}
	walls := map[string][]time.Duration{}
	for range n {
		for _, mode := range modes { // interleaved: each run of each mode beside the others'
			c0, start := cputime.Process(), time.Now()
			st, err := lang.ParseOne("q", src)
			if err != nil {
				return err
			}
			q, err := (&planner.Planner{Cfg: cfg}).Build(st)
			if err != nil {
				return err
			}
			rows := 0
			x := &planner.Executor{Src: ix, Cfg: cfg, MaxRows: -1, Timeout: -1, LendRows: mode == "lent"}
			if err := x.Run(context.Background(), q, func(planner.Row) error { rows++; return nil }); err != nil {
				return err
			}
			cpu, wall := cputime.Process()-c0, time.Since(start)
			cpus[mode] = append(cpus[mode], cpu)
			walls[mode] = append(walls[mode], wall)
			fmt.Printf("%-5s rows %d  wall %.1f ms  CPU %.1f ms\n", mode, rows, ms(wall), ms(cpu))
		}
	}
	for _, mode := range modes {
		fmt.Printf("%-5s CPU min/median/max %s ms  wall %s ms\n", mode, spread(cpus[mode]), spread(walls[mode]))
	}
	fmt.Printf("load: %s\n", cputime.Load())
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// spread is min/median/max.
func spread(ds []time.Duration) string {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	return fmt.Sprintf("%.1f/%.1f/%.1f", ms(ds[0]), ms(ds[len(ds)/2]), ms(ds[len(ds)-1]))
}
