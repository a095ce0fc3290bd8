package planner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
)

// stuckSource is the test index with scans that never finish on their
// own: they wait for their context, as a scan of a very large index would
// still be running at the deadline.
type stuckSource struct{ *index.Index }

func (stuckSource) Fetch(ctx context.Context, _ index.Lookup, _ func(*index.Record) error) error {
	<-ctx.Done()
	return ctx.Err()
}

func (stuckSource) Filter(ctx context.Context, _ index.BlockRange, _ bool, _ func(*index.Record) (bool, error), _ bool, _ func(*index.Record) error) error {
	<-ctx.Done()
	return ctx.Err()
}

func (stuckSource) FilterRows(ctx context.Context, _ index.BlockRange, _ bool, _ func(*index.Record) (bool, error), _ func(*index.Record) error) error {
	<-ctx.Done()
	return ctx.Err()
}

func (stuckSource) FilterRowsLent(ctx context.Context, _ index.BlockRange, _, _ bool, _ func(*index.Record) (bool, error), _ func(*index.Record) error) error {
	<-ctx.Done()
	return ctx.Err()
}

func plan(t *testing.T, src string) *Query {
	t.Helper()
	st, err := lang.ParseOne("q", src)
	if err != nil {
		t.Fatal(err)
	}
	q, err := (&Planner{Cfg: normalform.DefaultConfig()}).Build(st)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestLimitQueryTime: a query running past Executor.Timeout stops with a
// LimitError naming the limit and its value; the caller's own
// cancellation stays context.Canceled.
func TestLimitQueryTime(t *testing.T) {
	q := plan(t, "find transactions")
	x := &Executor{Src: stuckSource{testIndex}, Cfg: normalform.DefaultConfig(), Timeout: 50 * time.Millisecond}
	done := make(chan error, 1)
	go func() { done <- x.Run(context.Background(), q, func(Row) error { return nil }) }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the query did not stop at its deadline")
	}
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "query time" || le.Value != "50ms" {
		t.Fatalf("err = %v, want the query time limit of 50ms", err)
	}
	for _, want := range []string{"query time", "50ms", "--timeout"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not say %q", err, want)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = (&Executor{Src: stuckSource{testIndex}, Cfg: normalform.DefaultConfig()}).Run(ctx, q, func(Row) error { return nil })
	if !errors.Is(err, context.Canceled) || errors.As(err, &le) {
		t.Errorf("cancelled by the caller: %v, want context.Canceled", err)
	}
}

// TestLimitResultSize: the row after Executor.MaxRows stops the query
// with a LimitError; the rows before it were emitted. A negative MaxRows
// lifts the limit.
func TestLimitResultSize(t *testing.T) {
	q := plan(t, "find transactions")
	all := 0
	if err := (&Executor{Src: testIndex, Cfg: normalform.DefaultConfig(), MaxRows: -1}).Run(context.Background(), q, func(Row) error { all++; return nil }); err != nil {
		t.Fatal(err)
	}
	if all < 5 {
		t.Fatalf("only %d transactions in the test index", all)
	}
	n := 0
	err := (&Executor{Src: testIndex, Cfg: normalform.DefaultConfig(), MaxRows: 3}).Run(context.Background(), q, func(Row) error { n++; return nil })
	var le *LimitError
	if !errors.As(err, &le) || le.Limit != "result size" || le.Value != "3 rows" {
		t.Fatalf("err = %v, want the result size limit of 3 rows", err)
	}
	if n != 3 {
		t.Errorf("%d rows emitted before the limit, want 3", n)
	}
	if !strings.Contains(err.Error(), "3 rows") || !strings.Contains(err.Error(), "--max-rows") {
		t.Errorf("%q does not name the limit and its value", err)
	}
	n = 0
	if err := (&Executor{Src: testIndex, Cfg: normalform.DefaultConfig(), MaxRows: all}).Run(context.Background(), q, func(Row) error { n++; return nil }); err != nil || n != all {
		t.Errorf("exactly MaxRows rows: %d rows, %v", n, err)
	}
	// The defaults are in force on a zero Executor.
	n = 0
	if err := (&Executor{Src: testIndex, Cfg: normalform.DefaultConfig()}).Run(context.Background(), q, func(Row) error { n++; return nil }); err != nil || n != all {
		t.Errorf("defaults: %d rows, %v", n, err)
	}
}
