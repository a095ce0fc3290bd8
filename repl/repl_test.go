package repl

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/ingest"
	"github.com/flowq/flowq/repl/local"
)

// The examples every test indexes: the mainnet bundles and the geth
// scenarios, one transaction per file (exampleTxs).
var examples = []string{"../examples/mainnet", "../examples/scenarios/geth"}

// exampleTxs is how many transactions the examples hold.
func exampleTxs(t *testing.T) int {
	t.Helper()
	n := 0
	for _, d := range examples {
		files, err := filepath.Glob(filepath.Join(d, "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %d bundles, %v", d, len(files), err)
		}
		n += len(files)
	}
	return n
}

// testIndex ingests paths into a fresh index.
func testIndex(t *testing.T, paths ...string) Store {
	t.Helper()
	ix, err := index.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) > 0 {
		in, err := ingest.Files(paths...)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := ingest.Ingest(context.Background(), ix, in, ingest.Options{})
		if err != nil || sum.Failed > 0 {
			t.Fatalf("ingest: %v, %s", err, sum)
		}
	}
	return local.Of(ix)
}

// openLocal is the Open of flowq repl: Badger, through repl/local.
func openLocal(path string) (Store, error) {
	s, err := local.Open(path)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// syncBuffer is a bytes.Buffer safe for a writer goroutine and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Reset empties the buffer and returns what it held.
func (s *syncBuffer) Reset() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.b.String()
	s.b.Reset()
	return out
}

type harness struct {
	t        *testing.T
	r        *REPL
	out, err *syncBuffer
	history  []string
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	h := &harness{t: t, out: &syncBuffer{}, err: &syncBuffer{}}
	if opts.Index == nil {
		opts.Index = testIndex(t, examples...)
	}
	if opts.Open == nil {
		opts.Open = openLocal
	}
	opts.Stdout, opts.Stderr = h.out, h.err
	h.r = New(opts)
	h.r.history = func(e string) { h.history = append(h.history, e) }
	t.Cleanup(func() { h.r.Close() })
	return h
}

// feed feeds lines and returns what they printed on stdout and stderr.
func (h *harness) feed(lines ...string) (stdout, stderr string) {
	h.t.Helper()
	for _, l := range lines {
		if h.r.Feed(context.Background(), l) {
			h.t.Fatalf("line %q quit the REPL", l)
		}
	}
	return h.out.Reset(), h.err.Reset()
}

func TestMultiLineStatement(t *testing.T) {
	h := newHarness(t, Options{})
	if p := h.r.Prompt(); p != Prompt {
		t.Fatalf("prompt %q at the start", p)
	}
	out, errs := h.feed("find arbitrages", "  -- a comment; not the end", "  order by pools desc")
	if out != "" || errs != "" {
		t.Fatalf("an open statement printed %q %q", out, errs)
	}
	if p := h.r.Prompt(); p != ContinuePrompt {
		t.Fatalf("prompt %q on an open statement, want %q", p, ContinuePrompt)
	}
	out, errs = h.feed("  limit 2;")
	if errs != "" || strings.Count(out, "\n") != 3 || !strings.HasPrefix(out, "tx ") {
		t.Fatalf("want a header and two rows, got %q (stderr %q)", out, errs)
	}
	if p := h.r.Prompt(); p != Prompt {
		t.Fatalf("prompt %q after the statement", p)
	}
	if want := []string{"find arbitrages order by pools desc limit 2;"}; !equal(h.history, want) {
		t.Fatalf("history %q, want %q", h.history, want)
	}
}

func equal(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

func TestStatementsOnOneLine(t *testing.T) {
	h := newHarness(t, Options{Mode: "json"})
	out, errs := h.feed("find limit 1; count by verdict; find")
	if errs != "" {
		t.Fatal(errs)
	}
	if n := strings.Count(out, "\n"); n != 4 { // one row, then three verdicts
		t.Fatalf("want 4 JSON lines, got %d: %s", n, out)
	}
	if h.r.Prompt() != ContinuePrompt {
		t.Fatal("the last statement should be open")
	}
	out, _ = h.feed("limit 1;")
	if strings.Count(out, "\n") != 1 {
		t.Fatalf("the open statement then ran as %q", out)
	}
	if want := []string{"find limit 1;", "count by verdict;", "find limit 1;"}; !equal(h.history, want) {
		t.Fatalf("history %q, want %q", h.history, want)
	}
}

func TestErrorPositionsAreTheInput(t *testing.T) {
	h := newHarness(t, Options{})
	h.feed("find limit 1;") // line 1
	_, errs := h.feed("count by verdict; find", "  wher pools > 2;")
	// line 3, column 3 of the input
	if !strings.HasPrefix(errs, "stdin:3:3: ") || !strings.Contains(errs, "\n      wher pools > 2;\n      ^") {
		t.Fatalf("error not at the input's line 3, column 3:\n%s", errs)
	}
	_, errs = h.feed("find; fnd;")
	if !strings.HasPrefix(errs, "stdin:4:7: ") {
		t.Fatalf("error not at line 4, column 7:\n%s", errs)
	}
}

func TestDiscard(t *testing.T) {
	h := newHarness(t, Options{})
	h.feed("find arbitrages", "where pools")
	h.r.Discard()
	if h.r.Prompt() != Prompt || h.r.Pending() {
		t.Fatal("Discard left a statement open")
	}
	out, errs := h.feed("count by verdict;")
	if errs != "" || !strings.Contains(out, "arbitrage") {
		t.Fatalf("after Discard: %q %q", out, errs)
	}
}

func TestDotCommandOnlyAtStatementStart(t *testing.T) {
	h := newHarness(t, Options{})
	_, errs := h.feed("find", ".mode json")
	if h.r.sess.Mode != "table" {
		t.Fatal("a line of an open statement ran as a dot-command")
	}
	if errs != "" {
		t.Fatalf("no error expected before the ';': %s", errs)
	}
	_, errs = h.feed(";")
	if !strings.Contains(errs, "stdin:") {
		t.Fatalf("the statement with a dot line should fail to parse, got %q", errs)
	}
}

func TestRunScript(t *testing.T) {
	h := newHarness(t, Options{Mode: "csv"})
	h.r.opts.Stdin = strings.NewReader("-- a script\n.timer on\nfind arbitrages\n limit 1;\ncount by tier\n")
	err := h.r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := h.out.Reset()
	if !regexp.MustCompile(`(?s)^tx,block,.*\n\(1 rows, .*\)\ntier,transactions,example\n.*\(4 rows, `).MatchString(out) {
		t.Fatalf("unexpected script output:\n%s", out)
	}
	h.r.opts.Stdin = strings.NewReader("find;\nfnd;\n.nope\n")
	if err := h.r.Run(context.Background()); !errors.Is(err, ErrFailed) {
		t.Fatalf("a failed script returns %v, want ErrFailed", err)
	}
}

// TestInterruptCancelsStatement is Ctrl-C without a terminal: the signal
// channel the REPL watches while a statement runs.
func TestInterruptCancelsStatement(t *testing.T) {
	h := newHarness(t, Options{QueryDelay: time.Hour})
	sig := make(chan os.Signal, 1)
	h.r.interrupt = sig
	done := make(chan bool)
	go func() { done <- h.r.Feed(context.Background(), "find;") }()
	time.Sleep(50 * time.Millisecond)
	sig <- os.Interrupt
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the statement did not stop on the interrupt")
	}
	if errs := h.err.Reset(); errs != "cancelled\n" {
		t.Fatalf("stderr %q, want cancelled", errs)
	}
	// a stale interrupt does not cancel the next statement
	sig <- os.Interrupt
	h.r.opts.QueryDelay = 0
	h.r.setIndex(h.r.ix)
	out, errs := h.feed("count by verdict;")
	if errs != "" || !strings.Contains(out, "arbitrage") {
		t.Fatalf("the next statement: %q %q", out, errs)
	}
}

func TestFinishRunsTheOpenStatement(t *testing.T) {
	h := newHarness(t, Options{})
	h.feed("count by verdict")
	h.r.Finish(context.Background())
	if out := h.out.Reset(); !strings.Contains(out, "arbitrage") {
		t.Fatalf("Finish printed %q", out)
	}
}

func TestHistoryOfCommands(t *testing.T) {
	h := newHarness(t, Options{})
	h.feed("  .mode csv  ", "find limit 1;", ";", "-- nothing")
	if want := []string{".mode csv", "find limit 1;"}; !equal(h.history, want) {
		t.Fatalf("history %q, want %q", h.history, want)
	}
	if h.r.sess.Mode != "csv" {
		t.Fatal(".mode csv with spaces around did not run")
	}
}

func TestNoIndex(t *testing.T) {
	var out, errb bytes.Buffer
	r := New(Options{Stdout: &out, Stderr: &errb, Open: openLocal})
	r.Feed(context.Background(), "find;")
	r.Feed(context.Background(), ".stats")
	if strings.Count(errb.String(), errNoIndex.Error()) != 2 {
		t.Fatalf("stderr %q", errb.String())
	}
	dir := filepath.Join(t.TempDir(), "ix")
	r.Feed(context.Background(), ".open "+dir)
	defer r.Close()
	errb.Reset()
	r.Feed(context.Background(), "find;")
	if errb.Len() != 0 || !strings.Contains(out.String(), "(no rows)") {
		t.Fatalf("after .open: %q %q", out.String(), errb.String())
	}
}

// TestOpenWithoutStore: a REPL its program gave no way to open an index
// (Options.Open nil: package repl never opens Badger itself) says so on
// .open, and still has no index.
func TestOpenWithoutStore(t *testing.T) {
	var out, errb bytes.Buffer
	r := New(Options{Stdout: &out, Stderr: &errb})
	defer r.Close()
	r.Feed(context.Background(), ".open "+filepath.Join(t.TempDir(), "ix"))
	r.Feed(context.Background(), "find;")
	if got := errb.String(); !strings.Contains(got, ".open: this REPL cannot open an index") || !strings.Contains(got, errNoIndex.Error()) {
		t.Fatalf("stderr %q", got)
	}
}
