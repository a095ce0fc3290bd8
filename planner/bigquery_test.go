package planner

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
)

// orChain is "find where bot = A or bot = B or ..." with n terms, the
// query of issue 15 (20,000 terms, 1 MB, took 14 GB to plan).
func orChain(n int) string {
	terms := make([]string, n)
	for i := range terms {
		terms[i] = fmt.Sprintf("bot = 0x%040x", i)
	}
	return "find where " + strings.Join(terms, " or ")
}

// TestPlanSharesSourceText: planning a chain of n terms allocates in
// proportion to n. Each predicate's text was its span of the source,
// copied, so every level of a nested "or" copied its whole subtree's
// text: quadratic (8,000 terms, 2.3 GB). Now the plan keeps spans of the
// one source and renders the text when explain asks.
func TestPlanSharesSourceText(t *testing.T) {
	cfg := normalform.DefaultConfig()
	perTerm := func(n int) float64 {
		src := orChain(n)
		st, err := lang.ParseOne("q", src)
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		q, err := (&Planner{Cfg: cfg}).Build(st)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if got := Explain(q.Plan); got != "filter: "+strings.TrimPrefix(src, "find where ")+"\n└─ full scan (no index applies)\n" {
			t.Fatalf("%d terms: explain gives %.200s", n, got)
		}
		return float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
	}
	small, large := perTerm(500), perTerm(4000)
	t.Logf("bytes allocated per term planning: %.0f at 500 terms, %.0f at 4,000", small, large)
	if large > 2*small || large > 2000 {
		t.Errorf("planning allocates %.0f bytes per term at 4,000 terms, %.0f at 500: not linear", large, small)
	}
}

// TestLongChainsRun: chains of 20,000 "or" and "and" terms plan and run
// (evaluated as one predicate over their terms, not 20,000 nested ones),
// and give the rows a short query gives.
func TestLongChainsRun(t *testing.T) {
	const n = 20_000
	or := "find where " + strings.Repeat("pools = 999 or ", n) + "verdict = arbitrage"
	and := "find where " + strings.Repeat("pools < 999 and ", n) + "verdict = arbitrage"
	want := run("find where verdict = arbitrage")
	if strings.Count(want, "\n") < 2 {
		t.Fatalf("the short query gives %q", want)
	}
	for _, src := range []string{or, and} {
		if got := run(src); got != want {
			t.Errorf("%.40s… (%d terms) gives\n%s\nwant\n%s", src, n, got, want)
		}
	}
	// and one error among them is found and named, by the check pass
	// (lang.Check) before anything is planned
	bad := "find where " + strings.Repeat("pools = 999 or ", n) + "reason nonsense"
	_, err := lang.ParseOne("q", bad)
	if err == nil || !strings.Contains(err.Error(), `unknown reason "nonsense"`) {
		t.Fatalf("got %v", err)
	}
}

// TestLongWordsInErrors: a megabyte-long number or name in a query gives
// a short error, at once (an amount of a million digits is not converted).
func TestLongWordsInErrors(t *testing.T) {
	long := strings.Repeat("7", 1<<20-100)
	for _, src := range []string{
		"find where net profit > " + long + " WETH",
		"find where gross profit in 0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2 > " + long,
		"find where touches " + strings.Repeat("X", 1<<20-100),
		"find where block > " + long,
		"find limit " + long,
	} {
		got := run(src)
		if !strings.HasPrefix(got, "error: q:1:") || len(got) > 1000 {
			t.Errorf("%.40s…: %d bytes: %.300s", src, len(got), got)
		}
	}
}
