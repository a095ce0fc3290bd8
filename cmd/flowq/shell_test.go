package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// The shell as a sqlite3 or DuckDB user expects it, on a real pty (issue
// 21): a missing index asked about, an empty one explained, tables fitted
// to the terminal's width, long results through $PAGER.

// flowqBin is the flowq the test binary runs as (TestMain puts it on
// $PATH).
func flowqBin(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("flowq")
	if err != nil {
		t.Fatalf("flowq is not on $PATH: %v", err)
	}
	return bin
}

func shellEnv(home string, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TERM=xterm", "FLOWQ_NO_SERVER=1"}, extra...)
}

// TestREPLMissingIndex: at a terminal, a missing index is asked about:
// "n" leaves it uncreated (exit 1), "y" creates it and the REPL says how
// to fill it; --create creates it without asking. A script with
// --allow-writes needs --create.
func TestREPLMissingIndex(t *testing.T) {
	bin := flowqBin(t)
	home := t.TempDir()

	no := filepath.Join(t.TempDir(), "no")
	tm := startREPL(t, bin, shellEnv(home), "--index", no, "--history", "")
	tm.expect(`No index at .*no\. Create it\? \[y/N\] $`)
	tm.send("n" + enter)
	tm.expect(`no index at .*no: give --create to make one`)
	if code := tm.exit(); code != 1 {
		t.Errorf("declined: exit %d, want 1", code)
	}
	if _, err := os.Stat(no); !os.IsNotExist(err) {
		t.Errorf("declined, the index was made anyway (%v)", err)
	}

	yes := filepath.Join(t.TempDir(), "yes")
	tm = startREPL(t, bin, shellEnv(home), "--index", yes, "--history", "")
	tm.expect(`Create it\? \[y/N\] $`)
	tm.send("y" + enter)
	tm.expect(`The index is empty: \.ingest FILE\|DIR .*flowq demo makes an index of the bundled examples\.\n`)
	tm.prompt()
	mainnet, err := filepath.Abs("../../examples/mainnet")
	if err != nil {
		t.Fatal(err)
	}
	tm.send(".ingest " + mainnet + enter)
	tm.expect(`4 transactions stored`)
	tm.prompt()
	tm.send("exit" + enter)
	if code := tm.exit(); code != 0 {
		t.Errorf("exit: status %d", code)
	}

	made := filepath.Join(t.TempDir(), "made")
	tm = startREPL(t, bin, shellEnv(home), "--index", made, "--history", "", "--create")
	tm.expect(`The index is empty`)
	tm.prompt()
	tm.send(`\q` + enter)
	if code := tm.exit(); code != 0 {
		t.Errorf("--create: exit %d", code)
	}

	script := filepath.Join(t.TempDir(), "script")
	_, errs, code := command(t, "count by verdict;\n", bin, "repl", "--index", script, "--history", "", "--allow-writes")
	if code != 1 || !strings.Contains(errs, "give --create to make one") {
		t.Errorf("a script on a missing index: exit %d: %s", code, errs)
	}
	out, errs, code := command(t, "count by verdict;\n", bin, "repl", "--index", script, "--history", "", "--allow-writes", "--create")
	if code != 0 || out != "(no rows)\n" {
		t.Errorf("a script with --create: exit %d: %q %s", code, out, errs)
	}
}

// TestREPLWidthAndPager: at a terminal 100 columns wide, a table's lines
// fit in 100 columns (wide cells cut with "…"); a result longer than the
// screen goes through $PAGER, and not with .pager off.
func TestREPLWidthAndPager(t *testing.T) {
	bin := flowqBin(t)
	ixDir := replIndex(t)
	// the pager marks each line it shows
	tm := startREPL(t, bin, shellEnv(t.TempDir(), "PAGER=sed 's/^/PAGED:/'"), "--index", ixDir, "--history", "")
	if err := pty.Setsize(tm.pty, &pty.Winsize{Rows: 30, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	tm.prompt()
	tm.send("find limit 3;" + enter)
	table := tm.expect(`(?s)tx .*flowq> $`)
	lines := strings.Split(strings.TrimSuffix(table, "flowq> "), "\n")
	for _, l := range lines {
		if n := len([]rune(l)); n > 100 {
			t.Errorf("a line of %d columns, over the terminal's 100: %q", n, l)
		}
	}
	if !strings.Contains(table, "…") || strings.Contains(table, "PAGED:") {
		t.Errorf("want a fitted table, not paged:\n%s", table)
	}
	tm.send(".mode line" + enter)
	tm.prompt()
	tm.send("find limit 5;" + enter) // 5 rows of 12 lines: past the 30 rows
	paged := tm.expect(`(?s)PAGED: +tx = 0x[0-9a-f]{64}\n.*flowq> $`)
	if regexp.MustCompile(`(?m)^ +tx = `).MatchString(paged) {
		t.Errorf("some lines did not go through the pager:\n%s", paged)
	}
	tm.send(".pager off" + enter)
	tm.prompt()
	tm.send("find limit 5;" + enter)
	plain := tm.expect(`(?s)tx = 0x.*flowq> $`)
	if strings.Contains(plain, "PAGED:") {
		t.Errorf(".pager off still pages:\n%s", plain)
	}
	tm.send(ctrlD)
	if code := tm.exit(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestQueryPipedStdin: a bare flowq query reads its statements from
// standard input when it is not a terminal, as flowq query - does.
func TestQueryPipedStdin(t *testing.T) {
	dir := replIndex(t)
	bin := flowqBin(t)
	out, errs, code := command(t, "count by verdict", bin, "query", "--index", dir)
	if code != 0 || !regexp.MustCompile(`(?m)^arbitrage +[0-9]+ `).MatchString(out) {
		t.Errorf("piped: exit %d: %q %s", code, out, errs)
	}
	dash, _, _ := command(t, "count by verdict", bin, "query", "--index", dir, "-")
	if dash != out {
		t.Errorf("flowq query - printed %q, the bare one %q", dash, out)
	}
}
