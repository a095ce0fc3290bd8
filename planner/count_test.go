package planner

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/internal/workload"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
)

// plainSource is a Source without HashCounter: counts run on the
// records' headers, as before the hash-key count.
type plainSource struct{ Source }

// keyCounting counts a source's Filter and CountHashes calls, and keeps
// CountHashes.
type keyCounting struct {
	*index.Index
	mu             sync.Mutex
	filters, count int
}

func (s *keyCounting) Filter(ctx context.Context, blocks layout.BlockRange, addrs bool, match func(*layout.Record) (bool, error), whole bool, fn func(*layout.Record) error) error {
	s.mu.Lock()
	s.filters++
	s.mu.Unlock()
	return s.Index.Filter(ctx, blocks, addrs, match, whole, fn)
}

func (s *keyCounting) CountHashes(ctx context.Context, level normalform.Level, blocks layout.BlockRange, fn func(normalform.Hash, int, layout.Ref) error) error {
	s.mu.Lock()
	s.count++
	s.mu.Unlock()
	return s.Index.CountHashes(ctx, level, blocks, fn)
}

// generatedIndex ingests blocks×txs synthetic transactions (package
// workload, from the geth scenarios) into a fresh index.
func generatedIndex(t *testing.T, blocks, txs int) (*index.Index, uint64) {
	t.Helper()
	sc, err := workload.LoadScenarios("../examples/scenarios/geth")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := workload.New(sc, workload.Options{Seed: 7, BlockTxs: txs})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Open(filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	g := ingest.NewIngester(context.Background(), ix, ingest.Options{})
	var first uint64
	for i := 0; i < blocks; i++ {
		blk := gen.Block()
		if i == 0 {
			first = blk.Number
		}
		if err := g.Add(ingest.BundleInput(fmt.Sprintf("synthetic:block:%d", blk.Number), blk.Bundle)); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := g.Close()
	if err != nil {
		t.Fatal(err)
	}
	if sum.Stored != blocks*txs {
		t.Fatalf("ingest: %s, want %d stored", sum, blocks*txs)
	}
	return ix, first
}

// TestCountByHashKeys: a count of transactions by shape, tokens or
// family, unfiltered or filtered by blocks only, runs on the hash keys
// (HashCount, in explain; CountHashes, no record scan) and gives the rows
// the scan of the records' headers gives, in the same order, with the
// same examples, on a generated index of 3,000 transactions.
func TestCountByHashKeys(t *testing.T) {
	ix, b := generatedIndex(t, 30, 100)
	queries := []string{
		"count by family",
		"count by shape",
		"count by tokens",
		"count by family limit 3",
		"count transactions by shape limit 5",
		fmt.Sprintf("count by family where block between %d and %d", b+5, b+12),
		fmt.Sprintf("count by tokens where block >= %d", b+20),
		fmt.Sprintf("count by shape where block = %d", b+29),
		fmt.Sprintf("count by family where block > %d", b+40), // no transaction
	}
	for _, q := range queries {
		src := &keyCounting{Index: ix}
		fast, slow := fullRows(t, src, q), fullRows(t, plainSource{ix}, q)
		if fast != slow {
			t.Errorf("%s\n--- on the hash keys:\n%s\n--- on the records:\n%s", q, fast, slow)
		}
		if strings.HasPrefix(fast, "error") {
			t.Errorf("%s: %s", q, fast)
		}
		if src.count != 1 || src.filters != 0 {
			t.Errorf("%s: %d key counts and %d record scans, want one key count and no scan", q, src.count, src.filters)
		}
		if ex := runOn(ix, "explain "+q); !strings.Contains(ex, "index count: ") || !strings.Contains(ex, "hash keys, key only") {
			t.Errorf("explain %s:\n%s\nwant the hash-key count", q, ex)
		}
	}
	if rows := strings.Count(fullRows(t, ix, "count by shape"), "\n"); rows < 10 {
		t.Errorf("count by shape: %d rows, want the workload's many shapes", rows)
	}
	// Counts the keys cannot answer keep the scan.
	for _, q := range []string{"count by family where pools >= 3", "count bots by family", "count by exact", "count by verdict", "count shapes by family"} {
		src := &keyCounting{Index: ix}
		if got, want := fullRows(t, src, q), fullRows(t, plainSource{ix}, q); got != want {
			t.Errorf("%s: rows differ:\n%s\n--- want:\n%s", q, got, want)
		}
		if src.count != 0 || src.filters != 1 {
			t.Errorf("%s: %d key counts and %d record scans, want the scan", q, src.count, src.filters)
		}
	}
}

// buildQuery parses and plans one statement, with the default
// configuration, or fails the test.
func buildQuery(t *testing.T, src string) (*Query, *normalform.Config) {
	t.Helper()
	st, err := lang.ParseOne("q", src)
	if err != nil {
		t.Fatal(err)
	}
	pl := &Planner{Cfg: normalform.DefaultConfig()}
	q, err := pl.Build(st)
	if err != nil {
		t.Fatal(err)
	}
	return q, pl.Cfg
}

// fullRows runs a query and renders every field of every row whole,
// machine and human values.
func fullRows(t *testing.T, source Source, src string) string {
	t.Helper()
	q, cfg := buildQuery(t, src)
	var b strings.Builder
	err := (&Executor{Src: source, Cfg: cfg}).Run(context.Background(), q, func(r Row) error {
		for _, f := range r {
			fmt.Fprintf(&b, "%s=%s|%s ", f.Name, f.Value, f.Human)
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		return "error: " + err.Error()
	}
	return b.String()
}
