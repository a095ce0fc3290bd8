package index_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/trace"
)

// crashChildEnv, when set to an index directory, makes TestCrashChild the
// ingest that TestCrashSafety kills.
const crashChildEnv = "FLOWQ_CRASH_CHILD_INDEX"

// crashInputs are the inputs of the crash test: the corpus (26 files, 149
// transactions) and the bundled scenarios, in one ingest.
func crashInputs(t testing.TB) []ingest.Input {
	t.Helper()
	in := corpusInputs(t)
	more, err := ingest.Files("../examples/scenarios/geth", "../examples/mainnet")
	if err != nil {
		t.Fatal(err)
	}
	return append(in, more...)
}

// crashOptions are the child's and the reference's: two transactions per
// write, so that an ingest is many commits long and a kill lands between
// two of them or in the middle of one.
func crashOptions() ingest.Options {
	return ingest.Options{BatchTxs: 2, Workers: 2, Clock: fixedClock}
}

// TestCrashChild is the ingest run (and killed) by TestCrashSafety in a
// subprocess; it does nothing in a normal test run. It prints "commit N"
// after each committed write, so that the parent can kill it at a chosen
// point of the ingest.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("run by TestCrashSafety")
	}
	ix, err := index.Open(dir)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(3)
	}
	opt := crashOptions()
	commits := 0
	opt.AfterCommit = func(int) {
		commits++
		fmt.Printf("commit %d\n", commits)
		// Spread the ingest over time, so that a kill chosen on the
		// parent's side lands where it was aimed (the decoders and
		// analysers keep working meanwhile).
		time.Sleep(time.Millisecond)
	}
	sum, err := ingest.Ingest(context.Background(), ix, crashInputs(t), opt)
	if err != nil {
		fmt.Println("ingest:", err)
		os.Exit(3)
	}
	if err := ix.Close(); err != nil {
		fmt.Println("close:", err)
		os.Exit(3)
	}
	fmt.Printf("done %d %d\n", commits, sum.Stored)
}

// TestCrashSafety kills an ingest with SIGKILL at random points, reopens
// the index, checks that no transaction is half-written (Verify: every
// record has all its secondary keys, every secondary key its record; every
// input marker's transactions are all there), resumes the ingest, and
// checks that the result equals an uninterrupted ingest's, key for key and
// byte for byte.
//
// The kill point is chosen on the child's own progress (after its k-th
// commit, plus a random delay of up to 3 ms), so that it lands inside the
// ingest however fast or slow the machine is. FLOWQ_CRASH_TRIALS sets the
// number of trials (default 10), FLOWQ_CRASH_SEED the seed.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns subprocesses")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	trials := 10
	if s := os.Getenv("FLOWQ_CRASH_TRIALS"); s != "" {
		if trials, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FLOWQ_CRASH_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seed %d (FLOWQ_CRASH_SEED reproduces the kill points)", seed)
	rng := rand.New(rand.NewPCG(seed, 9))

	// The reference: an uninterrupted ingest, in a child too.
	refDir := filepath.Join(t.TempDir(), "ref")
	refStart := time.Now()
	total, out := runCrashChild(t, exe, refDir, -1, 0)
	refTime := time.Since(refStart)
	if total < 10 {
		t.Fatalf("the ingest is only %d commits long: %s", total, out)
	}
	ref, err := index.Open(refDir)
	if err != nil {
		t.Fatal(err)
	}
	want := index.Dump(t, ref)
	if err := ref.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	ref.Close()
	t.Logf("reference: %d commits, %d keys, %s (with the process start)", total, len(want), refTime.Round(time.Millisecond))

	for trial := range trials {
		dir := filepath.Join(t.TempDir(), "index")
		// Even trials: after the child's k-th commit, plus up to 3 ms.
		// Odd trials: at a random time since the child's start, up to
		// the reference's duration.
		killAt := 1 + rng.IntN(total-1)
		delay := time.Duration(rng.IntN(3000)) * time.Microsecond
		if trial%2 == 1 {
			killAt, delay = 0, time.Duration(rng.Int64N(int64(refTime)))
		}
		seen, _ := runCrashChild(t, exe, dir, killAt, delay)

		ix, err := index.Open(dir)
		if err != nil {
			t.Fatalf("trial %d: reopen after SIGKILL: %v", trial, err)
		}
		n, _ := ix.Count(context.Background())
		marks := 0
		_ = ix.Inputs(context.Background(), func(m index.InputMark) error { marks++; return nil })
		if err := ix.Verify(context.Background()); err != nil {
			t.Fatalf("trial %d: killed after commit %d+%s: half-written index: %v", trial, seen, delay, err)
		}
		checkMarkers(t, ix)
		sum, err := ingest.Ingest(context.Background(), ix, crashInputs(t), crashOptions())
		if err != nil {
			t.Fatalf("trial %d: resume: %v", trial, err)
		}
		if got := index.Dump(t, ix); !reflect.DeepEqual(got, want) {
			t.Fatalf("trial %d: resumed index differs from the uninterrupted one:\n%s", trial, diff(want, got))
		}
		ix.Close()
		aim := fmt.Sprintf("%s after the child's start", delay)
		if killAt > 0 {
			aim = fmt.Sprintf("%s after commit %d of %d", delay, killAt, total)
		}
		t.Logf("trial %d: SIGKILL %s (last commit seen: %d): reopened with %d transactions, %d input markers, verified; resume skipped %d inputs, stored %d; equal to the reference",
			trial, aim, seen, n, marks, sum.InputsSkipped, sum.Stored)
	}
}

// runCrashChild runs TestCrashChild on dir. With killAt > 0 it kills the
// child with SIGKILL delay after it reports commit killAt, with killAt 0
// delay after its start, and returns the last commit it saw; with killAt
// < 0 it waits for the end and returns the number of commits.
func runCrashChild(t *testing.T, exe, dir string, killAt int, delay time.Duration) (int, string) {
	t.Helper()
	cmd := exec.Command(exe, "-test.run=^TestCrashChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
	cmd.Dir, _ = os.Getwd()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if killAt == 0 {
		timer := time.AfterFunc(delay, func() { _ = cmd.Process.Signal(syscall.SIGKILL) })
		defer timer.Stop()
	}
	sc := bufio.NewScanner(stdout)
	last, done, lines := 0, -1, []string{}
	for sc.Scan() {
		line := sc.Text()
		lines = append(lines, line)
		if n, ok := strings.CutPrefix(line, "commit "); ok {
			last, _ = strconv.Atoi(n)
			if killAt > 0 && last >= killAt {
				time.Sleep(delay)
				_ = cmd.Process.Signal(syscall.SIGKILL)
				break
			}
		}
		if f := strings.Fields(line); len(f) == 3 && f[0] == "done" {
			done, _ = strconv.Atoi(f[1])
		}
	}
	go func() { // drain what the child wrote before it died
		for sc.Scan() {
		}
	}()
	err = cmd.Wait()
	text := strings.Join(lines, "\n")
	if killAt < 0 {
		if err != nil || done < 0 {
			t.Fatalf("reference ingest: %v\n%s", err, text)
		}
		return done, text
	}
	if done >= 0 {
		t.Logf("the child finished before the kill (%d commits)", done)
	}
	return last, text
}

// checkMarkers: an input with a marker has all its transactions: the
// marker's count of stored transactions is at most the records at its
// input's positions (a marker is written with its input's last
// transaction, never before).
func checkMarkers(t *testing.T, ix *index.Index) {
	t.Helper()
	failed := map[normalform.Hash]bool{}
	_ = ix.Failures(context.Background(), func(f index.Failure) error { failed[f.Tx] = f.HasTx; return nil })
	inputs := map[string]ingest.Input{}
	for _, in := range crashInputs(t) {
		inputs[in.Name] = in
	}
	err := ix.Inputs(context.Background(), func(m index.InputMark) error {
		in, ok := inputs[m.Name]
		if !ok {
			return fmt.Errorf("marker of an unknown input %s", m.Name)
		}
		data, err := in.Load(0)
		if err != nil {
			return err
		}
		res := trace.Decode(data, trace.Options{Source: in.Name})
		for _, tx := range res.Txs {
			if !tx.Meta.HasHash || failed[tx.Meta.Hash] {
				continue
			}
			if _, err := ix.Get(tx.Meta.Hash); err != nil {
				return fmt.Errorf("input %s is marked done but its tx %s is missing: %v", m.Name, tx.Meta.Hash.Hex(), err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
