package trace

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowq/flowq/internal/textdiff"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/show"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// corpusFiles lists every trace file of the corpus copy.
func corpusFiles(t testing.TB) []string {
	files, err := filepath.Glob("testdata/corpus/*/*/*.json")
	if err != nil || len(files) != 26 {
		t.Fatalf("expected the 26 corpus trace files, found %d (%v)", len(files), err)
	}
	return files
}

// goldenT0 renders every transaction of a decoded file: the header line
// with its counts, then T0 as a tree.
func goldenT0(cfg *normalform.Config, res *Result) string {
	var b strings.Builder
	for _, tx := range res.Txs {
		m := tx.Meta
		fmt.Fprintf(&b, "tx %s block %d index %d shape %s transfers %d frames %d reverted %d logs %d ignored %d degenerate %d\n",
			m.Hash.Hex(), m.Block, m.Index, tx.Shape, len(tx.Transfers), tx.Stats.Frames, tx.Stats.RevertedFrames,
			tx.Stats.Logs, tx.Stats.IgnoredLogs, tx.Stats.Degenerate)
		show.WriteTree(cfg, &b, tx.Root)
		b.WriteByte('\n')
	}
	for _, e := range res.Errors {
		fmt.Fprintf(&b, "error: %v\n", e)
	}
	return b.String()
}

func TestGoldenT0(t *testing.T) {
	cfg := normalform.DefaultConfig()
	for _, f := range corpusFiles(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			res := Decode(data, Options{Config: cfg})
			if len(res.Errors) != 0 {
				t.Errorf("corpus file decodes with errors: %v", res.Errors)
			}
			got := goldenT0(cfg, res)
			golden := filepath.Join("testdata", "golden", name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("T0 of %s differs from %s (go test -update rewrites it after review):\n%s", f, golden, textdiff.FirstLine(string(want), got))
			}
		})
	}
}

// TestDeterministic decodes every corpus file twice and expects the same
// rendering.
func TestDeterministic(t *testing.T) {
	cfg := normalform.DefaultConfig()
	for _, f := range corpusFiles(t) {
		data, _ := os.ReadFile(f)
		a := goldenT0(cfg, Decode(data, Options{Config: cfg}))
		b := goldenT0(cfg, Decode(data, Options{Config: cfg}))
		if a != b {
			t.Errorf("%s: two decodings differ", f)
		}
	}
}

// TestGoldenAnalysis locks each corpus transaction's normal form, verdict,
// profit and rewrite log.
func TestGoldenAnalysis(t *testing.T) {
	cfg := normalform.DefaultConfig()
	for _, f := range corpusFiles(t) {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			for _, tx := range Decode(data, Options{Config: cfg}).Txs {
				a, err := normalform.Analyze(tx, cfg)
				if err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "tx %s\n", tx.Meta.Hash.Hex())
				show.WriteAnalysis(cfg, &b, a, true)
				b.WriteByte('\n')
			}
			golden := filepath.Join("testdata", "golden", name+".analysis.txt")
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if b.String() != string(want) {
				t.Errorf("analysis of %s differs from %s (go test -update rewrites it after review):\n%s", f, golden, textdiff.FirstLine(string(want), b.String()))
			}
		})
	}
}
