package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/export"
	"github.com/flowq/flowq/index/fetch"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/planner"
	"github.com/flowq/flowq/repl"
)

const queryUsage = `usage: flowq query [flags] 'STATEMENT; ...'
       flowq query [flags] -          (statements from stdin)
       COMMAND | flowq query [flags]  (the same, when stdin is not a terminal)

Runs query statements against the index and prints their results. The
statements: 'flowq repl' and .help, .grammar (the grammar) and .schema
(the fields a condition tests, with their types).

Exit status: 0 on success, 1 when a statement fails (the error names its
line and column), 2 for a usage error.

flags:
`

const runUsage = `usage: flowq run [flags] FILE...

Runs the statements of query files in order and prints their results. It
stops at the first statement that fails, naming FILE:LINE:COL, and exits 1.

flags:
`

// queryFlags are the flags of query and run.
type queryFlags struct {
	chain   chainFlags
	dir     *string
	format  *string
	timer   *bool
	echo    *bool
	timeout *time.Duration
	maxRows *int
	lake    lakeFlags // query_lake.go: --lake DIR, --sql, --dialect
}

func (q *queryFlags) register(fs *flag.FlagSet) {
	q.chain.register(fs)
	q.dir = fs.String("index", "", indexFlagHelp)
	q.format = fs.String("format", "table", "output: "+strings.Join(repl.Modes, ", "))
	q.timer = fs.Bool("timer", false, "print each statement's row count and time")
	q.timeout = fs.Duration("timeout", planner.DefaultTimeout, "stop a statement that runs longer (negative: no limit)")
	q.maxRows = fs.Int("max-rows", planner.DefaultMaxRows, "stop a statement that returns more rows (negative: no limit)")
	q.echo = fs.Bool("echo", false, "print each statement, and the comments before it, ahead of its result (tables only)")
	q.lake.register(fs)
}

// session opens the index read-only and returns a session on it, with the
// index's closer. On error, code is the exit status: 2 for a usage error
// (a flag's value, an index directory that does not exist), 1 when the
// index cannot be opened.
func (q *queryFlags) session(stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) (s *repl.Session, closer func() error, code int, err error) {
	if !slices.Contains(repl.Modes, *q.format) {
		return nil, nil, 2, fmt.Errorf("--format %q: want one of %s", *q.format, strings.Join(repl.Modes, ", "))
	}
	cfg, err := q.chain.config(lookupEnv)
	if err != nil {
		return nil, nil, 2, err
	}
	if q.lake.dir != nil && *q.lake.dir != "" {
		return q.lakeSession(cfg, stdout, stderr)
	}
	path, err := indexDir(*q.dir, lookupEnv)
	if err != nil {
		return nil, nil, 2, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, nil, 2, fmt.Errorf("no index at %s (run 'flowq ingest' first, or give --index DIR): %w", path, err)
	}
	if c := serverFor(path, index.Command, stderr, lookupEnv); c != nil {
		s = &repl.Session{Cfg: cfg, Out: stdout, Mode: *q.format, Timer: *q.timer, Echo: *q.echo && *q.format == "table", Timeout: *q.timeout, MaxRows: *q.maxRows, Remote: remoteExec(c)}
		return s, func() error { return nil }, 0, nil
	}
	ix, err := openReading(path, index.Command, stderr)
	if err != nil {
		return nil, nil, 1, fmt.Errorf("open index %s: %w", path, err)
	}
	withTokens(cfg, ix, index.Command, stderr)
	s = &repl.Session{Cfg: cfg, Src: ix, Out: stdout, Mode: *q.format, Timer: *q.timer, Echo: *q.echo && *q.format == "table", Timeout: *q.timeout, MaxRows: *q.maxRows}
	return s, ix.Close, 0, nil
}

// queryCmd is `flowq query`.
func queryCmd(args []string, stdin io.Reader, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet("query", queryUsage, stderr)
	var qf queryFlags
	qf.register(fs)
	rest, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	piped := false
	if len(rest) == 0 {
		// echo 'count by verdict' | flowq query: statements piped in
		if f, ok := stdin.(*os.File); !ok || isTerminal(f) {
			fmt.Fprint(stderr, "flowq query: give the statements to run (or - for stdin)\n")
			return 2
		}
		rest, piped = []string{"-"}, true
	}
	src := strings.Join(rest, " ")
	name := "<query>"
	if len(rest) == 1 && rest[0] == "-" {
		b, err := readScript(stdin, "", "standard input")
		if err != nil {
			fmt.Fprintf(stderr, "flowq query: %v\n", err)
			return 1
		}
		if piped && strings.TrimSpace(string(b)) == "" { // a bare flowq query, nothing piped in
			fmt.Fprint(stderr, "flowq query: give the statements to run (none came on standard input)\n")
			return 2
		}
		src, name = string(b), "<stdin>"
	}
	if *qf.lake.sql {
		return printSQL(&qf, name, src, stdout, stderr, lookupEnv)
	}
	s, closeIx, code, err := qf.session(stdout, stderr, lookupEnv)
	if err != nil {
		fmt.Fprintf(stderr, "flowq query: %v\n", err)
		return code
	}
	defer closeIx()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	return execReport(ctx, s, name, src, stderr, "query")
}

// runCmd is `flowq run`.
func runCmd(args []string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet("run", runUsage, stderr)
	var qf queryFlags
	qf.register(fs)
	files, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	if len(files) == 0 {
		fmt.Fprint(stderr, "flowq run: give the query files to run\n")
		return 2
	}
	srcs := make([]string, len(files))
	for i, f := range files {
		b, err := readScript(nil, f, f)
		if err != nil {
			fmt.Fprintf(stderr, "flowq run: %v\n", err)
			var big *scriptSizeError
			if errors.As(err, &big) {
				return 1
			}
			return 2
		}
		srcs[i] = string(b)
	}
	s, closeIx, code, err := qf.session(stdout, stderr, lookupEnv)
	if err != nil {
		fmt.Fprintf(stderr, "flowq run: %v\n", err)
		return code
	}
	defer closeIx()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	for i, f := range files {
		if rc := execReport(ctx, s, f, srcs[i], stderr, "run"); rc != 0 {
			return rc
		}
	}
	return 0
}

// execReport runs a script and turns its error into a message and an exit
// status.
func execReport(ctx context.Context, s *repl.Session, name, src string, stderr io.Writer, cmd string) int {
	err := s.Exec(ctx, name, src)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled):
		fmt.Fprintf(stderr, "flowq %s: interrupted\n", cmd)
	default:
		fmt.Fprintf(stderr, "flowq %s: %v\n", cmd, err)
	}
	return 1
}

// readScript reads query statements from r, or from the file at path when
// r is nil, with the REPL's .read (repl.ReadScript, at most
// repl.MaxScriptBytes): a device or an endless pipe given as a query file
// stops at the limit.
func readScript(r io.Reader, path, name string) ([]byte, error) {
	b, err := repl.ReadScript(r, path)
	if errors.Is(err, repl.ErrScriptTooLong) {
		return nil, &scriptSizeError{name}
	}
	if err != nil && r != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return b, err
}

// scriptSizeError is a query file or standard input over
// repl.MaxScriptBytes.
type scriptSizeError struct{ name string }

func (e *scriptSizeError) Error() string {
	return fmt.Sprintf("%s: over %d bytes (64 MiB), the limit on the statements one run reads; stopped reading there", e.name, repl.MaxScriptBytes)
}

// exportQuery is `flowq export --query`: the query's rows, as `flowq
// query --format csv` (or json, for jsonl) writes them, without the
// query's limits on rows and time, to out or standard output.
func exportQuery(dir string, f export.Format, query, out string, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	mode := "csv"
	if f == export.JSONL {
		mode = "json"
	}
	w := stdout
	var file *os.File
	if out != "" {
		var err error
		if file, err = os.Create(out); err != nil {
			fmt.Fprintf(stderr, "flowq export: %v\n", err)
			return 1
		}
		w = file
	}
	noLimit, noRows, no := time.Duration(-1), -1, false
	qf := queryFlags{dir: &dir, format: &mode, timer: &no, echo: &no, timeout: &noLimit, maxRows: &noRows}
	s, closeIx, code, err := qf.session(w, stderr, lookupEnv)
	if err != nil {
		if file != nil {
			file.Close()
		}
		fmt.Fprintf(stderr, "flowq export: %v\n", err)
		return code
	}
	defer closeIx()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rc := execReport(ctx, s, "<query>", query, stderr, "export")
	if file != nil {
		if err := file.Close(); err != nil && rc == 0 {
			fmt.Fprintf(stderr, "flowq export: %v\n", err)
			rc = 1
		}
	}
	return rc
}

// nameTokens asks the node for the symbol and decimals of the tokens the
// ingested range touches that no table knows, into the index's token
// dictionary (index.TokensFile); it returns a line for the report, or ""
// when there was nothing to name.
func nameTokens(ctx context.Context, c *fetch.Client, ix *index.Index, cfg *normalform.Config, from, to uint64) string {
	if cfg == nil {
		cfg = normalform.DefaultConfig()
	}
	n, err := c.NameTokens(ctx, ix, cfg, from, to)
	switch {
	case err != nil:
		return fmt.Sprintf("\n  tokens not named: the node did not answer symbol() and decimals(): %v", err)
	case n > 0:
		return fmt.Sprintf("\n  %d tokens named by the node (symbol() and decimals()), kept in %s", n, index.TokensFile)
	}
	return ""
}

// withTokens adds the index's token dictionary (what a node named at
// `ingest --rpc`) to cfg; a dictionary that does not read is said, not
// fatal.
func withTokens(cfg *normalform.Config, ix *index.Index, cmd string, stderr io.Writer) {
	if ix == nil {
		return
	}
	m, err := ix.Tokens()
	if err != nil {
		fmt.Fprintf(stderr, "%s: the token dictionary is not read: %v\n", cmd, err)
		return
	}
	cfg.AddTokens(m)
}
