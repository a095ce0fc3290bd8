// Package fuzzsmoke runs every fuzz target of flowq briefly, for CI:
//
//	FLOWQ_FUZZ_SMOKE=2000x go test ./internal/fuzzsmoke -run TestFuzzSmoke -v -timeout 10m
//
// FLOWQ_FUZZ_SMOKE is go test's -fuzztime for each target: a count of
// executions (2000x) or a duration (3s). Prefer a count in CI: with a
// duration, Go's fuzz coordinator (through Go 1.26) can fail a target with
// a bare "context deadline exceeded" at the deadline on a loaded machine,
// with no crasher (golang/go#75804).
//
// Without FLOWQ_FUZZ_SMOKE the test is skipped (go test ./... runs every
// target's seed corpus and its testdata/fuzz regressions already, as plain
// tests). A crasher found here is written by go test to the target's
// testdata/fuzz directory: commit it with its fix, and it runs as a
// regression test from then on.
package fuzzsmoke

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Targets are the fuzz targets: every reader of outside bytes.
var Targets = []struct{ Pkg, Name string }{
	{"./normalform/trace", "FuzzDecode"},        // traces, every shape
	{"./normalform/trace", "FuzzDecodeBundles"}, // block bundles (header, receipts, traces), under limits
	{"./normalform/trace", "FuzzNF"},            // binary normal forms, from the real corpus
	{"./normalform", "FuzzDecodeNF"},            // binary normal forms, from random routes
	{"./lang", "FuzzParse"},                     // the query language
	{"./planner", "FuzzQuery"},                  // parse, plan and run against a real index
	{"./index", "FuzzDecodeRecord"},             // index record bytes
	{"./index", "FuzzParseKey"},                 // index keys
	{"./index", "FuzzDecodeMarkers"},            // failure and input-marker values
	{"./index", "FuzzDecodeValues"},             // txhash positions, dictionary ids and names, first-seen values
	{"./index/fetch", "FuzzNodeResponse"},       // a node's JSON-RPC answers
	{"./index/fetch", "FuzzJoinFlat"},           // flatCallTracer block answers
}

func TestFuzzSmoke(t *testing.T) {
	per := os.Getenv("FLOWQ_FUZZ_SMOKE")
	if per == "" {
		t.Skip("set FLOWQ_FUZZ_SMOKE to the -fuzztime of each target (e.g. 2000x) to fuzz every target briefly")
	}
	if n, ok := strings.CutSuffix(per, "x"); ok {
		if _, err := strconv.Atoi(n); err != nil {
			t.Fatalf("FLOWQ_FUZZ_SMOKE=%q: want a count (2000x) or a duration (3s)", per)
		}
	} else if _, err := time.ParseDuration(per); err != nil {
		t.Fatalf("FLOWQ_FUZZ_SMOKE=%q: want a count (2000x) or a duration (3s)", per)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// go test puts its own Go's bin first on the test's PATH.
	goTool := "go"
	for _, tg := range Targets {
		start := time.Now()
		cmd := exec.Command(goTool, "test", tg.Pkg, "-run", "^$", "-fuzz", "^"+tg.Name+"$", "-fuzztime", per, "-parallel", "1")
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s %s: %v\n%s", tg.Pkg, tg.Name, err, out)
			continue
		}
		t.Logf("%-20s %-18s ok in %s", tg.Pkg, tg.Name, time.Since(start).Round(100*time.Millisecond))
	}
}

// TestEveryTargetListed: a fuzz target added anywhere is in Targets, so
// that CI fuzzes it.
func TestEveryTargetListed(t *testing.T) {
	listed := map[string]bool{}
	for _, tg := range Targets {
		listed[tg.Pkg+" "+tg.Name] = true
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	found := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		for _, m := range re.FindAllSubmatch(b, -1) {
			found++
			if key := "./" + filepath.ToSlash(rel) + " " + string(m[1]); !listed[key] {
				t.Errorf("fuzz target %s is not in fuzzsmoke.Targets", key)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found != len(Targets) {
		t.Errorf("%d fuzz targets in the tree, %d listed", found, len(Targets))
	}
}
