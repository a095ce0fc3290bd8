package repl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/flowq/flowq/lang"
)

// TestScriptRefusesWrites: reading a script, the dot-commands that write
// files or an index or open another are refused, naming the line and
// the option that allows them, and write nothing; the script's queries
// still run. Typed at the prompt (Feed, as the terminal loop calls it)
// they run; with AllowWrites a script runs them too.
func TestScriptRefusesWrites(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "a", "b")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, Options{Mode: "csv"})
	h2 := newHarness(t, Options{Mode: "csv", AllowWrites: true})
	t.Chdir(work)
	script := strings.Join([]string{
		"count by verdict;",
		".output ../../escaped.csv",
		".draw 0x3db1a776c9b6aa721514c563ffa0a609ca243bc16a2c46e16e31c46936b9dcfa graph ../../tx.dot",
		".open ../../other",
		".ingest ../../../nothing",
		".output stdout",
		"count by tier;",
	}, "\n")
	h.r.opts.Stdin = strings.NewReader(script)
	if err := h.r.Run(context.Background()); !errors.Is(err, ErrFailed) {
		t.Fatalf("Run: %v, want ErrFailed", err)
	}
	out, errs := h.out.Reset(), h.err.Reset()
	for i, cmd := range []string{".output", ".draw", ".open", ".ingest", ".output"} {
		want := "stdin:" + string(rune('2'+i)) + ": " + cmd + " refused: a script read from standard input may only query, as flowq run (flowq repl --allow-writes lets a script you trust write files and the index)\n"
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if !strings.Contains(out, "verdict,transactions,example\n") || !strings.Contains(out, "tier,transactions,example\n") {
		t.Errorf("the queries did not run:\n%s", out)
	}
	for _, f := range []string{"escaped.csv", "tx.dot", "other"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("%s was written (%v)", f, err)
		}
	}

	// at the prompt, a person's command runs
	h.feed(".output ../../typed.csv", "count by verdict;", ".output stdout")
	if b, err := os.ReadFile(filepath.Join(dir, "typed.csv")); err != nil || !strings.HasPrefix(string(b), "verdict,") {
		t.Errorf("typed .output: %q, %v", b, err)
	}

	// a trusted script
	h2.r.opts.Stdin = strings.NewReader(".output ../../trusted.csv\ncount by verdict;\n")
	if err := h2.r.Run(context.Background()); err != nil {
		t.Fatalf("trusted script: %v (%s)", err, h2.err.Reset())
	}
	if b, err := os.ReadFile(filepath.Join(dir, "trusted.csv")); err != nil || !strings.HasPrefix(string(b), "verdict,") {
		t.Errorf("trusted .output: %q, %v", b, err)
	}
}

// TestDeeplyNestedStatement: the statement of issue 15 (300,000 levels of
// parentheses) overflowed the parser's stack and took the REPL down. Now
// it is an error, and the REPL goes on.
func TestDeeplyNestedStatement(t *testing.T) {
	h := newHarness(t, Options{})
	n := 300_000
	_, errs := h.feed("find where "+strings.Repeat("(", n), "pools > 1"+strings.Repeat(")", n)+";")
	if !strings.HasPrefix(errs, "stdin:1:268: parentheses nested 257 deep here, over the limit of 256\n") {
		t.Fatalf("stderr %.300q", errs)
	}
	if out, errs := h.feed("count by verdict;"); errs != "" || !strings.Contains(out, "arbitrage") {
		t.Fatalf("the next statement: %q %q", out, errs)
	}
}

// TestStatementOverLimit: a statement over lang.MaxQueryBytes is reported
// once, when it passes the limit, and skipped through its ";", unstored;
// the statement after it runs.
func TestStatementOverLimit(t *testing.T) {
	h := newHarness(t, Options{})
	line := strings.Repeat("pools > 1 or ", 1000)
	lines := []string{"count by verdict; find where"}
	for range lang.MaxQueryBytes/len(line) + 10 {
		lines = append(lines, line)
	}
	lines = append(lines, "pools > 1; count", "by tier;")
	out, errs := h.feed(lines...)
	if errs != "stdin:1:19: this statement is over 1048576 bytes (1 MiB), the limit on one statement: skipped through its \";\"\n" {
		t.Fatalf("stderr %.300q", errs)
	}
	if !strings.Contains(out, "verdict ") || !strings.Contains(out, "tier ") || strings.Count(out, "\ntx ") > 0 {
		t.Fatalf("stdout %q", out)
	}
	if h.r.Pending() {
		t.Fatal("a statement is open after the statements")
	}
}

// TestOpenStatementLinear: a statement of many lines is stored once, and
// each line scanned once: 5,000 lines allocated 400 MB when each line
// copied and rescanned the statement so far.
func TestOpenStatementLinear(t *testing.T) {
	h := newHarness(t, Options{})
	var before, after runtime.MemStats
	h.feed("find where pools > 1")
	runtime.ReadMemStats(&before)
	for range 5000 {
		h.r.Feed(context.Background(), "  or pools > 1 -- and a comment")
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Fatalf("5,000 lines of a statement allocated %d bytes", got)
	}
	if !h.r.Pending() {
		t.Fatal("the statement is not open")
	}
	if out, errs := h.feed(";"); errs != "" || !strings.HasPrefix(out, "tx ") {
		t.Fatalf("the statement: %.300q %.300q", out, errs)
	}
}

// TestScriptLongLine: a script line over MaxLineBytes stops the script
// with an error naming the line, instead of being read whole.
func TestScriptLongLine(t *testing.T) {
	h := newHarness(t, Options{})
	h.r.opts.Stdin = strings.NewReader("count by verdict;\n" + strings.Repeat(" ", MaxLineBytes+1) + "\ncount by tier;\n")
	if err := h.r.Run(context.Background()); !errors.Is(err, ErrFailed) {
		t.Fatalf("Run: %v", err)
	}
	out, errs := h.out.Reset(), h.err.Reset()
	if errs != "stdin:2: a line over 16777216 bytes (16 MiB), the limit on one line of a script: the script stops here\n" {
		t.Fatalf("stderr %q", errs)
	}
	if !strings.Contains(out, "verdict ") || strings.Contains(out, "tier ") {
		t.Fatalf("stdout %q", out)
	}
}

// TestReadBounded: .read of a device stops at MaxScriptBytes with an
// error naming the limit, instead of reading until memory runs out.
func TestReadBounded(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Fatalf("this test reads /dev/zero: %v", err)
	}
	h := newHarness(t, Options{})
	_, errs := h.feed(".read /dev/zero")
	if errs != "/dev/zero: over 67108864 bytes (64 MiB), the limit on a script .read reads\n" {
		t.Fatalf("stderr %q", errs)
	}
}
