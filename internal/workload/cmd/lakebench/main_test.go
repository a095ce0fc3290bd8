package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flowq/flowq/index/lake"
)

// The tests start this test binary again as a shard writer.
func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) == "1" {
		os.Exit(workerMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

const testScenarios = "../../../../examples/scenarios/geth"

func smallGen(n int, rangeSize uint64) genFlags {
	return genFlags{n: n, seed: 1, blockTxs: 100, rangeSize: rangeSize, scenarios: testScenarios}
}

// TestKilledShardWriter: a shard writer process killed with SIGKILL while
// it writes a range (its temporary file is on disk) leaves no partial
// range file (every *.parquet present is whole: byte for byte the file the
// rerun writes), and a rerun of the writer completes, removes the
// temporary file and writes every range of its shard.
func TestKilledShardWriter(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	g := smallGen(4000, 5) // 40 blocks, 8 ranges of 500 transactions; shard 1/2 writes 4
	for attempt := 1; ; attempt++ {
		dir := t.TempDir()
		chainDir := filepath.Join(dir, "chain=mainnet")
		args := append(g.args(), "--lake", dir, "--shard", "1/2")
		cmd := exec.Command(exe, args...)
		cmd.Env = append(os.Environ(), workerEnv+"=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill it once a range is being written: a temporary file, a final
		// file already written (so the kill falls between two ranges' work).
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			tmps, _ := filepath.Glob(filepath.Join(chainDir, ".*.tmp"))
			done, _ := filepath.Glob(filepath.Join(chainDir, "*.parquet"))
			if len(tmps) > 0 && len(done) > 0 {
				break
			}
			time.Sleep(200 * time.Microsecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		err := cmd.Wait()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		if err != nil && !ws.Signaled() {
			t.Fatalf("attempt %d: the writer failed: %v; stderr: %s", attempt, err, stderr.String())
		}
		tmps, _ := filepath.Glob(filepath.Join(chainDir, ".*.tmp"))
		if err == nil || len(tmps) == 0 {
			// finished before the kill, or killed between two ranges: not
			// mid-range; try again
			if attempt == 10 {
				t.Fatal("ten kills, none while a range was being written")
			}
			continue
		}
		before := map[string][]byte{}
		files, err := lake.Files(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			before[f] = b
		}
		t.Logf("attempt %d: killed with %d range files written and a temporary file %s", attempt, len(files), filepath.Base(tmps[0]))

		// The rerun.
		rerun := exec.Command(exe, args...)
		rerun.Env = cmd.Env
		out, err := rerun.CombinedOutput()
		if err != nil {
			t.Fatalf("rerun: %v\n%s", err, out)
		}
		if left, _ := filepath.Glob(filepath.Join(chainDir, ".*.tmp")); len(left) != 0 {
			t.Fatalf("the rerun left temporary files: %v", left)
		}
		after, err := lake.Files(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != 4 {
			t.Fatalf("after the rerun: %d range files, want shard 1/2's 4: %v", len(after), after)
		}
		rows := 0
		for _, f := range after {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if old, ok := before[f]; ok && !bytes.Equal(old, b) {
				t.Errorf("%s: the file the killed writer left differs from the rerun's (%d and %d bytes)", f, len(old), len(b))
			}
			rs, err := lake.ReadRange(f)
			if err != nil {
				t.Fatal(err)
			}
			rows += len(rs)
		}
		if rows != 2000 {
			t.Fatalf("after the rerun: %d rows, want 2,000", rows)
		}
		return
	}
}

// The writer's own run: every row of its shard, nothing of the other's.
func TestWriteShard(t *testing.T) {
	g := smallGen(1000, 2) // 10 blocks, 5 ranges; shard 0/2 writes 3
	dir := t.TempDir()
	rep, err := writeShard(context.Background(), &g, dir, lake.Shard{I: 0, N: 2}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows != 600 || rep.Files != 3 || rep.Failed != 0 {
		t.Fatalf("%+v: want 600 rows in 3 files", rep)
	}
	files, _ := lake.Files(dir)
	for _, f := range files {
		r, _ := lake.ParseFileName(filepath.Base(f))
		if (r.First/2)%2 != 0 {
			t.Errorf("%s: another shard's range", f)
		}
	}
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		worker bool
		args   []string
		want   string
	}{
		{false, []string{"--n", "100"}, "--dir DIR is required"},
		{false, []string{"--dir", "x", "--n", "0"}, "--n 0"},
		{false, []string{"--dir", "x", "--rounds", "0"}, "--rounds 0"},
		{true, []string{"--lake", "x", "--shard", "2/2"}, "shard \"2/2\""},
		{true, []string{"--shard", "0/2"}, "--lake DIR is required"},
	} {
		var out, errb bytes.Buffer
		main := benchMain
		if tc.worker {
			main = workerMain
		}
		if code := main(tc.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

// Different row counts stop the run with both counts named.
func TestDifferentAnswersFail(t *testing.T) {
	res := []measurement{{rows: 10}, {rows: 10}, {rows: 9}}
	err := sameRows(statement{src: "count by family"}, res, []engine{&badgerEngine{}, &badgerEngine{}, &badgerEngine{}})
	if err == nil || !strings.Contains(err.Error(), "DIFFERENT ANSWERS: count by family: 10 rows on badger, 9 on badger") {
		t.Fatalf("got %v", err)
	}
	if err := sameRows(statement{src: "x"}, res[:2], []engine{&badgerEngine{}, &badgerEngine{}}); err != nil {
		t.Fatal(err)
	}
}

// fixedEngine answers every statement with the same keys.
type fixedEngine struct {
	label string
	keys  []string
}

func (f *fixedEngine) name() string { return f.label }
func (f *fixedEngine) run(_ context.Context, _ string, key func(string)) (int, error) {
	for _, k := range f.keys {
		if key != nil {
			key(k)
		}
	}
	return len(f.keys), nil
}

// As many rows, other transactions: the run stops, naming one.
func TestDifferentTransactionsFail(t *testing.T) {
	a := &fixedEngine{"lake", []string{"0xaa", "0xbb"}}
	b := &fixedEngine{"badger", []string{"0xaa", "0xcc"}}
	err := sameKeys(context.Background(), statement{src: "find where hops >= 4"}, a, b)
	if err == nil || !strings.Contains(err.Error(), "DIFFERENT ANSWERS: find where hops >= 4: 1 rows of lake are not so on badger, the first 0xbb") {
		t.Fatalf("got %v", err)
	}
	c := &fixedEngine{"badger", []string{"0xbb", "0xaa"}}
	if err := sameKeys(context.Background(), statement{src: "x"}, a, c); err != nil {
		t.Fatal(err)
	}
	// a count differing in its figure only
	d := &fixedEngine{"lake", []string{"f1=3", "f2=4"}}
	e := &fixedEngine{"badger", []string{"f1=3", "f2=5"}}
	if err := sameKeys(context.Background(), statement{src: "count by family"}, d, e); err == nil || !strings.Contains(err.Error(), "the first f2=4") {
		t.Fatalf("got %v", err)
	}
}
