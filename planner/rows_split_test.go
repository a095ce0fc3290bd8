package planner

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/layout"
)

// rowCounting is the index, counting the reads that give records as
// rows (FilterRows, and Fetch with Lookup.Rows) and those that give them
// whole.
type rowCounting struct {
	*index.Index
	mu                 sync.Mutex
	rows, whole, front int
	lent               int // scans that lent their records (FilterRowsLent)
}

func (s *rowCounting) count(rows bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rows {
		s.rows++
	} else {
		s.whole++
	}
}

func (s *rowCounting) FilterRows(ctx context.Context, blocks layout.BlockRange, addrs bool, match func(*layout.Record) (bool, error), fn func(*layout.Record) error) error {
	s.count(true)
	return s.Index.FilterRows(ctx, blocks, addrs, match, fn)
}

func (s *rowCounting) FilterRowsByFront(ctx context.Context, blocks layout.BlockRange, match func(*layout.Record) (bool, error), fn func(*layout.Record) error) error {
	s.count(true)
	s.mu.Lock()
	s.front++
	s.mu.Unlock()
	return s.Index.FilterRowsByFront(ctx, blocks, match, fn)
}

func (s *rowCounting) FilterRowsLent(ctx context.Context, blocks layout.BlockRange, addrs, front bool, match func(*layout.Record) (bool, error), fn func(*layout.Record) error) error {
	s.count(true)
	s.mu.Lock()
	if front {
		s.front++
	}
	s.lent++
	s.mu.Unlock()
	return s.Index.FilterRowsLent(ctx, blocks, addrs, front, match, fn)
}

func (s *rowCounting) Filter(ctx context.Context, blocks layout.BlockRange, addrs bool, match func(*layout.Record) (bool, error), whole bool, fn func(*layout.Record) error) error {
	s.count(false)
	return s.Index.Filter(ctx, blocks, addrs, match, whole, fn)
}

func (s *rowCounting) Fetch(ctx context.Context, lk layout.Lookup, fn func(*layout.Record) error) error {
	s.count(lk.Rows)
	return s.Index.Fetch(ctx, lk, fn)
}

// recordsWhole reads every record whole: no FilterRows, and Fetch without
// Lookup.Rows (a Source from before the rows).
type recordsWhole struct{ Source }

func (s recordsWhole) Fetch(ctx context.Context, lk layout.Lookup, fn func(*layout.Record) error) error {
	lk.Rows = false
	return s.Source.Fetch(ctx, lk, func(r *layout.Record) error {
		if r.NF == nil {
			panic("a whole record without its NF")
		}
		return fn(r)
	})
}

// TestFindRowsWithoutNF: find and match rows read the records as rows
// (no NF key read, no addresses or tokens decoded) on scans, filters
// decided on the headers, lookups and sorts and limits over them, and
// give the rows a whole-record read gives; a filter that needs the whole
// record still reads it whole.
func TestFindRowsWithoutNF(t *testing.T) {
	for _, q := range []string{
		"find where net profit > 0.05 WETH", // a filter that needs the whole record (pred.go's needFull): read whole
		"find transactions",
		"find where pools >= 3 and hops >= 4",
		"find where cycles >= 1 limit 3",
		"find where verdict = arbitrage",
		"find where bot = 0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74",
		"find where bot = 0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74 and hops >= 2",
		"find where touches WETH",
		"find where has reason no_cycles and block between 11017338 and 11017338",
	} {
		src := &rowCounting{Index: testIndex}
		got := runOn(src, q)
		want := runOn(recordsWhole{testIndex}, q)
		if strings.Contains(got, "error:") || strings.Count(got, "\n") < 1 {
			t.Fatalf("%s: %s", q, got)
		}
		if got != want {
			t.Errorf("%s: rows read as rows\n%s\nwhole\n%s", q, got, want)
		}
		if full := strings.Contains(q, "net profit"); full != (src.rows == 0) || full != (src.whole != 0) {
			t.Errorf("%s: %d reads as rows, %d whole", q, src.rows, src.whole)
		}
		// Scans filtered on counts alone (verdicts go by their keys) decide on
		// the records' fronts, without the dictionary.
		onFront := strings.Contains(q, "pools >= 3") || strings.Contains(q, "cycles >= 1")
		if onFront != (src.front != 0) {
			t.Errorf("%s: %d scans on the records' fronts", q, src.front)
		}
	}
}
