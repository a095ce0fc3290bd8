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
// test logs, per target, its executions, time and rate. A target out of
// time is failed with the machine's load and memory, how long its output
// had been silent, and the goroutine dumps of its processes (SIGQUIT;
// whatever still runs 10 s later is killed: see quit). FLOWQ_FUZZ_ONLY
// (a regular expression on the target's name) runs some of them.
//
// Without FLOWQ_FUZZ_SMOKE the test is skipped (go test ./... runs every
// target's seed corpus and its testdata/fuzz regressions already, as plain
// tests). A crasher found here is written by go test to the target's
// testdata/fuzz directory: commit it with its fix, and it runs as a
// regression test from then on.
package fuzzsmoke

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
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
		var o output
		cmd.Stdout, cmd.Stderr = &o, &o
		// Out of time: what the machine and the processes were doing, then
		// a goroutine dump of each (a target once stalled with no output
		// for 5 minutes, and the kill said nothing of why). Whatever has
		// not exited WaitDelay later is killed, as before.
		var state string
		cmd.Cancel = func() error {
			state = fmt.Sprintf("no output for %s; %s", o.silence(start).Round(time.Second), machineState(cmd.Process.Pid))
			return quit(cmd.Process)
		}
		cmd.WaitDelay = 10 * time.Second
		err := cmd.Run()
		out := o.bytes()
		timedOut := ctx.Err() != nil
		cancel()
		took := time.Since(start)
		if timedOut {
			t.Errorf("%s %s: not done in %s (FLOWQ_FUZZ_TARGET_TIMEOUT); at the timeout: %s; then SIGQUIT (the goroutine dumps end the output):\n%s",
				tg.Pkg, tg.Name, budget, state, tailOf(out, 64<<10))
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
func tail(out []byte) []byte { return tailOf(out, 4000) }

// tailOf is the last n bytes of out.
func tailOf(out []byte, n int) []byte {
	if len(out) > n {
		return out[len(out)-n:]
	}
	return out
}

// output is go test's output (stdout and stderr, as CombinedOutput
// keeps them), with the time of its last write.
type output struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	last time.Time
}

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.last = time.Now()
	return o.buf.Write(p)
}

// bytes is a copy of the output so far.
func (o *output) bytes() []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	return bytes.Clone(o.buf.Bytes())
}

// silence is the time since the last output, or since start when there
// was none (go test writes nothing while it builds).
func (o *output) silence(start time.Time) time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.last.IsZero() {
		return time.Since(start)
	}
	return time.Since(o.last)
}

// quit sends SIGQUIT to go test's descendants, then to go test: a Go
// program prints every goroutine's stack on SIGQUIT, to the output
// captured, and exits. The go command itself ignores SIGQUIT (it catches
// it, and leaves it to the processes it runs, which a terminal signals
// with it), so its descendants are signalled one by one: the test binary
// (the fuzz coordinator) before its fuzz workers, or the compiler or
// linker when the build is what stalled. The coordinator is signalled
// before its workers: a worker's death seen by a coordinator still
// running is recorded as a crasher in the target's testdata (check git
// status after a timeout). They are found in /proc,
// so on Linux only; elsewhere only go test is signalled, and killed
// WaitDelay later, as before.
func quit(p *os.Process) error {
	for _, pid := range descendants(p.Pid) {
		if d, err := os.FindProcess(pid); err == nil {
			_ = d.Signal(syscall.SIGQUIT)
		}
	}
	return p.Signal(syscall.SIGQUIT)
}

// proc is a process as /proc/<pid>/stat shows it.
type proc struct {
	pid, ppid   int
	comm, state string // state: R running, S sleeping, D waiting on I/O, T stopped, Z exited
}

// procs lists the machine's processes (Linux; none elsewhere).
func procs() map[int]proc {
	out := map[int]proc{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone since
		}
		// "pid (comm) state ppid ...": comm may hold spaces and parentheses.
		open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(string(b[end+1:]))
		if len(f) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		out[pid] = proc{pid: pid, ppid: ppid, comm: string(b[open+1 : end]), state: f[0]}
	}
	return out
}

// descendants are the processes under pid, parents before children.
func descendants(pid int) []int {
	children := map[int][]int{}
	for _, p := range procs() {
		children[p.ppid] = append(children[p.ppid], p.pid)
	}
	var out []int
	for next := []int{pid}; len(next) > 0; {
		var below []int
		for _, q := range next {
			sort.Ints(children[q])
			below = append(below, children[q]...)
		}
		out = append(out, below...)
		next = below
	}
	return out
}

// machineState is what the machine was doing when a target ran out of
// time, as uptime and free would say, and the state of go test's
// processes: whether the target stalled for want of CPU or memory, or on
// its own (its processes asleep on an idle machine).
func machineState(pid int) string {
	var b strings.Builder
	if la, err := os.ReadFile("/proc/loadavg"); err == nil {
		// "1.52 0.98 0.61 3/456 12345": the loads over 1, 5 and 15
		// minutes, the threads runnable and all.
		if f := strings.Fields(string(la)); len(f) >= 4 {
			fmt.Fprintf(&b, "load %s %s %s (1, 5, 15 min) on %d CPUs, threads runnable/all %s", f[0], f[1], f[2], runtime.NumCPU(), f[3])
		}
	} else {
		fmt.Fprintf(&b, "load unknown (%v)", err)
	}
	if mi, err := os.ReadFile("/proc/meminfo"); err == nil {
		kB := map[string]int64{} // "MemAvailable:    8042312 kB"
		for _, line := range strings.Split(string(mi), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok {
				n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				kB[k] = n
			}
		}
		fmt.Fprintf(&b, "; memory %d MiB available of %d MiB, swap %d MiB free of %d MiB",
			kB["MemAvailable"]>>10, kB["MemTotal"]>>10, kB["SwapFree"]>>10, kB["SwapTotal"]>>10)
	} else {
		fmt.Fprintf(&b, "; memory unknown (%v)", err)
	}
	all := procs()
	for _, q := range append([]int{pid}, descendants(pid)...) {
		if p, ok := all[q]; ok {
			fmt.Fprintf(&b, "; pid %d %s %s", p.pid, p.comm, p.state)
		}
	}
	return b.String()
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
