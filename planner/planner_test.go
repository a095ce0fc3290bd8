package planner

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
)

var update = flag.Bool("update", false, "rewrite testdata/queries.txt's expected outputs")

// testIndex is a real Badger index of the bundled examples (mainnet and
// scenarios) and the mainnet corpus block 11017338.
var testIndex *index.Index

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "flowq-planner-")
	if err != nil {
		panic(err)
	}
	code := func() int {
		defer os.RemoveAll(dir)
		ix, err := index.Open(filepath.Join(dir, "index"))
		if err != nil {
			panic(err)
		}
		defer ix.Close()
		inputs, err := ingest.Files("../examples/mainnet", "../examples/scenarios/geth", "../normalform/trace/testdata/corpus/mev-inspect-rs/res/11017338.data.json")
		if err != nil {
			panic(err)
		}
		sum, err := ingest.Ingest(context.Background(), ix, inputs, ingest.Options{Config: normalform.DefaultConfig()})
		if err != nil {
			panic(err)
		}
		if sum.Failed != 0 {
			panic(fmt.Sprintf("ingest of the examples failed: %+v", sum))
		}
		testIndex = ix
		return m.Run()
	}()
	os.Exit(code)
}

// run parses, plans and executes a query against the test index, and
// renders the result as the test file expects: the plan for explain, the
// rows otherwise (one per line, name=value, machine values), or the error.
func run(src string) string { return runOn(testIndex, src) }

// runOn is run against a source.
func runOn(source Source, src string) string {
	st, err := lang.ParseOne("q", src)
	if err != nil {
		return "error: " + err.Error()
	}
	pl := &Planner{Cfg: normalform.DefaultConfig()}
	q, err := pl.Build(st)
	if err != nil {
		return "error: " + err.Error()
	}
	if q.Explain {
		return strings.TrimRight(Explain(q.Plan), "\n")
	}
	x := &Executor{Src: source, Cfg: pl.Cfg}
	var lines []string
	err = x.Run(context.Background(), q, func(r Row) error {
		var parts []string
		for _, f := range r {
			v := f.Value
			if f.Name == "text" {
				v = "\n" + strings.TrimRight(f.Human, "\n")
			}
			if f.Name == "tx" || f.Name == "example" || f.Name == "shape" {
				if len(v) > 12 {
					v = v[:10] + "…"
				}
			}
			if v != "" {
				parts = append(parts, f.Name+"="+v)
			}
		}
		lines = append(lines, strings.Join(parts, " "))
		return nil
	})
	if err != nil {
		lines = append(lines, "error: "+err.Error())
	}
	if len(lines) == 0 {
		return "(no rows)"
	}
	return strings.Join(lines, "\n")
}

// TestQueries runs testdata/queries.txt: cases separated by blank lines
// after "----": a "# name" line, the query, "----", the expected output.
func TestQueries(t *testing.T) {
	path := "testdata/queries.txt"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cases := strings.Split(string(data), "\n====\n")
	var out []string
	for _, c := range cases {
		c = strings.Trim(c, "\n")
		if c == "" {
			continue
		}
		head, want, found := strings.Cut(c, "\n----\n")
		if !found {
			head = strings.TrimSuffix(c, "\n----")
		}
		lines := strings.Split(head, "\n")
		name, query := lines[0], strings.Join(lines[1:], "\n")
		got := run(query)
		if *update {
			out = append(out, name+"\n"+query+"\n----\n"+got)
			continue
		}
		if got != strings.Trim(want, "\n") {
			t.Errorf("%s\n%s\n--- got:\n%s\n--- want:\n%s", name, query, got, want)
		}
	}
	if *update {
		if err := os.WriteFile(path, []byte(strings.Join(out, "\n====\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A cancelled context stops a query.
func TestCancel(t *testing.T) {
	st, _ := lang.ParseOne("q", "find")
	pl := &Planner{Cfg: normalform.DefaultConfig()}
	q, _ := pl.Build(st)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err := (&Executor{Src: testIndex, Cfg: pl.Cfg}).Run(ctx, q, func(Row) error {
		n++
		if n == 3 {
			cancel()
		}
		return nil
	})
	if err == nil || n != 3 {
		t.Errorf("cancel: err %v after %d rows", err, n)
	}
}
