package planner

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/block"
)

// The index is a Source (the planner does not import it: the check is
// here, in a test).
var _ Source = (*index.Index)(nil)

// wholeSource decides a scan's filter on whole records, never on their
// headers.
type wholeSource struct{ Source }

func (s wholeSource) Filter(ctx context.Context, blocks layout.BlockRange, _ bool, match func(*layout.Record) (bool, error), _ bool, fn func(*layout.Record) error) error {
	return s.Source.Filter(ctx, blocks, false, nil, true, func(r *layout.Record) error {
		if match != nil {
			if ok, err := match(r); err != nil || !ok {
				return err
			}
		}
		return fn(r)
	})
}

// TestHeaderScanSameRows: every query of testdata/queries.txt gives the
// same rows, in the same order, with filters decided on the records'
// headers (Index.Filter) as on whole records.
func TestHeaderScanSameRows(t *testing.T) {
	data, err := os.ReadFile("testdata/queries.txt")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range strings.Split(string(data), "\n====\n") {
		head, _, _ := strings.Cut(strings.Trim(c, "\n"), "\n----")
		lines := strings.Split(head, "\n")
		if len(lines) < 2 {
			continue
		}
		query := strings.Join(lines[1:], "\n")
		fast, plain := runOn(testIndex, query), runOn(wholeSource{testIndex}, query)
		if fast != plain {
			t.Errorf("%s\n%s\n--- on headers:\n%s\n--- on whole records:\n%s", lines[0], query, fast, plain)
		}
		n++
	}
	extra := []string{"count by sender", "count bots by family", "count by exact", "count by block",
		"find where bot = 0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74 and hops >= 2", "find where not (pools < 2 or cycles = 0)",
		"find where has reason no_cycles and block between 11017338 and 11017338", "count shapes by tier"}
	for _, q := range extra {
		if fast, plain := runOn(testIndex, q), runOn(wholeSource{testIndex}, q); fast != plain {
			t.Errorf("%s\n--- on headers:\n%s\n--- on whole records:\n%s", q, fast, plain)
		}
	}
	if n < 20 {
		t.Fatalf("only %d queries", n)
	}
}

// countingSource counts the calls of each Source method.
type countingSource struct {
	Source
	mu    sync.Mutex
	calls map[string]int
}

func (s *countingSource) count(m string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[m]++
}

func (s *countingSource) Get(tx normalform.Hash) (*layout.Record, error) {
	s.count("Get")
	return s.Source.Get(tx)
}

func (s *countingSource) Fetch(ctx context.Context, lk layout.Lookup, fn func(*layout.Record) error) error {
	s.count("Fetch " + lk.By.String())
	return s.Source.Fetch(ctx, lk, fn)
}

func (s *countingSource) Filter(ctx context.Context, blocks layout.BlockRange, addrs bool, match func(*layout.Record) (bool, error), whole bool, fn func(*layout.Record) error) error {
	s.count("Filter")
	return s.Source.Filter(ctx, blocks, addrs, match, whole, fn)
}

func (s *countingSource) BotShapes(ctx context.Context, bot normalform.Address, fn func(normalform.Hash, layout.Ref) error) error {
	s.count("BotShapes")
	return s.Source.BotShapes(ctx, bot, fn)
}

func (s *countingSource) BlockReports(ctx context.Context, blocks layout.BlockRange, fn func(*block.Report) error) error {
	s.count("BlockReports")
	return s.Source.BlockReports(ctx, blocks, fn)
}

// TestOneExecutionPerPath: each access path of a plan is one call of one
// Source method (a lookup one Fetch, a scan one Filter), with no record
// read again by Get; the rows are the index's.
func TestOneExecutionPerPath(t *testing.T) {
	bot := "0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74"
	for _, c := range []struct {
		q    string
		want string
	}{
		{"find where bot = " + bot, "Fetch bot"},
		{"find where bot = " + bot + " and hops >= 2", "Fetch bot"},
		{"find where verdict = arbitrage", "Fetch verdict"},
		{"find where touches " + bot, "Fetch addr"},
		{"find transactions", "Filter"},
		{"find where cycles >= 1", "Filter"},
		{"find where block between 11017338 and 11017338", "Filter"},
		{"count by family", "Filter"},
		{"find sandwiches", "BlockReports"},
	} {
		src := &countingSource{Source: testIndex, calls: map[string]int{}}
		got := runOn(src, c.q)
		if want := runOn(testIndex, c.q); got != want {
			t.Errorf("%s: rows differ through the counting source:\n%s\n--- want:\n%s", c.q, got, want)
		}
		if strings.HasPrefix(got, "error") || got == "" {
			t.Errorf("%s: %q, want rows", c.q, got)
		}
		if len(src.calls) != 1 || src.calls[c.want] != 1 {
			t.Errorf("%s: calls %v, want one %s", c.q, src.calls, c.want)
		}
	}
}

// TestKeyScan: the generic access path of a key kind (KeyScan) reads
// what the lookup names: an address's transactions through it are those
// of the address scan, in the same order, and explain names the key.
func TestKeyScan(t *testing.T) {
	bot := "0xbfee84ce47c0376b79c579b36ff80ac3c5f6db74"
	q := plan(t, "find where touches "+bot)
	a, ok := q.Plan.(*AddressScan)
	if !ok {
		t.Fatalf("plan %T, want an address scan", q.Plan)
	}
	rows := func(p Plan) []string {
		var out []string
		x := &Executor{Src: testIndex, Cfg: normalform.DefaultConfig()}
		if err := x.Run(context.Background(), &Query{Plan: p}, func(r Row) error { out = append(out, r.Get("tx")); return nil }); err != nil {
			t.Fatal(err)
		}
		return out
	}
	ks := &KeyScan{Lookup: layout.Lookup{By: layout.KindAddr, Addr: a.Addr, Blocks: layout.AllBlocks}, What: "touches " + bot}
	want, got := rows(a), rows(ks)
	if len(want) == 0 || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("key scan: %v\naddress scan: %v", got, want)
	}
	if d := Explain(ks); d != "index scan: touches "+bot+"\n" {
		t.Errorf("explain: %q", d)
	}
}
