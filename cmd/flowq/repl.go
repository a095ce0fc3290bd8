package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/repl"
	"github.com/flowq/flowq/repl/local"
	"github.com/flowq/flowq/repl/serve"
	terminal "github.com/flowq/flowq/repl/term"
)

const (
	envHistory = "FLOWQ_HISTORY"
	// envQueryDelay is a test hook, not a setting: every row an index scan
	// yields waits this long (a Go duration), so that the tests can
	// interrupt a running query on a small index. See repl.Options.QueryDelay.
	envQueryDelay = "FLOWQ_TEST_QUERY_DELAY"
)

const replUsage = `usage: flowq repl [--index DIR] [--create] [--chain NAME] [--history FILE] [--mode MODE] [--timer] [--allow-writes]
       flowq repl --lake DIR [flags]

An interactive shell over the index, opened read-write (so .ingest can add
to it). Statements end with ";" and may span lines; lines starting with "."
are commands (.help lists them). Ctrl-C cancels the running statement or
clears the one being typed, Ctrl-D leaves, Tab completes, Up recalls a
statement from the history. When the index does not exist, the REPL asks
whether to create it (--create: create it without asking).

When the input is not a terminal (flowq repl < script.fq), it is read as a
script, without prompts, and as safely as flowq run reads a query file:
the index is opened read-only, and .output, .draw, .open and .ingest,
which write files or an index, are refused, unless --allow-writes is
given for a script you trust.

--lake DIR opens the Parquet lake at DIR (flowq ingest --lake) instead of
the index: statements run as SQL on embedded DuckDB (a flowq built with
-tags duckdb), as flowq query --lake runs them; .open PATH goes back to an
index, .open --lake DIR switches lakes, .status says which is open.

Exit status: 0, or 1 when the index does not open, or when a statement of
a script failed or was interrupted; 2 for a usage error.

flags:
`

// historyFile is where the history lives: --history (empty: none), else
// $FLOWQ_HISTORY (empty: none), else "history" beside the default index
// directory ($XDG_DATA_HOME/flowq/history, ~/.local/share/flowq/history).
func historyFile(flagVal string, set bool, lookupEnv func(string) (string, bool)) (string, error) {
	if set {
		return flagVal, nil
	}
	if v, ok := lookupEnv(envHistory); ok {
		return v, nil
	}
	dir, err := dataDir(lookupEnv)
	if err != nil {
		return "", fmt.Errorf("no history file: give --history FILE or set %s", envHistory)
	}
	return filepath.Join(dir, "history"), nil
}

// replCmd is `flowq repl`.
func replCmd(args []string, stdin io.Reader, stdout, stderr io.Writer, lookupEnv func(string) (string, bool)) int {
	fs := newFlagSet("repl", replUsage, stderr)
	var cf chainFlags
	cf.register(fs)
	dir := fs.String("index", "", indexFlagHelp)
	var hist string
	var histSet bool
	fs.Func("history", "history file, one statement a line (env "+envHistory+"; empty: none; default history beside the default index directory)",
		func(s string) error { hist, histSet = s, true; return nil })
	mode := fs.String("mode", "table", "output mode: "+strings.Join(repl.Modes, ", "))
	timer := fs.Bool("timer", false, "print each statement's row count and time")
	create := fs.Bool("create", false, "create the index when it does not exist (at a terminal, the REPL asks)")
	lakeDir := fs.String("lake", "", "open the Parquet lake at DIR (flowq ingest --lake) instead of the index: statements run as SQL on DuckDB (a flowq built with -tags duckdb)")
	allowWrites := fs.Bool("allow-writes", false, "reading a script (input not a terminal): open the index read-write and let .output, .draw, .open and .ingest write files and the index")
	rest, code, ok := parseArgs(fs, args)
	if !ok {
		return code
	}
	usageErr := usageFailer(stderr, "repl")
	if len(rest) > 0 {
		return usageErr("unexpected argument %q (scripts: flowq repl < FILE, or .read FILE)", rest[0])
	}
	if !slices.Contains(repl.Modes, *mode) {
		return usageErr("--mode %q: want %s", *mode, strings.Join(repl.Modes, ", "))
	}
	cfg, err := cf.config(lookupEnv)
	if err != nil {
		return usageErr("%v", err)
	}
	path, err := indexDir(*dir, lookupEnv)
	if err != nil {
		return usageErr("%v", err)
	}
	hfile, err := historyFile(hist, histSet, lookupEnv)
	if err != nil {
		return usageErr("%v", err)
	}
	var delay time.Duration
	if v, ok := lookupEnv(envQueryDelay); ok && v != "" {
		if delay, err = time.ParseDuration(v); err != nil {
			return usageErr("%s: %v", envQueryDelay, err)
		}
	}
	in, _ := stdin.(*os.File)
	interactive := in != nil && isTerminal(in) && isTerminal(stdout)
	openLakeDir := func(dir string, warn io.Writer) (repl.Lake, error) { return openLake(cfg, dir, warn) }
	if *lakeDir != "" {
		if *dir != "" {
			return usageErr("give --index DIR or --lake DIR, not both")
		}
		l, err := openLake(cfg, *lakeDir, stderr)
		if err != nil {
			fmt.Fprintf(stderr, "flowq repl: lake %s: %v\n", *lakeDir, err)
			return 1
		}
		return runREPL(repl.Options{
			Cfg: cfg, Mode: *mode, Timer: *timer, Open: openLocal, OpenLake: openLakeDir, Lake: l,
			HistoryFile: hfile, Interactive: interactive, Terminal: terminal.Open, AllowWrites: *allowWrites,
			Stdin: stdin, Stdout: stdout, Stderr: stderr, QueryDelay: delay,
		}, func() {
			fmt.Fprintf(stdout, "flowq %s, lake %s (SQL on DuckDB). Statements end with \";\"; .help lists the commands.\n", version, *lakeDir)
		}, stderr)
	}
	var ix *index.Index
	var remote *serve.Client
	_, serr := os.Stat(path)
	if serr == nil {
		remote = serverFor(path, "flowq repl", stderr, lookupEnv)
	} else if os.IsNotExist(serr) && (interactive || *allowWrites) && !*create {
		if !interactive || !askCreate(in, stdout, path) {
			fmt.Fprintf(stderr, "flowq repl: no index at %s: give --create to make one, or --index DIR (flowq demo makes one of the bundled examples)\n", path)
			return 1
		}
	}
	if remote != nil {
		fmt.Fprintf(stderr, "flowq repl: the index is served by %s: statements run there; .ingest, .stats and .draw need the index itself\n", remote.Info)
	} else if interactive || *allowWrites {
		ix, err = openIndex(path)
		var full *index.NoSpaceError
		var held *index.LockedError
		if errors.As(err, &held) && !*allowWrites {
			// Another process writes it: queries read a snapshot.
			if ix, err = openReading(path, "flowq repl", stderr); err == nil {
				fmt.Fprintf(stderr, "flowq repl: the index is open read-only: queries work, .ingest does not\n")
			}
		} else if errors.As(err, &full) {
			// Queries need no space: open it for them, and say why .ingest
			// will fail.
			if ix, err = index.OpenReadOnly(path); err == nil {
				fmt.Fprintf(stderr, "flowq repl: %v\nflowq repl: the index is open read-only: queries work, .ingest does not\n", full)
			}
		}
	} else if _, err = os.Stat(path); err != nil {
		err = fmt.Errorf("no index at %s (run 'flowq ingest' first, or give --index DIR): %w", path, err)
	} else {
		ix, err = openReading(path, "flowq repl", stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "flowq repl: %v\n", err)
		return 1
	}
	withTokens(cfg, ix, "flowq repl", stderr)
	opts := repl.Options{
		Cfg: cfg, Mode: *mode, Timer: *timer, Open: openLocal, OpenLake: openLakeDir,
		HistoryFile: hfile, Interactive: interactive, Terminal: terminal.Open, AllowWrites: *allowWrites,
		Stdin: stdin, Stdout: stdout, Stderr: stderr,
		QueryDelay: delay,
	}
	if ix != nil {
		opts.Index = local.Of(ix)
	}
	if remote != nil {
		opts.Remote = remoteExec(remote)
	}
	return runREPL(opts, func() {
		fmt.Fprintf(stdout, "flowq %s, index %s. Statements end with \";\"; .help lists the commands.\n", version, path)
		if ix != nil {
			if n, err := ix.Count(context.Background()); err == nil && n == 0 {
				fmt.Fprintf(stdout, "The index is empty: .ingest FILE|DIR (or flowq ingest FILE|DIR, or --rpc URL --blocks A..B) fills it; flowq demo makes an index of the bundled examples.\n")
			}
		}
	}, stderr)
}

// runREPL runs a REPL (banner, at a terminal, first) and turns its end
// into an exit status.
func runREPL(opts repl.Options, banner func(), stderr io.Writer) int {
	r := repl.New(opts)
	defer r.Close()
	if opts.Interactive {
		banner()
	}
	err := r.Run(context.Background())
	if cerr := r.Close(); err == nil && cerr != nil {
		err = cerr
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, repl.ErrFailed):
		return 1
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "flowq repl: interrupted")
		return 1
	}
	fmt.Fprintf(stderr, "flowq repl: %v\n", err)
	return 1
}

// openLocal opens the index .open names: Badger, on this machine.
func openLocal(path string) (repl.Store, error) {
	s, err := local.Open(path)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// askCreate asks, on the terminal, whether to create the missing index
// at path; it reads one line of the answer (the terminal is in line
// mode before readline starts).
func askCreate(in *os.File, stdout io.Writer, path string) bool {
	fmt.Fprintf(stdout, "No index at %s. Create it? [y/N] ", path)
	b := make([]byte, 256)
	n, _ := in.Read(b)
	answer := strings.ToLower(strings.TrimSpace(string(b[:n])))
	return answer == "y" || answer == "yes"
}
