// Package fuzzsmoke runs every fuzz target of flowq for a while, for CI:
//
//	FLOWQ_FUZZ_SMOKE=30000x go test ./internal/fuzzsmoke -run TestFuzzSmoke -v -timeout 60m
//
// (make fuzz-smoke). FLOWQ_FUZZ_SMOKE is go test's -fuzztime for each
// target: a count of executions (30000x) or a duration (3s). Prefer a
// count in CI: with a duration, Go's fuzz coordinator (through Go 1.26)
// can fail a target with a bare "context deadline exceeded" at the
// deadline on a loaded machine, with no crasher (golang/go#75804).
//
// Each new input that widens coverage is minimized for at most
// FLOWQ_FUZZ_MINIMIZE executions (-fuzzminimizetime, default 100x). Go's
// default is 60 seconds an input: on the large inputs some targets start
// from (the example bundles of FuzzDecodeBundles, up to 325 KB), a short
// run did nothing else (148 executions in 21 seconds). A crasher is still
// written and reported, less minimized. Each target gets at most
// FLOWQ_FUZZ_TARGET_TIMEOUT (default 8m), go test's build of its
// instrumented binary included (index/fetch's, with go-ethereum, took
// 170 s of a fresh clone's 239 s for FuzzNodeResponse on the 2-core CI
// machine; with 4m it once ran out 4,609 executions short), and the
// test logs, per target, its executions, time and rate. FLOWQ_FUZZ_ONLY
// (a regular expression on the target's name) runs some of them.
//
// Without FLOWQ_FUZZ_SMOKE the test is skipped (go test ./... runs every
// target's seed corpus and its testdata/fuzz regressions already, as plain
// tests). A crasher found here is written by go test to the target's
// testdata/fuzz directory: commit it with its fix, and it runs as a
// regression test from then on.
package fuzzsmoke

import (
	"context"
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
	{"./normalform/trace", "FuzzDecodeValid"},   // never accepts what encoding/json.Valid rejects
	{"./normalform/trace", "FuzzNF"},            // binary normal forms, from the real corpus
	{"./normalform/trace", "FuzzFastPathsSame"}, // the decoder's shortcuts decide as the plain path does
	{"./normalform", "FuzzDecodeNF"},            // binary normal forms, from random routes
	{"./lang", "FuzzParse"},                     // the query language
	{"./planner", "FuzzQuery"},                  // parse, plan and run against a real index
	{"./index", "FuzzDecodeRecord"},             // index record bytes
	{"./index", "FuzzParseKey"},                 // index keys
	{"./index", "FuzzDecodeMarkers"},            // failure and input-marker values
	{"./index", "FuzzDecodeValues"},             // txhash positions, dictionary ids and names, first-seen values
	{"./index", "FuzzWalkPage"},                 // record pages (schema 11)
	{"./index", "FuzzParsePosting"},             // secondary keys' postings (schema 12)
	{"./index", "FuzzNFPage"},                   // NF pages, compressed (schema 12)
	{"./index/fetch", "FuzzNodeResponse"},       // a node's JSON-RPC answers
	{"./index/fetch", "FuzzJoinFlat"},           // flatCallTracer block answers
}

func TestFuzzSmoke(t *testing.T) {
	per := os.Getenv("FLOWQ_FUZZ_SMOKE")
	if per == "" {
		t.Skip("set FLOWQ_FUZZ_SMOKE to the -fuzztime of each target (e.g. 30000x) to fuzz every target")
	}
	count := 0
	if n, ok := strings.CutSuffix(per, "x"); ok {
		var err error
		if count, err = strconv.Atoi(n); err != nil || count < 1 {
			t.Fatalf("FLOWQ_FUZZ_SMOKE=%q: want a count (30000x) or a duration (3s)", per)
		}
	} else if _, err := time.ParseDuration(per); err != nil {
		t.Fatalf("FLOWQ_FUZZ_SMOKE=%q: want a count (30000x) or a duration (3s)", per)
	}
	minimize := os.Getenv("FLOWQ_FUZZ_MINIMIZE")
	if minimize == "" {
		minimize = "100x"
	}
	budget := 8 * time.Minute
	if v := os.Getenv("FLOWQ_FUZZ_TARGET_TIMEOUT"); v != "" {
		var err error
		if budget, err = time.ParseDuration(v); err != nil {
			t.Fatalf("FLOWQ_FUZZ_TARGET_TIMEOUT=%q: %v", v, err)
		}
	}
	only, err := regexp.Compile(os.Getenv("FLOWQ_FUZZ_ONLY"))
	if err != nil {
		t.Fatalf("FLOWQ_FUZZ_ONLY: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// go test puts its own Go's bin first on the test's PATH.
	goTool := "go"
	total := time.Now()
	for _, tg := range Targets {
		if !only.MatchString(tg.Name) {
			continue
		}
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), budget)
		cmd := exec.CommandContext(ctx, goTool, "test", tg.Pkg, "-run", "^$", "-fuzz", "^"+tg.Name+"$",
			"-fuzztime", per, "-fuzzminimizetime", minimize, "-parallel", "1")
		cmd.Dir = root
		cmd.WaitDelay = 10 * time.Second
		out, err := cmd.CombinedOutput()
		timedOut := ctx.Err() != nil
		cancel()
		took := time.Since(start)
		if timedOut {
			t.Errorf("%s %s: not done in %s (FLOWQ_FUZZ_TARGET_TIMEOUT)\n%s", tg.Pkg, tg.Name, budget, tail(out))
			continue
		}
		if err != nil {
			t.Errorf("%s %s: %v\n%s", tg.Pkg, tg.Name, err, out)
			continue
		}
		execs, fuzzing, ok := progress(out)
		if !ok {
			t.Errorf("%s %s: no progress line in go test's output:\n%s", tg.Pkg, tg.Name, tail(out))
			continue
		}
		if count > 0 && execs < count {
			t.Errorf("%s %s: %d executions, want %d", tg.Pkg, tg.Name, execs, count)
		}
		rate := 0.0
		if fuzzing > 0 {
			rate = float64(execs) / fuzzing.Seconds()
		}
		t.Logf("%-20s %-18s %7d execs in %4.0fs fuzzing (%6.0f/s), %5.1fs with the build", tg.Pkg, tg.Name, execs, fuzzing.Seconds(), rate, took.Seconds())
	}
	t.Logf("all targets: %s", time.Since(total).Round(time.Second))
}

// progressLine is go test's fuzzing status; elapsed is a Go duration
// ("57s", "1m4s": a target that fuzzes past a minute on a loaded machine).
var progressLine = regexp.MustCompile(`(?m)^fuzz: elapsed: ((?:\d+h)?(?:\d+m)?\d+s), execs: (\d+) `)

// progress reads the last progress line go test -fuzz printed: the
// executions and the time spent fuzzing.
func progress(out []byte) (execs int, elapsed time.Duration, ok bool) {
	m := progressLine.FindAllSubmatch(out, -1)
	if len(m) == 0 {
		return 0, 0, false
	}
	last := m[len(m)-1]
	d, err := time.ParseDuration(string(last[1]))
	if err != nil {
		return 0, 0, false
	}
	n, _ := strconv.Atoi(string(last[2]))
	return n, d, true
}

// tail is the end of a long output.
func tail(out []byte) []byte {
	if len(out) > 4000 {
		return out[len(out)-4000:]
	}
	return out
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

// TestProgressPastAMinute: the last status line counts, whatever its
// elapsed time looks like (a target past a minute reads "1m4s").
func TestProgressPastAMinute(t *testing.T) {
	out := []byte("fuzz: elapsed: 57s, execs: 44322 (1128/sec), new interesting: 19 (total: 340)\n" +
		"fuzz: elapsed: 1m4s, execs: 50000 (851/sec), new interesting: 21 (total: 342)\nPASS\n")
	n, d, ok := progress(out)
	if !ok || n != 50000 || d != 64*time.Second {
		t.Errorf("progress: %d execs in %s (%v), want 50000 in 1m4s", n, d, ok)
	}
}
