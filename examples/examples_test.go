package examples

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/internal/textdiff"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/repl"
)

var update = flag.Bool("update", false, "rewrite the queries/*.out files")

// demoIndex ingests the embedded inputs into a fresh index.
func demoIndex(t *testing.T) *index.Index {
	t.Helper()
	ix, err := index.Open(filepath.Join(t.TempDir(), "ix"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	in := Inputs()
	sum, err := ingest.Ingest(context.Background(), ix, in, ingest.Options{Config: normalform.DefaultConfig()})
	if err != nil || sum.Failed > 0 {
		t.Fatalf("ingest: %v (%s)", err, sum)
	}
	return ix
}

func TestInputs(t *testing.T) {
	in := Inputs()
	disk, _ := filepath.Glob("mainnet/*.json")
	geth, _ := filepath.Glob("scenarios/geth/*.json")
	if len(in) != len(disk)+len(geth) || len(in) < 20 {
		t.Fatalf("%d embedded inputs, %d on disk", len(in), len(disk)+len(geth))
	}
	for _, x := range in {
		b, err := x.Load(0)
		if err != nil {
			t.Fatal(err)
		}
		d, err := os.ReadFile(strings.TrimPrefix(x.Name, "examples/"))
		if err != nil || !bytes.Equal(b, d) {
			t.Errorf("%s: embedded copy differs from the file (%v)", x.Name, err)
		}
	}
}

// TestQueries runs every query file and compares its output with the
// .out file beside it (go test ./examples -update rewrites them).
func TestQueries(t *testing.T) {
	ix := demoIndex(t)
	qs := Queries()
	if len(qs) < 4 {
		t.Fatalf("%d query files", len(qs))
	}
	for _, q := range qs {
		t.Run(filepath.Base(q.Name), func(t *testing.T) {
			var out bytes.Buffer
			s := &repl.Session{Cfg: normalform.DefaultConfig(), Src: ix, Out: &out, Mode: "table", Echo: true}
			if err := s.Exec(context.Background(), q.Name, q.Src); err != nil {
				t.Fatalf("%v", err)
			}
			golden := strings.TrimSuffix(strings.TrimPrefix(q.Name, "examples/"), ".fq") + ".out"
			if *update {
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./examples -update writes it)", err)
			}
			if got := out.String(); got != string(want) {
				t.Errorf("%s differs from %s (go test ./examples -update rewrites it; review the diff):\n%s", q.Name, golden, textdiff.FirstLine(string(want), got))
			}
		})
	}
}

// TestTour runs the demo's tour: every statement succeeds and returns rows.
func TestTour(t *testing.T) {
	ix := demoIndex(t)
	var out bytes.Buffer
	s := &repl.Session{Cfg: normalform.DefaultConfig(), Src: ix, Out: &out, Mode: "table", Echo: true}
	if err := s.Exec(context.Background(), "examples/tour.fq", Tour()); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "(no rows)"); n > 0 {
		t.Errorf("%d tour statements return nothing:\n%s", n, out.String())
	}
	for _, want := range []string{
		"flowq> count by verdict\n",
		"arbitrage  22",
		"0x68b13bc05b6e29566d5e8148af022d9d38fd35f8ea342b403ff3e4fdc4011f06", // the one arbitrage through three pools
		"yes         family",
		"index range: net profit",
		"\nverdict ARBITRAGE (confirmed)\n", // no empty "reasons:" when there are none
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("tour output lacks %q", want)
		}
	}
}
