package trace

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"
	"time"

	"github.com/flowq/flowq/internal/cputime"
	"github.com/flowq/flowq/normalform"
)

// validInputs are the input sets of BenchmarkValidRatio: the real mainnet
// block, the fifteen real single-transaction mainnet files beside it, the
// go-ethereum tracer fixtures (about 60% of whose bytes are a "genesis"
// prestate the decoder only validates) and the example scenarios.
func validInputs(b *testing.B) []struct {
	name  string
	files [][]byte
} {
	read := func(pattern string, skip string) [][]byte {
		paths, err := filepath.Glob(pattern)
		if err != nil || len(paths) == 0 {
			b.Fatalf("no files match %s (%v)", pattern, err)
		}
		var out [][]byte
		for _, p := range paths {
			if skip != "" && filepath.Base(p) == skip {
				continue
			}
			data, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			out = append(out, data)
		}
		return out
	}
	return []struct {
		name  string
		files [][]byte
	}{
		{"block11017338", read("testdata/corpus/mev-inspect-rs/res/11017338.data.json", "")},
		{"mainnet-singles", read("testdata/corpus/mev-inspect-rs/res/*.data.json", "11017338.data.json")},
		{"geth-fixtures", read("testdata/corpus/go-ethereum/*/*.json", "")},
		{"scenarios", read("../../examples/scenarios/geth/*.json", "")},
	}
}

// BenchmarkValidRatio compares the whole pipeline (Decode and Analyze:
// trace bytes to verdict) with encoding/json.Valid over the same bytes,
// interleaved in one process: each iteration is one round that times
// Valid and the pipeline over the input set (each repeated until it has
// run at least 20 ms), in alternating order. It reports, over the rounds,
// the minimum, median and maximum of the ratio pipeline / Valid in CPU
// time (getrusage: user + system of the whole process, the garbage
// collector's workers included) and in wall time, and the median CPU
// time of each per pass over the input.
//
//	go test ./normalform/trace -run '^$' -bench ValidRatio -benchtime 15x
func BenchmarkValidRatio(b *testing.B) {
	cfg := normalform.DefaultConfig()
	for _, in := range validInputs(b) {
		b.Run(in.name, func(b *testing.B) {
			valid := func() {
				for _, data := range in.files {
					if !json.Valid(data) {
						b.Fatal("invalid JSON")
					}
				}
			}
			pipe := func() {
				for _, data := range in.files {
					res := Decode(data, Options{Config: cfg})
					if len(res.Errors) != 0 {
						b.Fatal(res.Errors[0])
					}
					for _, tx := range res.Txs {
						if _, err := normalform.Analyze(tx, cfg); err != nil {
							b.Fatal(err)
						}
					}
				}
			}
			// reps: passes per timing, enough for 20 ms of Valid.
			reps := 1
			for start := time.Now(); time.Since(start) < 20*time.Millisecond; reps++ {
				valid()
			}
			timed := func(f func()) (cpu, wall time.Duration) {
				runtime.GC()
				c0, w0 := cputime.Process(), time.Now()
				for r := 0; r < reps; r++ {
					f()
				}
				return cputime.Process() - c0, time.Since(w0)
			}
			var cpuR, wallR, vCPU, pCPU []float64
			for i := 0; i < b.N; i++ {
				var vc, vw, pc, pw time.Duration
				if i%2 == 0 {
					vc, vw = timed(valid)
					pc, pw = timed(pipe)
				} else {
					pc, pw = timed(pipe)
					vc, vw = timed(valid)
				}
				cpuR = append(cpuR, float64(pc)/float64(vc))
				wallR = append(wallR, float64(pw)/float64(vw))
				vCPU = append(vCPU, float64(vc.Microseconds())/float64(reps))
				pCPU = append(pCPU, float64(pc.Microseconds())/float64(reps))
			}
			b.StopTimer()
			mmm := func(x []float64) (lo, med, hi float64) {
				sort.Float64s(x)
				return x[0], x[len(x)/2], x[len(x)-1]
			}
			lo, med, hi := mmm(cpuR)
			b.ReportMetric(lo, "cpu-ratio-min")
			b.ReportMetric(med, "cpu-ratio-med")
			b.ReportMetric(hi, "cpu-ratio-max")
			lo, med, hi = mmm(wallR)
			b.ReportMetric(lo, "wall-ratio-min")
			b.ReportMetric(med, "wall-ratio-med")
			b.ReportMetric(hi, "wall-ratio-max")
			_, med, _ = mmm(vCPU)
			b.ReportMetric(med, "valid-cpu-µs/pass")
			_, med, _ = mmm(pCPU)
			b.ReportMetric(med, "pipeline-cpu-µs/pass")
		})
	}
}

// BenchmarkValidShares splits the pipeline on block 11017338, interleaved
// with encoding/json.Valid in one process: in each round, Valid, the
// scanner's validating skip over the whole document (the floor of any
// decoder that validates), Decode, and Analyze over the decoded
// transactions, each run five times and timed in CPU time. It reports the
// median, over the rounds, of each one's CPU time over Valid's.
//
//	go test ./normalform/trace -run '^$' -bench ValidShares -benchtime 40x
func BenchmarkValidShares(b *testing.B) {
	data, err := os.ReadFile("testdata/corpus/mev-inspect-rs/res/11017338.data.json")
	if err != nil {
		b.Fatal(err)
	}
	cfg := normalform.DefaultConfig()
	txs := Decode(data, Options{Config: cfg}).Txs
	stages := []struct {
		name string
		f    func()
	}{
		{"valid", func() { json.Valid(data) }},
		{"skip", func() { s := newScanner(data, 0); s.skip() }},
		{"decode", func() { Decode(data, Options{Config: cfg}) }},
		{"analyze", func() {
			for _, tx := range txs {
				if _, err := normalform.Analyze(tx, cfg); err != nil {
					b.Fatal(err)
				}
			}
		}},
	}
	shares := make([][]float64, len(stages))
	for i := 0; i < b.N; i++ {
		cpu := make([]time.Duration, len(stages))
		for k, st := range stages {
			c := cputime.Process()
			for r := 0; r < 5; r++ {
				st.f()
			}
			cpu[k] = cputime.Process() - c
		}
		for k := range stages {
			shares[k] = append(shares[k], float64(cpu[k])/float64(cpu[0]))
		}
	}
	b.StopTimer()
	for k, st := range stages[1:] {
		x := shares[k+1]
		sort.Float64s(x)
		b.ReportMetric(x[len(x)/2], st.name+"/valid-med")
	}
}
