package workload_test

import (
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/internal/cputime"
	"github.com/flowq/flowq/internal/workload"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// nfPages builds the NF page bodies of blocks synthetic blocks, as the
// index writes them (layout.AppendNFBody over each block's NF values, a
// block of 100 being one page of 128 positions), and counts their
// transactions.
func nfPages(tb testing.TB, blocks int) (pages [][]byte, txs int) {
	tb.Helper()
	sc, err := workload.LoadScenarios("../../examples/scenarios/geth")
	if err != nil {
		tb.Fatal(err)
	}
	gen, err := workload.New(sc, workload.Options{Seed: 1, BlockTxs: 100})
	if err != nil {
		tb.Fatal(err)
	}
	cfg := normalform.DefaultConfig()
	for range blocks {
		res := trace.Decode(gen.Block().Bundle, trace.Options{Config: cfg, Source: "synthetic"})
		if len(res.Errors) > 0 {
			tb.Fatal(res.Errors[0])
		}
		var nfs [layout.NFPageSpan][]byte
		for i, tx := range res.Txs {
			a, err := normalform.Analyze(tx, cfg)
			if err != nil {
				tb.Fatal(err)
			}
			rec, err := layout.NewRecord(a, 0)
			if err != nil {
				tb.Fatal(err)
			}
			nfs[i] = rec.NFValue()
			txs++
		}
		body, _ := layout.AppendNFBody(nil, &nfs)
		pages = append(pages, body)
	}
	return pages, txs
}

// BenchmarkNFPageCodecs compares the codecs an NF page could be stored
// with (issue 22, schema 13: S2 before, zstd's fastest level after) on
// the pages of 30 synthetic blocks: each codec's compressed bytes a
// transaction, the process's CPU time to compress every page (a
// transaction's share) and to decompress one page (a reader's `show`),
// the codecs taken in turn within each of b.N rounds, one encoder and
// one decoder each made once, as the index does. It logs min / median /
// max over the rounds and the load.
//
//	go test ./internal/workload -run '^$' -bench NFPageCodecs -benchtime 7x -v
func BenchmarkNFPageCodecs(b *testing.B) {
	pages, txs := nfPages(b, 30)
	zFast, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false), zstd.WithSingleSegment(true))
	zDef, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderCRC(false), zstd.WithSingleSegment(true))
	zDec, _ := zstd.NewReader(nil)
	defer zDec.Close()
	codecs := []struct {
		name string
		enc  func(dst, src []byte) []byte
		dec  func(dst, src []byte) ([]byte, error)
	}{
		{"s2", func(dst, src []byte) []byte { return s2.Encode(dst[:cap(dst)], src) }, func(dst, src []byte) ([]byte, error) { return s2.Decode(dst[:cap(dst)], src) }},
		{"s2-better", func(dst, src []byte) []byte { return s2.EncodeBetter(dst[:cap(dst)], src) }, func(dst, src []byte) ([]byte, error) { return s2.Decode(dst[:cap(dst)], src) }},
		{"zstd-fastest", func(dst, src []byte) []byte { return zFast.EncodeAll(src, dst[:0]) }, func(dst, src []byte) ([]byte, error) { return zDec.DecodeAll(src, dst[:0]) }},
		{"zstd-default", func(dst, src []byte) []byte { return zDef.EncodeAll(src, dst[:0]) }, func(dst, src []byte) ([]byte, error) { return zDec.DecodeAll(src, dst[:0]) }},
	}
	type sample struct{ enc, dec float64 } // µs of CPU a transaction, a page
	got := make([][]sample, len(codecs))
	size := make([]int, len(codecs))
	comp := make([][][]byte, len(codecs))
	for i, c := range codecs {
		for _, p := range pages {
			out := c.enc(make([]byte, 0, 2*len(p)+64), p)
			comp[i] = append(comp[i], out)
			size[i] += len(out)
			back, err := c.dec(make([]byte, 0, len(p)), out)
			if err != nil || string(back) != string(p) {
				b.Fatalf("%s: a page does not read back: %v", c.name, err)
			}
		}
	}
	load := cputime.Load()
	b.ResetTimer()
	for range b.N {
		for i, c := range codecs {
			runtime.GC()
			buf := make([]byte, 0, 1<<17)
			c0 := cputime.Process()
			for rep := 0; rep < 5; rep++ {
				for _, p := range pages {
					buf = c.enc(buf, p)
				}
			}
			enc := cputime.Process() - c0
			c0 = cputime.Process()
			for rep := 0; rep < 5; rep++ {
				for _, p := range comp[i] {
					if buf, _ = c.dec(buf, p); len(buf) == 0 {
						b.Fatal("empty page")
					}
				}
			}
			dec := cputime.Process() - c0
			got[i] = append(got[i], sample{us(enc) / float64(5*txs), us(dec) / float64(5*len(pages))})
		}
	}
	b.StopTimer()
	for i, c := range codecs {
		encs, decs := make([]float64, 0, b.N), make([]float64, 0, b.N)
		for _, s := range got[i] {
			encs, decs = append(encs, s.enc), append(decs, s.dec)
		}
		b.Logf("%-13s %6.1f B/tx  compress %s µs CPU/tx  decompress %s µs CPU/page (min/median/max of %d rounds; load %s)",
			c.name, float64(size[i])/float64(txs), mmm(encs), mmm(decs), b.N, load)
		b.ReportMetric(float64(size[i])/float64(txs), c.name+"-B/tx")
	}
	b.Logf("%d pages, %d transactions, %.1f B/tx uncompressed", len(pages), txs, float64(sum(pages))/float64(txs))
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

func mmm(xs []float64) string {
	s := slices.Clone(xs)
	slices.Sort(s)
	return fmt.Sprintf("%.2f / %.2f / %.2f", s[0], s[len(s)/2], s[len(s)-1])
}

func sum(ps [][]byte) (n int) {
	for _, p := range ps {
		n += len(p)
	}
	return n
}
