package planner

import (
	"context"
	"testing"

	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
)

// BenchmarkQueries measures parse, plan and execution of representative
// queries against the test index (the bundled examples and block
// 11017338: 173 transactions).
//
//	go test ./planner -run '^$' -bench Queries -benchmem
func BenchmarkQueries(b *testing.B) {
	queries := []struct{ name, q string }{
		{"hash", "find where family = 0xa009e979e2fbd1edc8c7caedfb704dddf9181cfca18dd04059547acf8de47527"},
		{"bot", "find where bot = 0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74"},
		{"block", "find where block between 11017338 and 11017338"},
		{"tier", "find warnings where tier = attempted"},
		{"profit", "find where net profit > 0.05 WETH"},
		{"scan", "find where pools >= 3 and hops >= 4"},
		{"match", "match 0x3db1a776c9b6aa721514c563ffa0a609ca243bc16a2c46e16e31c46936b9dcfa at family"},
		{"count", "count by family"},
	}
	cfg := normalform.DefaultConfig()
	for _, c := range queries {
		b.Run(c.name, func(b *testing.B) {
			rows := 0
			for i := 0; i < b.N; i++ {
				st, err := lang.ParseOne("q", c.q)
				if err != nil {
					b.Fatal(err)
				}
				pl := &Planner{Cfg: cfg}
				q, err := pl.Build(st)
				if err != nil {
					b.Fatal(err)
				}
				rows = 0
				if err := (&Executor{Src: testIndex, Cfg: cfg}).Run(context.Background(), q, func(Row) error { rows++; return nil }); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows), "rows")
		})
	}
}
