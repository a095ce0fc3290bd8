package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
)

// unclosedIngest is the command flowq-unclosed-ingest INDEX INPUT...: it
// ingests the inputs and exits without closing the index, as a process
// killed after its last write leaves it (Badger's memtable log holds the
// writes, longer than its data).
func unclosedIngest() {
	ix, err := index.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	inputs, err := ingest.Files(os.Args[2:]...)
	if err == nil {
		_, err = ingest.Ingest(context.Background(), ix, inputs, ingest.Options{})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// command runs the flowq binary (the test binary as "flowq", on $PATH:
// TestMain) in a process of its own, so that a crash is its exit status.
func command(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

// crashedIndex builds, in dir, an index that a process ended without
// closing: the bundled mainnet transactions closed cleanly, then the
// scenarios ingested by flowq-unclosed-ingest.
func crashedIndex(t *testing.T, dir string) {
	t.Helper()
	if _, errs, code := flowq(t, nil, "", "ingest", "--index", dir, "../../examples/mainnet"); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, errs)
	}
	if _, errs, code := command(t, "", "flowq-unclosed-ingest", dir, "../../examples/scenarios/geth"); code != 0 {
		t.Fatalf("unclosed ingest: exit %d: %s", code, errs)
	}
	if mems, _ := filepath.Glob(filepath.Join(dir, "*.mem")); len(mems) == 0 {
		t.Fatal("the unclosed index has no memtable log")
	}
}

// readOnlyCommands runs verify, query, export, ingest --failures and a
// REPL script on the index at dir, each in its own process, and checks
// that each works and sees every transaction (want).
func readOnlyCommands(t *testing.T, dir string, want int) {
	t.Helper()
	for _, c := range []struct {
		stdin string
		args  []string
		out   string
	}{
		{"", []string{"verify", "--index", dir}, fmt.Sprintf("%d transactions, every key consistent with its record", want)},
		{"", []string{"query", "--index", dir, "--format", "csv", "count transactions by verdict"}, "verdict,transactions,example"},
		{"", []string{"export", "--index", dir, "--format", "jsonl"}, `"tx":`},
		{"", []string{"ingest", "--failures", "--index", dir}, ""},
		{"count transactions by verdict;\n", []string{"repl", "--index", dir, "--history", ""}, "verdict"},
	} {
		out, errs, code := command(t, c.stdin, append([]string{"flowq"}, c.args...)...)
		if code != 0 || !strings.Contains(out, c.out) {
			t.Errorf("flowq %s: exit %d, want 0 and %q:\n%s%s", strings.Join(c.args, " "), code, c.out, out, clipText(errs))
		}
		if c.args[0] == "export" {
			if n := strings.Count(out, "\n"); n != want {
				t.Errorf("export wrote %d lines, want %d", n, want)
			}
		}
	}
}

// clipText keeps the first lines of a long output (a goroutine dump).
func clipText(s string) string {
	lines := strings.Split(s, "\n")
	if len(lines) > 12 {
		return strings.Join(lines[:12], "\n") + fmt.Sprintf("\n... (%d lines)", len(lines))
	}
	return s
}

// TestCommandsAfterCrash: after a process that wrote the index ended
// without closing it (killed), verify, query, export, ingest --failures
// and the REPL work on it, read-only, and see every write: Badger opened
// read-only used to refuse it ("Log truncate required to run DB") until
// something opened it for writing.
func TestCommandsAfterCrash(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	crashedIndex(t, dir)
	readOnlyCommands(t, dir, demoTxs(t))
	// The next ingest resumes as usual.
	if _, errs, code := flowq(t, nil, "", "ingest", "--index", dir, "../../examples/mainnet", "../../examples/scenarios/geth"); code != 0 {
		t.Fatalf("ingest after the crash: exit %d: %s", code, errs)
	}
}

// panicWriter panics on every write: a bug anywhere below run.
type panicWriter struct{}

func (panicWriter) Write([]byte) (int, error) { panic("boom\nwith a second line") }

// TestPanicIsShort: a panic below run ends the command with exit status
// 1 and one short line on stderr, not a stack trace; FLOWQ_DEBUG lets it
// through.
func TestPanicIsShort(t *testing.T) {
	var errb bytes.Buffer
	code := run([]string{"version"}, strings.NewReader(""), panicWriter{}, &errb, func(string) (string, bool) { return "", false })
	if code != 1 || errb.String() != "flowq: internal error: boom ... (set FLOWQ_DEBUG=1 to see where)\n" {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	defer func() {
		if recover() == nil {
			t.Fatal("with FLOWQ_DEBUG set, the panic should go through")
		}
	}()
	run([]string{"version"}, strings.NewReader(""), panicWriter{}, &errb, func(k string) (string, bool) { return "1", k == envDebug })
}

// TestOpenFailureIsRuntime: an index directory that exists but cannot be
// opened is a runtime failure (exit status 1), not a usage error.
func TestOpenFailureIsRuntime(t *testing.T) {
	dir := t.TempDir() // exists, holds no index
	for _, args := range [][]string{
		{"query", "--index", dir, "find arbitrages"},
		{"verify", "--index", dir},
		{"export", "--index", dir},
	} {
		_, errs, code := flowq(t, nil, "", args...)
		if code != 1 || !strings.Contains(errs, dir) {
			t.Errorf("flowq %s: exit %d, want 1: %s", strings.Join(args, " "), code, errs)
		}
	}
}
