package normalform_test

import (
	"fmt"
	"math"
	"sort"
	"testing"
	"time"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/gen"
)

// growthSizes are the transfer counts of the growth curve (issue 8).
var growthSizes = []int{100, 200, 500, 1000, 2000, 5000}

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

// BenchmarkGrowthSlope measures, per shape, the median analysis time of
// each growth size (over growthRuns runs) and reports the least-squares
// slope of log(time) against log(transfers) from 100 to 5,000 transfers
// ("slope": 1 is linear, 2 quadratic), and the time at 2,000 transfers.
//
//	go test ./normalform -run '^$' -bench GrowthSlope -benchtime 1x -v
func BenchmarkGrowthSlope(b *testing.B) {
	const growthRuns = 7
	cfg := normalform.DefaultConfig()
	for _, sh := range gen.Shapes {
		b.Run(sh.Name, func(b *testing.B) {
			var xs, ys []float64
			var at2000 float64
			for i := 0; i < b.N; i++ {
				xs, ys = xs[:0], ys[:0]
				for _, n := range growthSizes {
					tx := sh.Build(n, 1)
					runs := make([]time.Duration, growthRuns)
					for r := range runs {
						start := time.Now()
						if _, err := normalform.Analyze(tx, cfg); err != nil {
							b.Fatal(err)
						}
						runs[r] = time.Since(start)
					}
					sort.Slice(runs, func(i, j int) bool { return runs[i] < runs[j] })
					med := runs[len(runs)/2]
					if n == 2000 {
						at2000 = float64(med.Nanoseconds())
					}
					b.Logf("%s n=%d transfers=%d median=%v", sh.Name, n, len(tx.Transfers), med)
					xs = append(xs, math.Log(float64(len(tx.Transfers))))
					ys = append(ys, math.Log(float64(med.Nanoseconds())))
				}
			}
			b.ReportMetric(slope(xs, ys), "slope")
			b.ReportMetric(at2000/1e6, "ms@2000")
		})
	}
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
