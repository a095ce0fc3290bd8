package planner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/normalform"
)

// TestModePredicate: an index of two traced scenario bundles and two
// bundles without their traces (receipts-only mode) answers `mode =
// receipts`, `mode != receipts` and `count by mode` from the records'
// headers, and receipts-only arbitrages carry the reason receipts_only.
func TestModePredicate(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, name := range []string{"two_pool_arb", "star_r", "star_s", "wrap_cycle_refund"} {
		src := filepath.Join("..", "examples", "scenarios", "geth", name+".json")
		if name == "two_pool_arb" || name == "star_r" {
			files = append(files, src)
			continue
		}
		raw, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		var d map[string]json.RawMessage
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		delete(d, "traces")
		out, _ := json.Marshal(d)
		p := filepath.Join(dir, name+".json")
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	ix, err := index.Open(filepath.Join(dir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	inputs, err := ingest.Files(files...)
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := ingest.Ingest(context.Background(), ix, inputs, ingest.Options{Config: normalform.DefaultConfig()}); err != nil || sum.Stored != 4 {
		t.Fatalf("ingest: %v %+v", err, sum)
	}
	count := func(q string) int {
		out := runOn(ix, q)
		if strings.HasPrefix(out, "error") {
			t.Fatalf("%s: %s", q, out)
		}
		if out == "(no rows)" {
			return 0
		}
		return len(strings.Split(out, "\n"))
	}
	for _, c := range []struct {
		q    string
		want int
	}{
		{"find where mode = receipts", 2},
		{"find where mode is traces", 2},
		{"find where mode != receipts", 2},
		{"find arbitrages where mode = receipts and has reason receipts_only", 2},
		{"find where mode = traces and has reason receipts_only", 0},
	} {
		if got := count(c.q); got != c.want {
			t.Errorf("%s: %d rows, want %d:\n%s", c.q, got, c.want, runOn(ix, c.q))
		}
	}
	got := runOn(ix, "count by mode")
	if !strings.Contains(got, "mode=receipts") || !strings.Contains(got, "mode=traces") || strings.Count(got, "transactions=2") != 2 {
		t.Errorf("count by mode:\n%s", got)
	}
	if got := runOn(ix, "find where mode = receits"); !strings.Contains(got, `unknown mode "receits": want traces, receipts`) {
		t.Errorf("a misspelt mode: %s", got)
	}
}
