package repl

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
)

// The prompts: the first line of a statement, and the lines after it
// while the statement is open.
const (
	Prompt         = "flowq> "
	ContinuePrompt = "   ...> "
	// LakePrompt is the first line's prompt while a lake is open (.open
	// --lake DIR).
	LakePrompt = "flowq lake> "
)

// inputName names the REPL's input in error positions.
const inputName = "stdin"

// Options configure a REPL.
type Options struct {
	Cfg   *normalform.Config
	Index Store // open read-write (so .ingest works), or read-only for a script without AllowWrites; the REPL owns it from now on
	// Open opens the index .open names (repl/local.Open for flowq's
	// Badger index); without it .open says the REPL cannot open one.
	Open  func(path string) (Store, error)
	Mode  string // table (default), json, csv
	Timer bool

	// HistoryFile keeps the statements, one line each, across sessions
	// (empty: no file).
	HistoryFile string

	// Interactive: read with readline (prompts, history, completion,
	// Ctrl-C) from a terminal. Otherwise the input is read line by line
	// without prompts, as a script.
	Interactive bool
	// Terminal opens the terminal an Interactive REPL reads
	// (repl/term.Open).
	Terminal func(TerminalConfig) (Terminal, error)
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer

	// AllowWrites lets a script (Run without Interactive) run the
	// dot-commands that write files or an index or open another index:
	// .output, .draw, .open and .ingest. Without it a script may only
	// query and read, as flowq run: a script someone sent writes nothing.
	// At a terminal, where a person types each line, they always run.
	AllowWrites bool

	// QueryDelay is a test hook: when set, the index waits this long
	// before each row it yields (the wait ends when the statement is
	// cancelled), so that a test can interrupt a running query on a small
	// index. flowq repl sets it from FLOWQ_TEST_QUERY_DELAY.
	QueryDelay time.Duration

	// Remote, when set, runs the statements on a flowq server instead
	// of Index (which may be nil): see Session.Remote. The dot-commands
	// that need the index itself (.stats, .ingest, .draw) say there is
	// none.
	Remote func(ctx context.Context, s *Session, file, src string, at lang.Pos) error

	// OpenLake opens the Parquet lake .open --lake DIR names (cmd/flowq:
	// DuckDB, in a flowq built with -tags duckdb); warn receives its
	// warnings (range files left out). Without it .open --lake says the
	// REPL cannot open one. Lake, when set, is a lake open from the start
	// (flowq repl --lake DIR; Index is then nil): lake.go.
	OpenLake func(dir string, warn io.Writer) (Lake, error)
	Lake     Lake
}

// REPL is the interactive loop: it reads statements (ended by ";", over
// as many lines as they take) and dot-commands (one line, no ";"), and
// runs them through a Session.
type REPL struct {
	opts Options
	cfg  *normalform.Config
	ix   Store
	sess Session

	stdout, stderr io.Writer
	outFile        *os.File // .output FILE, or nil for standard output

	// The open statement, read a line at a time and scanned once: pend
	// holds its text from just after the ";" before it (its lines joined
	// by "\n"), pendAt is where that text starts in the input, scan is
	// the splitter's state at its end, and hasCode says whether it holds
	// more than whitespace and comments (it is open only then), from
	// codeAt (an offset in pend, and the input's line and column). over
	// is set when it passed lang.MaxQueryBytes (counted from codeAt, as
	// lang counts): it was reported, and the rest of it is skipped,
	// unstored, to its ";". line counts the input lines read.
	pend    []byte
	pendAt  lang.Pos
	scan    lang.LexState
	hasCode bool
	codeAt  lang.Pos
	over    bool
	line    int

	// history receives each statement (one line) and dot-command.
	history func(string)
	// interrupt delivers Ctrl-C while a statement runs.
	interrupt <-chan os.Signal
	failed    int // statements and commands that failed
	// script: Run is reading a script (the input is not a terminal).
	script bool

	comp *completer

	// lake is the open lake (statements run through it), or nil.
	lake Lake

	// pagerOn: page a statement's result longer than the terminal
	// (.pager; only when the output is a terminal).
	pagerOn bool
	// onceFile receives the next statement's result (.once FILE).
	onceFile *os.File
}

// errQuit is what .quit returns.
var errQuit = errors.New("quit")

// ErrFailed is what Run returns, reading a script, when a statement or a
// command failed (each error was printed).
var ErrFailed = errors.New("some statements failed")

// New makes a REPL over an open index.
func New(opts Options) *REPL {
	if opts.Cfg == nil {
		opts.Cfg = normalform.DefaultConfig()
	}
	if opts.Mode == "" {
		opts.Mode = "table"
	}
	if opts.Stdout == nil {
		opts.Stdout = io.Discard
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	r := &REPL{opts: opts, cfg: opts.Cfg, stdout: opts.Stdout, stderr: opts.Stderr, pagerOn: true}
	r.sess = Session{Cfg: opts.Cfg, Out: opts.Stdout, Mode: opts.Mode, Timer: opts.Timer, Remote: opts.Remote, OrderNote: true}
	r.setIndex(opts.Index)
	if opts.Lake != nil {
		r.setLake(opts.Lake)
	}
	r.comp = newCompleter(r)
	return r
}

func (r *REPL) setIndex(ix Store) {
	r.ix = ix
	r.sess.Src = nil
	if ix != nil {
		r.sess.Src = ix
	}
	if r.opts.QueryDelay > 0 && ix != nil {
		r.sess.Src = &delayed{Source: ix, d: r.opts.QueryDelay}
	}
}

// Index is the open index.
func (r *REPL) Index() Store { return r.ix }

// Close closes the index and the output file.
func (r *REPL) Close() error {
	var err error
	if r.onceFile != nil {
		r.onceFile.Close()
		r.onceFile = nil
	}
	if r.outFile != nil {
		err = r.outFile.Close()
		r.outFile = nil
	}
	if r.ix != nil {
		if cerr := r.ix.Close(); err == nil {
			err = cerr
		}
		r.ix = nil
	}
	if cerr := r.leaveLake(); err == nil {
		err = cerr
	}
	return err
}

// Prompt is the prompt for the next line: Prompt, or ContinuePrompt
// while a statement is open.
func (r *REPL) Prompt() string {
	if r.Pending() {
		return ContinuePrompt
	}
	if r.lake != nil {
		return LakePrompt
	}
	return Prompt
}

// Pending reports whether a statement is open.
func (r *REPL) Pending() bool { return r.hasCode }

// pendingText is the open statement's text so far.
func (r *REPL) pendingText() string {
	if !r.Pending() || r.over {
		return ""
	}
	return string(r.pend)
}

// Discard drops the open statement (Ctrl-C at the prompt, Ctrl-D on a
// continuation line).
func (r *REPL) Discard() {
	r.pend, r.hasCode, r.over, r.scan = r.pend[:0], false, false, lang.InCode
}

// Feed takes one line of input: a dot-command when no statement is open
// and the line starts with ".", else more of a statement; every
// statement it completes runs, in order. It reports whether the REPL
// should stop (.quit). Errors are printed, never returned: a REPL goes on.
//
// Each byte of the input is scanned once, and stored once while its
// statement is open, so that a script of any length, or a statement of
// many lines, is read in time linear in its size.
func (r *REPL) Feed(ctx context.Context, line string) (quit bool) {
	r.line++
	line = strings.TrimRight(line, "\r\n")
	chunk := line
	if r.Pending() {
		chunk = "\n" + line // the open statement goes on
	} else {
		r.Discard()
		r.pendAt = lang.Pos{Line: r.line, Column: 1}
		t := strings.TrimSpace(line)
		if c, ok := bareWords[strings.ToLower(strings.TrimRight(t, "; \t"))]; ok {
			t = c // exit, quit, \q and help, as a sqlite3 or psql user types them
		}
		if strings.HasPrefix(t, ".") {
			r.remember(t)
			err := r.command(ctx, t)
			if errors.Is(err, errQuit) {
				return true
			}
			r.report(err)
			return false
		}
	}
	// The position of chunk[i]: the joining "\n" ends the line before;
	// line starts at column 1 of this line.
	col, seg := 1-(len(chunk)-len(line)), 0
	for i := 0; i < len(chunk); {
		c := chunk[i]
		if r.scan == lang.InCode && c == ';' {
			r.keep(chunk[seg : i+1])
			if r.hasCode && !r.over {
				text, at := string(r.pend), r.pendAt
				r.remember(historyEntry(text))
				r.report(r.exec(ctx, at, text))
			}
			r.Discard()
			r.pendAt = lang.Pos{Line: r.line, Column: col + 1}
			i++
			col++
			seg = i
			continue
		}
		next, n, isCode := lang.Step(chunk, i, r.scan)
		if isCode && !r.hasCode && c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			r.hasCode, r.codeAt = true, lang.Pos{Offset: len(r.pend) + i - seg, Line: r.line, Column: col}
		}
		for _, b := range []byte(chunk[i : i+n]) {
			if utf8.RuneStart(b) {
				col++
			}
		}
		r.scan, i = next, i+n
	}
	r.keep(chunk[seg:])
	return false
}

// keep adds text to the open statement, or, once the statement is over
// lang.MaxQueryBytes, reports that once and drops the rest of it.
func (r *REPL) keep(text string) {
	if r.over {
		return
	}
	if r.hasCode && lang.TooLong(len(r.pend)+len(text)-r.codeAt.Offset) {
		r.report(fmt.Errorf("%s:%s: this statement is over %d bytes (%s), the limit on one statement: skipped through its \";\"", inputName, r.codeAt, lang.MaxQueryBytes, lang.SizeText(lang.MaxQueryBytes)))
		r.pend, r.over = nil, true
		return
	}
	r.pend = append(r.pend, text...)
}

// Finish runs the open statement, if any, as if it ended with ";": the
// end of a script ends its last statement.
func (r *REPL) Finish(ctx context.Context) {
	if !r.Pending() {
		return
	}
	if !r.over {
		text, at := string(r.pend), r.pendAt
		r.remember(historyEntry(text))
		r.report(r.exec(ctx, at, text))
	}
	r.Discard()
}

// exec runs the statement text found at position at of the input.
func (r *REPL) exec(ctx context.Context, at lang.Pos, text string) error {
	if r.ix == nil && r.sess.Remote == nil {
		return errNoIndex
	}
	return r.toOutput(func() error {
		return r.runCancellable(ctx, func(ctx context.Context) error {
			return r.sess.ExecAt(ctx, inputName, text, at)
		})
	})
}

// bareWords are the words that, alone on a line with no statement open,
// and with or without ";", are dot-commands: what a user of sqlite3,
// psql or a shell types to leave or to ask for help.
var bareWords = map[string]string{
	"exit": ".quit", "quit": ".quit", `\q`: ".quit", "help": ".help",
}

// TerminalSize is the size of w when it is a terminal (ok false
// otherwise). The terminal package (repl/term) sets it, so that this
// package does not link readline; without it nothing is a terminal and
// output is neither paged nor fitted.
var TerminalSize = func(w io.Writer) (cols, rows int, ok bool) { return 0, 0, false }

func termSize(w io.Writer) (cols, rows int, ok bool) { return TerminalSize(w) }

func (r *REPL) remember(entry string) {
	if r.history != nil && entry != "" {
		r.history(entry)
	}
}

// report prints an error of a statement or command.
func (r *REPL) report(err error) {
	switch {
	case err == nil:
		return
	case errors.Is(err, context.Canceled):
		if r.opts.Interactive {
			fmt.Fprintln(r.stderr) // after the terminal's "^C"
		}
		fmt.Fprintln(r.stderr, "cancelled")
	default:
		fmt.Fprintln(r.stderr, err)
	}
	r.failed++
}

// PanicText is a recovered panic's text on one line (Badger's span
// several), for the error that reports it.
func PanicText(p any) string { return strings.Join(strings.Fields(fmt.Sprint(p)), " ") }

// runCancellable runs fn in a goroutine with a context that Ctrl-C (a
// signal on r.interrupt) cancels, and waits for it to return.
func (r *REPL) runCancellable(ctx context.Context, fn func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for drained := false; !drained; { // a Ctrl-C from before this statement is not for it
		select {
		case <-r.interrupt:
		default:
			drained = true
		}
	}
	done := make(chan error, 1)
	go func() {
		var err error
		defer func() {
			if p := recover(); p != nil { // a panic here would end the REPL and lose its session
				err = fmt.Errorf("internal error: %s (the statement was stopped; the session goes on)", PanicText(p))
			}
			done <- err
		}()
		err = fn(ctx)
	}()
	select {
	case err := <-done:
		return err
	case <-r.interrupt:
		cancel()
		return <-done
	}
}

// Run reads and runs the input until it ends, Ctrl-D or .quit.
//
// Interactive, Ctrl-C cancels the running statement (it arrives as
// SIGINT: the terminal is in raw mode only while readline reads a line)
// or, at the prompt, clears the open statement. Reading a script, Ctrl-C
// cancels the running statement and stops (Run returns
// context.Canceled), and Run returns ErrFailed when anything failed.
func (r *REPL) Run(ctx context.Context) error {
	if !r.opts.Interactive {
		ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
		defer stop()
		return r.runScript(ctx)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	defer signal.Stop(sig)
	r.interrupt = sig
	return r.runTerminal(ctx)
}

// MaxLineBytes bounds one line of a script: far beyond any statement
// (lang.MaxQueryBytes), so that a script with no line ends cannot fill
// memory.
const MaxLineBytes = 16 << 20

var errLongLine = fmt.Errorf("a line over %d bytes (16 MiB), the limit on one line of a script", MaxLineBytes)

// readLine reads through the next "\n", or fails with errLongLine past
// max bytes.
func readLine(in *bufio.Reader, max int) (string, error) {
	var b []byte
	for {
		frag, err := in.ReadSlice('\n')
		if len(b)+len(frag) > max {
			return "", errLongLine
		}
		b = append(b, frag...)
		if err != bufio.ErrBufferFull {
			return string(b), err
		}
	}
}

// runScript reads the input line by line, without prompts or history.
// The lines are read in a goroutine so that Ctrl-C stops a script
// waiting for input too.
func (r *REPL) runScript(ctx context.Context) error {
	r.script = true
	defer func() { r.script = false }()
	type read struct {
		line string
		err  error
	}
	lines := make(chan read)
	go func() {
		in := bufio.NewReader(r.opts.Stdin)
		for {
			line, err := readLine(in, MaxLineBytes)
			select {
			case lines <- read{line, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		var rd read
		select {
		case rd = <-lines:
		case <-ctx.Done():
			return ctx.Err()
		}
		if rd.line != "" && r.Feed(ctx, rd.line) {
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if rd.err == io.EOF {
			r.Finish(ctx)
			break
		}
		if errors.Is(rd.err, errLongLine) {
			r.report(fmt.Errorf("%s:%d: %w: the script stops here", inputName, r.line+1, rd.err))
			break
		}
		if rd.err != nil {
			return rd.err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if r.failed > 0 {
		return ErrFailed
	}
	return nil
}

func (r *REPL) runTerminal(ctx context.Context) error {
	if f := r.opts.HistoryFile; f != "" {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			fmt.Fprintf(r.stderr, "history not kept: %v\n", err)
		} else if h, err := os.OpenFile(f, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err != nil {
			fmt.Fprintf(r.stderr, "history not kept: %v\n", err)
		} else {
			h.Close()
		}
	}
	if r.opts.Terminal == nil {
		return errors.New("repl: Interactive needs Options.Terminal (repl/term.Open)")
	}
	stdin := r.opts.Stdin
	if stdin == nil {
		stdin = os.Stdin
	}
	t, err := r.opts.Terminal(TerminalConfig{
		HistoryFile: r.opts.HistoryFile,
		Complete:    r.comp.Do,
		Stdin:       stdin,
		Stdout:      r.stdout,
		Stderr:      r.stderr,
	})
	if err != nil {
		return err
	}
	defer t.Close()
	r.history = func(entry string) { _ = t.SaveHistory(entry) } // an I/O error loses only the file's copy
	for {
		line, err := t.Readline(r.Prompt())
		switch {
		case errors.Is(err, ErrInterrupt):
			r.Discard() // Ctrl-C at the prompt clears the statement
			continue
		case errors.Is(err, io.EOF):
			if r.Pending() { // Ctrl-D on an open statement discards it first
				r.Discard()
				fmt.Fprintln(r.stderr, "(unfinished statement discarded; Ctrl-D again to leave)")
				continue
			}
			return nil
		case err != nil:
			return err
		}
		if r.Feed(ctx, line) {
			return nil
		}
	}
}

// A Terminal reads the lines typed at a terminal, with a prompt, history
// and completion. repl/term.Open makes one with chzyer/readline; this
// package does not link readline, so that what only runs scripts and
// statements (flowq query, run, serve) does not either.
type Terminal interface {
	// Readline reads one line after prompt: ErrInterrupt on Ctrl-C at
	// the prompt, io.EOF on Ctrl-D.
	Readline(prompt string) (string, error)
	// SaveHistory keeps entry (a whole statement, on one line).
	SaveHistory(entry string) error
	Close() error
}

// TerminalConfig is what the REPL gives a Terminal.
type TerminalConfig struct {
	HistoryFile string // empty: no history file
	// Complete is the completion at the cursor (readline's
	// AutoCompleter.Do): the endings of the candidates and the length of
	// the word they complete.
	Complete       func(line []rune, pos int) ([][]rune, int)
	Stdin          io.Reader
	Stdout, Stderr io.Writer
}

// ErrInterrupt is what a Terminal's Readline returns on Ctrl-C at the
// prompt.
var ErrInterrupt = errors.New("interrupt")
