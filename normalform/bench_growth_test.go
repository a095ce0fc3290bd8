package normalform_test

import (
	"fmt"
	"math"
	"runtime/metrics"
	"sort"
	"testing"
	"time"

	"github.com/flowq/flowq/internal/cputime"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
)

// growthSizes are the transfer counts of the growth curve (issue 8).
var growthSizes = []int{100, 200, 500, 1000, 2000, 5000, 10000, 20000}

// BenchmarkGrowth analyses (rewrite, classify, profit) one generated
// transaction of each size and shape per iteration: the growth curve.
// ns/op is the time per transaction; ns/transfer divides it by the size.
//
//	go test ./normalform -run '^$' -bench Growth -benchtime 20x
func BenchmarkGrowth(b *testing.B) {
	cfg := normalform.DefaultConfig()
	for _, sh := range gen.Shapes {
		for _, n := range growthSizes {
			tx := sh.Build(n, 1)
			b.Run(fmt.Sprintf("%s/n=%d", sh.Name, n), func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, err := normalform.Analyze(tx, cfg); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(tx.Transfers)), "ns/transfer")
				b.ReportMetric(float64(len(tx.Transfers)), "transfers")
			})
		}
	}
}

// BenchmarkGrowthRewrite is BenchmarkGrowth for the rewriting kernel alone
// (normalform.Rewrite), one size and shape per sub-benchmark: its allocs/op
// are the kernel's, and a CPU profile of one sub-benchmark is the kernel's
// profile at that size.
//
//	go test ./normalform -run '^$' -bench '^BenchmarkGrowthRewrite$' -benchtime 20x -benchmem
func BenchmarkGrowthRewrite(b *testing.B) {
	cfg := normalform.DefaultConfig()
	for _, sh := range gen.Shapes {
		for _, n := range slopeSizes {
			tx := sh.Build(n, 1)
			b.Run(fmt.Sprintf("%s/n=%d", sh.Name, n), func(b *testing.B) {
				b.ReportAllocs()
				c0 := cputime.Process()
				for i := 0; i < b.N; i++ {
					if err := normalform.Rewrite(tx, cfg); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64((cputime.Process()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
			})
		}
	}
}

// slopeSizes are the transfer counts of the slope measurement (issue 22):
// the targets are stated from 500 to 20,000 transfers.
var slopeSizes = []int{500, 1000, 2000, 5000, 10000, 20000}

// BenchmarkGrowthSlope measures, per shape, the analysis time (Analyze:
// rewrite, classify, profit) of each slope size over growthRuns runs, as
// wall time and as the process's CPU time (every thread: the garbage
// collector's workers too), and logs min/median/max of each. It reports the
// least-squares slope of log(median time) against log(transfers) from 500
// to 20,000 ("slope": 1 is linear, 2 quadratic; "cpu-slope" the same on CPU
// time) and the median times at 2,000 and 20,000 transfers. The sizes of a
// shape are taken in turn, round after round, so that a change in the
// machine's load falls on all of them alike. Garbage collection runs as it
// does by default.
//
//	go test ./normalform -run '^$' -bench GrowthSlope -benchtime 1x -v
func BenchmarkGrowthSlope(b *testing.B) {
	growthSlope(b, func(tx *normalform.Tx, cfg *normalform.Config) error {
		_, err := normalform.Analyze(tx, cfg)
		return err
	}, false)
}

// BenchmarkGrowthKernel is BenchmarkGrowthSlope for the rewriting kernel
// alone (normalform.Rewrite: the structural fixpoint, annotation and
// connection, R16; no detection, classification or profit).
//
//	go test ./normalform -run '^$' -bench GrowthKernel -benchtime 1x -v
func BenchmarkGrowthKernel(b *testing.B) {
	growthSlope(b, normalform.Rewrite, false)
}

// BenchmarkGrowthKernelBatched is BenchmarkGrowthKernel with every
// measurement made over the same number of transfers: a size of n
// transfers is run 20,000/n times in a row and the time per run is the
// batch's divided by the runs. Garbage collection runs as it does by
// default, but a single run of 500 transfers allocates too little to
// start a collection cycle most of the time (its median then carries no
// collection at all, and its maximum a whole one), while every run of
// 20,000 does: one run per measurement charges the collector to the large
// sizes only, and bends the slope up. A batch charges each size the
// collection its allocation causes.
//
//	go test ./normalform -run '^$' -bench GrowthKernelBatched -benchtime 1x -v
func BenchmarkGrowthKernelBatched(b *testing.B) {
	growthSlope(b, normalform.Rewrite, true)
}

// BenchmarkGrowthSlopeBatched is BenchmarkGrowthSlope (Analyze) measured
// in batches, as BenchmarkGrowthKernelBatched.
func BenchmarkGrowthSlopeBatched(b *testing.B) {
	growthSlope(b, func(tx *normalform.Tx, cfg *normalform.Config) error {
		_, err := normalform.Analyze(tx, cfg)
		return err
	}, true)
}

// growthSlope measures run on each slope size (see BenchmarkGrowthSlope);
// batched, each measurement runs a size 20,000/n times (see
// BenchmarkGrowthKernelBatched).
func growthSlope(b *testing.B, run func(*normalform.Tx, *normalform.Config) error, batched bool) {
	const growthRuns = 7
	cfg := normalform.DefaultConfig()
	for _, sh := range gen.Shapes {
		b.Run(sh.Name, func(b *testing.B) {
			txs := make([]*normalform.Tx, len(slopeSizes))
			for i, n := range slopeSizes {
				txs[i] = sh.Build(n, 1)
			}
			var xs, ys, cs []float64
			var wall2k, wall20k float64
			for it := 0; it < b.N; it++ {
				walls := make([][]time.Duration, len(txs))
				cpus := make([][]time.Duration, len(txs))
				cycles := make([]uint64, len(txs)) // collection cycles begun during each size's runs
				runs := make([]int, len(txs))
				for r := 0; r < growthRuns; r++ {
					for i, tx := range txs {
						reps := 1
						if batched {
							reps = max(1, slopeSizes[len(slopeSizes)-1]/slopeSizes[i])
						}
						g0 := gcCycles()
						c0, w0 := cputime.Process(), time.Now()
						for range reps {
							if err := run(tx, cfg); err != nil {
								b.Fatal(err)
							}
						}
						walls[i] = append(walls[i], time.Since(w0)/time.Duration(reps))
						cpus[i] = append(cpus[i], (cputime.Process()-c0)/time.Duration(reps))
						cycles[i] += gcCycles() - g0
						runs[i] += reps
					}
				}
				xs, ys, cs = xs[:0], ys[:0], cs[:0]
				for i, tx := range txs {
					w, c := sortedDurations(walls[i]), sortedDurations(cpus[i])
					mw, mc := w[len(w)/2], c[len(c)/2]
					switch slopeSizes[i] {
					case 2000:
						wall2k = float64(mw.Nanoseconds())
					case 20000:
						wall20k = float64(mw.Nanoseconds())
					}
					b.Logf("%s n=%d transfers=%d wall min/med/max %v/%v/%v cpu %v/%v/%v gc-cycles/run %.2f", sh.Name, slopeSizes[i], len(tx.Transfers),
						w[0], mw, w[len(w)-1], c[0], mc, c[len(c)-1], float64(cycles[i])/float64(runs[i]))
					xs = append(xs, math.Log(float64(len(tx.Transfers))))
					ys = append(ys, math.Log(float64(mw.Nanoseconds())))
					cs = append(cs, math.Log(float64(max(mc.Nanoseconds(), 1))))
				}
			}
			b.ReportMetric(slope(xs, ys), "slope")
			b.ReportMetric(slope(xs, cs), "cpu-slope")
			b.ReportMetric(wall2k/1e6, "ms@2000")
			b.ReportMetric(wall20k/1e6, "ms@20000")
		})
	}
}

// gcCycles is the number of garbage collection cycles the runtime has
// begun (read without stopping the world).
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

func sortedDurations(d []time.Duration) []time.Duration {
	d = append([]time.Duration(nil), d...)
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d
}

// slope is the least-squares slope of ys against xs.
func slope(xs, ys []float64) float64 {
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(ys))
	var num, den float64
	for i := range xs {
		num += (xs[i] - mx) * (ys[i] - my)
		den += (xs[i] - mx) * (xs[i] - mx)
	}
	return num / den
}
