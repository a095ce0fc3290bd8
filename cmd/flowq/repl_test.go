package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creack/pty"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
)

// The REPL on a real pseudo-terminal, as a person uses it: the flowq
// binary is built into the test's directory and started as
// `flowq repl` on a pty, over an index of examples/mainnet and
// examples/scenarios/geth; the test types keys (Enter is "\r", Up is
// ESC [ A, Tab, Ctrl-C, Ctrl-D) and reads the screen. Output is matched
// by regular expressions on the screen's text (the output played on a
// minimal terminal: see render), each wait bounded by a deadline. A
// failing test logs the whole screen; FLOWQ_SHOW_TERMINAL=1 logs it
// always.

// expectTimeout bounds each wait for output: generous, for a loaded
// machine; a passing run waits far less.
const expectTimeout = 20 * time.Second

// term is a flowq process on a pty.
type term struct {
	t   *testing.T
	cmd *exec.Cmd
	pty *os.File

	mu   sync.Mutex
	raw  []byte        // all the output so far
	seen int           // how much of render(raw) the expectations consumed
	more chan struct{} // a signal after each read
	eof  chan struct{} // closed when the pty has no more output

	exited  chan struct{} // closed when the process has ended
	waitErr error         // cmd.Wait's, once exited is closed
}

// startREPL runs `flowq repl` with args on a new pty.
func startREPL(t *testing.T, bin string, env []string, args ...string) *term {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"repl"}, args...)...)
	cmd.Env = env
	cmd.Dir = t.TempDir()
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 250})
	if err != nil {
		t.Fatal(err)
	}
	tm := &term{t: t, cmd: cmd, pty: f, more: make(chan struct{}, 1), eof: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		tm.waitErr = cmd.Wait()
		close(tm.exited)
	}()
	go func() {
		defer close(tm.eof)
		b := make([]byte, 4096)
		for {
			n, err := f.Read(b)
			tm.mu.Lock()
			tm.raw = append(tm.raw, b[:n]...)
			tm.mu.Unlock()
			select {
			case tm.more <- struct{}{}:
			default:
			}
			if err != nil { // EIO once the process has closed the terminal
				return
			}
		}
	}()
	t.Cleanup(func() {
		select {
		case <-tm.exited:
		default:
			cmd.Process.Kill()
			<-tm.exited
		}
		f.Close()
		if t.Failed() || os.Getenv("FLOWQ_SHOW_TERMINAL") != "" {
			t.Logf("the terminal showed:\n%s", tm.screen())
		}
	})
	return tm
}

// csiRE is a control sequence (ESC [ parameters final), anchored.
var csiRE = regexp.MustCompile(`^\x1b\[([0-9;?]*)[ -/]*([@-~])`)

// render plays the output on a minimal terminal, as readline draws on
// it: carriage return, newline, backspace, erase line (ESC [ K) and
// display (ESC [ J), cursor left and right (ESC [ D, C); other escape
// sequences and control characters are dropped. It returns the lines,
// the last one being the line the cursor is on, without the blanks after
// the cursor (readline writes a space and a backspace after a prompt).
// Lines above the cursor's only grow as more output comes, so an offset
// into the text stays valid.
func render(b []byte) string {
	var lines []string
	var cur []rune
	x := 0
	put := func(r rune) {
		for len(cur) < x {
			cur = append(cur, ' ')
		}
		if x < len(cur) {
			cur[x] = r
		} else {
			cur = append(cur, r)
		}
		x++
	}
	s := string(b)
	for i := 0; i < len(s); {
		if s[i] == 0x1b {
			m := csiRE.FindStringSubmatch(s[i:])
			if m == nil {
				if strings.HasPrefix(s[i:], "\x1b[") && !strings.ContainsAny(s[i+2:], "@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~") {
					break // cut by the end of a read
				}
				i += 2 // ESC and one character
				continue
			}
			n, _ := strconv.Atoi(m[1])
			switch m[2] {
			case "K":
				if m[1] == "2" {
					cur = cur[:0]
				} else if x < len(cur) {
					cur = cur[:x]
				}
			case "J":
				if x < len(cur) {
					cur = cur[:x]
				}
			case "D":
				x = max(0, x-max(n, 1))
			case "C":
				x += max(n, 1)
			}
			i += len(m[0])
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '\r':
			x = 0
		case r == '\n':
			lines = append(lines, string(cur))
			cur, x = nil, 0
		case r == '\b':
			x = max(0, x-1)
		case r < ' ' || r == 0x7f:
		default:
			put(r)
		}
	}
	last := string(cur)
	if x < len(cur) {
		last = string(cur[:x]) + strings.TrimRight(string(cur[x:]), " ")
	}
	return strings.Join(append(lines, last), "\n")
}

func (tm *term) screen() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return render(tm.raw)
}

// send types keys.
func (tm *term) send(keys string) {
	tm.t.Helper()
	if _, err := tm.pty.Write([]byte(keys)); err != nil {
		tm.t.Fatalf("typing %q: %v", keys, err)
	}
}

// expect waits for output after what earlier expectations consumed to
// match re, consumes it through the match and returns the match.
func (tm *term) expect(re string) string {
	tm.t.Helper()
	rx := regexp.MustCompile(re)
	deadline := time.NewTimer(expectTimeout)
	defer deadline.Stop()
	for {
		tm.mu.Lock()
		s := render(tm.raw)
		from := min(tm.seen, len(s)) // the line the cursor is on may be being redrawn
		loc := rx.FindStringIndex(s[from:])
		if loc != nil {
			m := s[from+loc[0] : from+loc[1]]
			tm.seen = from + loc[1]
			tm.mu.Unlock()
			return m
		}
		rest := s[from:]
		tm.mu.Unlock()
		select {
		case <-tm.more:
		case <-tm.eof:
			select {
			case <-tm.more: // one last look at what came with the end
				continue
			default:
			}
			tm.t.Fatalf("the terminal closed before /%s/; unmatched output:\n%s", re, rest)
		case <-deadline.C:
			tm.t.Fatalf("no /%s/ within %s; unmatched output:\n%s", re, expectTimeout, rest)
		}
	}
}

// expectLine waits for the line the cursor is on to be re (whole) and
// consumes the output up to that line: what a line editor shows as keys
// are typed.
func (tm *term) expectLine(re string) {
	tm.t.Helper()
	rx := regexp.MustCompile(`^(?:` + re + `)$`)
	deadline := time.NewTimer(expectTimeout)
	defer deadline.Stop()
	for {
		tm.mu.Lock()
		s := render(tm.raw)
		start := strings.LastIndexByte(s, '\n') + 1
		last := s[start:]
		if rx.MatchString(last) {
			tm.seen = start // the line may still change: consume up to it
			tm.mu.Unlock()
			return
		}
		tm.mu.Unlock()
		select {
		case <-tm.more:
		case <-tm.eof:
			tm.t.Fatalf("the terminal closed before the line /%s/; it shows %q", re, last)
		case <-deadline.C:
			tm.t.Fatalf("the line is not /%s/ within %s: it shows %q", re, expectTimeout, last)
		}
	}
}

// prompt waits for the first-line prompt, at the end of the output.
func (tm *term) prompt() { tm.t.Helper(); tm.expect(`flowq> $`) }

// exit waits for the process to end and returns its exit status.
func (tm *term) exit() int {
	tm.t.Helper()
	select {
	case <-tm.exited:
	case <-time.After(expectTimeout):
		tm.t.Fatalf("flowq repl did not exit; the terminal shows:\n%s", tm.screen())
	}
	var ee *exec.ExitError
	if errors.As(tm.waitErr, &ee) {
		return ee.ExitCode()
	}
	if tm.waitErr != nil {
		tm.t.Fatal(tm.waitErr)
	}
	return 0
}

// Keys.
const (
	enter = "\r"
	up    = "\x1b[A"
	tab   = "\t"
	ctrlC = "\x03"
	ctrlD = "\x04"
	// backspace is what a terminal sends for the Backspace key (DEL).
	backspace = "\x7f"
)

// A table's header and rows: the find statement's columns.
const findHeader = `(?m)^tx +block +verdict +tier .*\n`
const findRow = `(?m)^0x[0-9a-f]{64} +[0-9]+ +arbitrage +confirmed .*\n`

func TestREPLTerminal(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "flowq")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ixDir := filepath.Join(dir, "index")
	ix, err := index.Open(ixDir)
	if err != nil {
		t.Fatal(err)
	}
	in, err := ingest.Files("../../examples/mainnet", "../../examples/scenarios/geth")
	if err != nil {
		t.Fatal(err)
	}
	if sum, err := ingest.Ingest(context.Background(), ix, in, ingest.Options{}); err != nil || sum.Failed > 0 || sum.Stored != demoTxs(t) {
		t.Fatalf("ingest: %v, %s", err, sum)
	}
	if err := ix.Close(); err != nil { // the REPL opens it read-write: one process at a time
		t.Fatal(err)
	}
	// a clean environment: no FLOWQ_* of the machine running the tests
	env := func(extra ...string) []string {
		return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TERM=xterm", "FLOWQ_INDEX=" + ixDir}, extra...)
	}

	t.Run("multi-line statement, history, Up, Ctrl-D", func(t *testing.T) {
		hist := filepath.Join(t.TempDir(), "hist", "history")
		tm := startREPL(t, bin, env(), "--history", hist)
		tm.expect(`\.help lists the commands\.\n`)
		tm.prompt()
		tm.send("find arbitrages" + enter)
		tm.expect(`\n   \.\.\.> $`) // the statement is open: the continuation prompt
		tm.send("  order by pools desc -- the biggest; first" + enter)
		tm.expect(`\n   \.\.\.> $`) // a ";" in a comment does not end it
		tm.send("  limit 2;" + enter)
		tm.expect(findHeader + findRow + findRow + `flowq> $`)
		// Up recalls the whole statement as one line; Enter runs it again
		tm.send(up)
		tm.expectLine(`flowq> find arbitrages order by pools desc limit 2;`)
		tm.send(enter)
		tm.expect(findHeader + findRow + findRow + `flowq> $`)
		// an older statement, recalled and edited into the first line of
		// a new one: the new statement is what the history keeps
		tm.send("count by verdict;" + enter)
		tm.expect(`(?m)^verdict +transactions +example\n(.*\n){3}flowq> $`)
		tm.send(up + up)
		tm.expectLine(`flowq> find arbitrages order by pools desc limit 2;`)
		tm.send(strings.Repeat(backspace, len(" limit 2;")) + enter)
		tm.expect(`flowq> find arbitrages order by pools desc\n   \.\.\.> $`)
		tm.send("limit 1;" + enter)
		tm.expect(findHeader + findRow + `flowq> $`)
		tm.send(up)
		tm.expectLine(`flowq> find arbitrages order by pools desc limit 1;`)
		tm.send(ctrlC)
		tm.prompt()
		tm.send(ctrlD)
		if code := tm.exit(); code != 0 {
			t.Fatalf("Ctrl-D: exit status %d, want 0", code)
		}
		b, err := os.ReadFile(hist)
		if err != nil {
			t.Fatal(err)
		}
		if want := "find arbitrages order by pools desc limit 2;\ncount by verdict;\nfind arbitrages order by pools desc limit 1;\n"; string(b) != want {
			t.Fatalf("history file holds %q, want each statement once, on one line:\n%s", b, want)
		}
		// the next session reads it back
		tm = startREPL(t, bin, env(), "--history", hist)
		tm.prompt()
		tm.send(up)
		tm.expectLine(`flowq> find arbitrages order by pools desc limit 1;`)
		tm.send(ctrlC) // clears the recalled line
		tm.prompt()
		tm.send(ctrlD)
		if code := tm.exit(); code != 0 {
			t.Fatalf("exit status %d", code)
		}
	})

	t.Run("Tab, .mode json, .timer, Ctrl-C and Ctrl-D on an open statement", func(t *testing.T) {
		tm := startREPL(t, bin, env(), "--history", "")
		tm.prompt()
		tm.send("fi" + tab)
		tm.expectLine(`flowq> find `)
		tm.send("arbitrages limit 1;" + enter)
		tm.expect(findHeader + findRow + `flowq> $`)

		tm.send(".ti" + tab)
		tm.expectLine(`flowq> \.timer `)
		tm.send("on" + enter)
		tm.prompt()
		tm.send(".mode json" + enter)
		tm.prompt()
		tm.send("find arbitrages limit 1;" + enter)
		tm.expect(`\n\{"tx":"0x[0-9a-f]{64}","block":[0-9]+,"verdict":"arbitrage".*\}\n\(1 rows, [0-9.]+[µnm]?s\)\nflowq> $`)

		// Ctrl-C at a prompt with a partial statement clears it
		tm.send("find arbitrages" + enter)
		tm.expect(`\n   \.\.\.> $`)
		tm.send("where pools")
		tm.expectLine(`   \.\.\.> where pools`)
		tm.send(ctrlC)
		tm.expect(`\^C\nflowq> $`)
		tm.send("count by verdict;" + enter) // would not parse after the cleared lines
		tm.expect(`\{"verdict":"(none|warning|arbitrage)","transactions":[0-9]+,.*\n.*\n.*\n\(3 rows, .*\)\nflowq> $`)

		// Ctrl-D on an open statement discards it; at an empty prompt it leaves
		tm.send("find" + enter)
		tm.expect(`\n   \.\.\.> $`)
		tm.send(ctrlD)
		tm.expect(`discarded.*\nflowq> $`)
		tm.send(ctrlD)
		if code := tm.exit(); code != 0 {
			t.Fatalf("exit status %d", code)
		}
	})

	t.Run("Ctrl-C cancels a running query", func(t *testing.T) {
		// FLOWQ_TEST_QUERY_DELAY makes every row of an index scan wait an
		// hour: the query runs until Ctrl-C cancels its context.
		tm := startREPL(t, bin, env("FLOWQ_TEST_QUERY_DELAY=1h"), "--history", "")
		tm.prompt()
		start := time.Now()
		tm.send("find arbitrages;" + enter)
		tm.expect(`find arbitrages;\n`)
		// Ctrl-C is SIGINT only once readline has left raw mode and the
		// statement runs: a person waits a moment, and presses again if
		// nothing happened.
		cancelled := make(chan struct{})
		go func() {
			tick := time.NewTicker(300 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-cancelled:
					return
				case <-tick.C:
					tm.pty.Write([]byte(ctrlC))
				}
			}
		}()
		tm.expect(`cancelled\n`)
		close(cancelled)
		tm.expect(`flowq> $`)
		if d := time.Since(start); d > time.Minute {
			t.Fatalf("cancelling took %s", d)
		}
		// the REPL goes on: a command, then leave
		tm.send(".mode" + enter)
		tm.expect(`\ntable\n`)
		tm.prompt()
		tm.send(ctrlD)
		if code := tm.exit(); code != 0 {
			t.Fatalf("exit status %d", code)
		}
	})
}

func TestRender(t *testing.T) {
	for in, want := range map[string]string{
		"flowq>  \b": "flowq> ",
		"\x1b[J\x1b[2K\rflowq> f\x1b[J\x1b[2K\rflowq> fi": "flowq> fi",
		"a\r\nb":                    "a\nb",
		"abc\x1b[2D\x1b[K":          "a",
		"abc\x1b[2DX":               "aXc",
		"ab\x1b[":                   "ab", // cut by a read
		"x\x1b[?25ly":               "xy",
		"^C\r\ncancelled\r\n":       "^C\ncancelled\n",
		"{\"a\":1}\r\n(1 rows)\r\n": "{\"a\":1}\n(1 rows)\n",
	} {
		if got := render([]byte(in)); got != want {
			t.Errorf("render(%q) = %q, want %q", in, got, want)
		}
	}
}

// replIndex is an index of the examples in a new directory.
func replIndex(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "index")
	ix, err := index.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	in, err := ingest.Files("../../examples/mainnet", "../../examples/scenarios/geth")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ingest.Ingest(context.Background(), ix, in, ingest.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestREPLScript: without a terminal, flowq repl reads its input as a
// script, without prompts; a failure makes the exit status 1.
func TestREPLScript(t *testing.T) {
	dir := replIndex(t)
	env := map[string]string{"HOME": t.TempDir()}
	out, errs, code := flowq(t, env, "-- counts\n.mode csv\ncount\n  by verdict;\n.stats\n", "repl", "--index", dir)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !regexp.MustCompile(`^verdict,transactions,example\n(none|warning|arbitrage),[0-9]+,0x`).MatchString(out) || !strings.Contains(out, fmt.Sprintf(": %d transactions\n", demoTxs(t))) {
		t.Fatalf("unexpected output:\n%s", out)
	}
	if strings.Contains(out, "flowq>") {
		t.Fatal("a script gets no prompts")
	}
	if _, err := os.Stat(filepath.Join(env["HOME"], ".local", "share", "flowq", "history")); err == nil {
		t.Error("a script should not write the history")
	}
	out, errs, code = flowq(t, env, "find limit 1;\nfind\n  wher pools > 1;\n", "repl", "--index", dir, "--mode", "json")
	if code != 1 || !strings.HasPrefix(errs, "stdin:3:3: unexpected \"wher\"") || strings.Count(out, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q, stdout %q", code, errs, out)
	}
	_, errs, code = flowq(t, env, "", "repl", "--index", dir, "--mode", "xml")
	if code != 2 || !strings.Contains(errs, `--mode "xml": want table, json, csv`) {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, errs, code = flowq(t, env, "", "repl", "--index", dir, "extra")
	if code != 2 || !strings.Contains(errs, `unexpected argument "extra"`) {
		t.Fatalf("exit %d: %s", code, errs)
	}
	_, errs, code = flowq(t, map[string]string{"FLOWQ_TEST_QUERY_DELAY": "soon"}, "", "repl", "--index", dir)
	if code != 2 || !strings.Contains(errs, "FLOWQ_TEST_QUERY_DELAY") {
		t.Fatalf("exit %d: %s", code, errs)
	}
}

func TestHistoryFile(t *testing.T) {
	env := func(kv ...string) func(string) (string, bool) {
		return func(k string) (string, bool) {
			for i := 0; i < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1], true
				}
			}
			return "", false
		}
	}
	for _, tc := range []struct {
		flag   string
		set    bool
		lookup func(string) (string, bool)
		want   string
	}{
		{"/f", true, env(envHistory, "/e"), "/f"},
		{"", true, env(envHistory, "/e"), ""},
		{"", false, env(envHistory, "/e"), "/e"},
		{"", false, env(envHistory, ""), ""},
		{"", false, env("XDG_DATA_HOME", "/x", envIndex, "/ix"), "/x/flowq/history"},
		{"", false, env("HOME", "/h"), "/h/.local/share/flowq/history"},
	} {
		got, err := historyFile(tc.flag, tc.set, tc.lookup)
		if err != nil || got != tc.want {
			t.Errorf("historyFile(%q, %v) = %q, %v; want %q", tc.flag, tc.set, got, err, tc.want)
		}
	}
}
