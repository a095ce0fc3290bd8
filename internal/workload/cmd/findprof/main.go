// Command findprof runs one query against an index several times, with the
// process CPU of each run, and optionally a CPU profile of the runs only:
// a profiler's view of one query on a large index (scale's queries are many).
//
//	findprof --index DIR --n 10 --cpuprofile /tmp/find.prof 'find where pools >= 3 and hops >= 4'
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/internal/cputime"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/planner"
)

func main() {
	dir := flag.String("index", "", "index directory (required)")
	n := flag.Int("n", 5, "runs")
	prof := flag.String("cpuprofile", "", "write a CPU profile of the runs here")
	memprof := flag.String("memprofile", "", "write an allocation profile of the runs here")
	flag.Parse()
	if *dir == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: findprof --index DIR [--n N] [--cpuprofile FILE] 'QUERY'")
		os.Exit(2)
	}
	if *memprof != "" {
		runtime.MemProfileRate = 4096
	}
	err := run(*dir, *n, *prof, flag.Arg(0))
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

func run(dir string, n int, prof, src string) error {
	ix, err := index.OpenReadOnly(dir)
	if err != nil {
		return err
	}
	defer ix.Close()
	cfg := normalform.DefaultConfig()
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
	fmt.Printf("load: %s\n", cputime.Load())
	var cpus []time.Duration
	for range n {
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
		err = (&planner.Executor{Src: ix, Cfg: cfg, MaxRows: -1, Timeout: -1}).Run(context.Background(), q, func(planner.Row) error { rows++; return nil })
		if err != nil {
			return err
		}
		cpu := cputime.Process() - c0
		cpus = append(cpus, cpu)
		fmt.Printf("rows %d  wall %.1f ms  CPU %.1f ms\n", rows, float64(time.Since(start).Microseconds())/1000, float64(cpu.Microseconds())/1000)
	}
	sort.Slice(cpus, func(i, j int) bool { return cpus[i] < cpus[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	fmt.Printf("CPU min/median/max %.1f/%.1f/%.1f ms  load: %s\n", ms(cpus[0]), ms(cpus[len(cpus)/2]), ms(cpus[len(cpus)-1]), cputime.Load())
	return nil
}
