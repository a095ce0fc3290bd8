package repl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
)

// command is a dot-command: one line, no ";". The table of them,
// commands, is what runs them, what .help prints and what Tab completes.
type command struct {
	name    string   // with its dot
	aliases []string // other names, with their dots
	args    string   // the arguments, as .help shows them
	help    string   // one line
	// min and max are the numbers of arguments (max < 0: any).
	min, max int
	// argWords lists the words an argument may be (completion), or, with
	// paths set, the arguments are file names.
	argWords func() []string
	paths    bool
	// writes: the command writes files or an index, or opens another
	// index; a script runs it only with Options.AllowWrites.
	writes bool
	// run runs the command; rest is the line after the command's name.
	run func(r *REPL, ctx context.Context, args []string, rest string) error
}

var commands []*command

func init() {
	commands = []*command{
		{name: ".help", args: "[COMMAND]", help: "list the commands, or tell about one", max: 1,
			argWords: func() []string { return commandNames() }, run: (*REPL).help},
		{name: ".mode", args: "[table|json|csv|box|markdown|line]", help: "set (or show) the output mode: aligned table, JSON lines, CSV, a table in a box, a Markdown table, a line per field", max: 1,
			argWords: func() []string { return Modes }, run: (*REPL).mode},
		{name: ".timer", args: "[on|off]", help: "print (or not) each statement's row count and time", max: 1,
			argWords: func() []string { return []string{"on", "off"} }, run: (*REPL).timer},
		{name: ".open", args: "[--lake] PATH", help: "switch to the index at PATH (created when missing), opened read-write; --lake: to the Parquet lake at PATH (SQL on DuckDB)", min: 1, max: 2,
			paths: true, writes: true, run: (*REPL).open},
		{name: ".ingest", args: "PATH...", help: "analyse bundle files (or every *.json under folders) into the open index", min: 1, max: -1,
			paths: true, writes: true, run: (*REPL).ingest},
		{name: ".explain", args: "QUERY", help: "print the plan of a query (as the explain statement does)", min: 1, max: -1,
			run: (*REPL).explain},
		{name: ".draw", args: "TX [graph|tree] FILE.dot|.svg|.png", help: "draw a transaction's transfer graph (default) or reduced tree to a file; svg and png need Graphviz", min: 2, max: 3,
			paths: true, writes: true, argWords: func() []string { return []string{"graph", "tree"} }, run: (*REPL).draw},
		{name: ".grammar", help: "print the query language's grammar (EBNF)", run: (*REPL).grammar},
		{name: ".status", help: "say what is open: the index (Badger), a lake (Parquet, SQL on DuckDB) or a flowq server", run: (*REPL).status},
		{name: ".stats", aliases: []string{".tables"}, help: "count the index's transactions and its keys of each kind", run: (*REPL).stats},
		{name: ".read", args: "FILE", help: "run the statements of a script file", min: 1, max: 1, paths: true, run: (*REPL).read},
		{name: ".output", args: "FILE|stdout", help: "write results to FILE (truncated), or back to standard output", min: 1, max: 1,
			paths: true, writes: true, argWords: func() []string { return []string{"stdout"} }, run: (*REPL).output},
		{name: ".schema", help: "list the fields a query's conditions test, with the type of each", run: (*REPL).schema},
		{name: ".headers", args: "[on|off]", help: "print (or not) the header line of tables", max: 1,
			argWords: func() []string { return []string{"on", "off"} }, run: (*REPL).headers},
		{name: ".nullvalue", args: "[TEXT]", help: "print TEXT in empty cells of tables (no TEXT: leave them empty)", max: -1, run: (*REPL).nullvalue},
		{name: ".once", args: "FILE", help: "write the next statement's result to FILE (truncated), then back to where it was", min: 1, max: 1,
			paths: true, writes: true, run: (*REPL).once},
		{name: ".pager", args: "[on|off]", help: "page long results through $PAGER (default less) when the output is a terminal", max: 1,
			argWords: func() []string { return []string{"on", "off"} }, run: (*REPL).pager},
		{name: ".quit", aliases: []string{".exit"}, help: "leave (as Ctrl-D does; exit, quit and \\q too)",
			run: func(*REPL, context.Context, []string, string) error { return errQuit }},
	}
}

// lookup finds a command by its name or an alias (with or without the dot).
func lookup(name string) *command {
	if !strings.HasPrefix(name, ".") {
		name = "." + name
	}
	for _, c := range commands {
		if c.name == name || slices.Contains(c.aliases, name) {
			return c
		}
	}
	return nil
}

// commandNames lists every name and alias, in table order.
func commandNames() []string {
	var out []string
	for _, c := range commands {
		out = append(out, c.name)
		out = append(out, c.aliases...)
	}
	return out
}

// command runs a dot-command line.
func (r *REPL) command(ctx context.Context, line string) error {
	name, rest, _ := strings.Cut(line, " ")
	rest = strings.TrimSpace(rest)
	c := lookup(name)
	if c == nil || !strings.HasPrefix(name, ".") {
		return fmt.Errorf("unknown command %q: .help lists the commands", name)
	}
	if c.writes && r.script && !r.opts.AllowWrites {
		return fmt.Errorf("%s:%d: %s refused: a script read from standard input may only query, as flowq run (flowq repl --allow-writes lets a script you trust write files and the index)", inputName, r.line, c.name)
	}
	args := strings.Fields(rest)
	if len(args) < c.min || (c.max >= 0 && len(args) > c.max) {
		return fmt.Errorf("usage: %s", c.usage())
	}
	return c.run(r, ctx, args, rest)
}

func (c *command) usage() string {
	if c.args == "" {
		return c.name
	}
	return c.name + " " + c.args
}

func (r *REPL) help(_ context.Context, args []string, _ string) error {
	if len(args) == 1 {
		c := lookup(args[0])
		if c == nil {
			if class, ok := lang.Vocab.ClassNamed(args[0]); ok {
				return r.helpWords(class)
			}
			return fmt.Errorf("unknown command %q: .help lists the commands", args[0])
		}
		fmt.Fprintf(r.stdout, "%s\n    %s\n", c.usage(), c.help)
		if len(c.aliases) > 0 {
			fmt.Fprintf(r.stdout, "    also: %s\n", strings.Join(c.aliases, ", "))
		}
		return nil
	}
	fmt.Fprint(r.stdout, "Statements end with \";\" and may span lines (lang's grammar: .grammar); dot-commands take one line.\n")
	fmt.Fprint(r.stdout, "Ctrl-C cancels a running statement or clears the one being typed; Ctrl-D leaves; Tab completes.\n")
	fmt.Fprint(r.stdout, "Statements: find, same, match, anomalies, count, show TX, show block N, find sandwiches|backruns, count sandwiches|backruns by bot|sender|block, explain.\n")
	fmt.Fprint(r.stdout, "TX, ADDR and HASH may be shortened as flowq prints them (0x3db1…dcfa, 0x0000c…10000, 0x0 for the null address) or given as a prefix of at least 6 hex digits (0x3db1a7): the index resolves them; an ambiguous one lists its candidates.\n")
	fmt.Fprint(r.stdout, "Words: .help verdicts, tiers, paths, modes, reasons, levels, groupings, metrics, views or conditions lists them, each with what it means.\n\n")
	tw := tabwriter.NewWriter(r.stdout, 0, 0, 2, ' ', 0)
	for _, c := range commands {
		names := c.usage()
		for _, a := range c.aliases {
			names += ", " + a
		}
		fmt.Fprintf(tw, "%s\t%s\n", names, c.help)
	}
	return tw.Flush()
}

func (r *REPL) mode(_ context.Context, args []string, _ string) error {
	if len(args) == 0 {
		fmt.Fprintln(r.stdout, r.sess.Mode)
		return nil
	}
	m := strings.ToLower(args[0])
	if !slices.Contains(Modes, m) {
		return fmt.Errorf("unknown mode %q: want %s", args[0], strings.Join(Modes, ", "))
	}
	r.sess.Mode = m
	return nil
}

func (r *REPL) timer(_ context.Context, args []string, _ string) error {
	return r.onOff(".timer", &r.sess.Timer, args)
}

// onOff shows (no args) or sets a switch of a command.
func (r *REPL) onOff(name string, v *bool, args []string) error {
	if len(args) == 0 {
		fmt.Fprintln(r.stdout, map[bool]string{true: "on", false: "off"}[*v])
		return nil
	}
	switch strings.ToLower(args[0]) {
	case "on":
		*v = true
	case "off":
		*v = false
	default:
		return fmt.Errorf("usage: %s on|off", name)
	}
	return nil
}

func (r *REPL) headers(_ context.Context, args []string, _ string) error {
	on := !r.sess.Table.NoHeaders
	if err := r.onOff(".headers", &on, args); err != nil {
		return err
	}
	r.sess.Table.NoHeaders = !on
	return nil
}

func (r *REPL) nullvalue(_ context.Context, _ []string, rest string) error {
	r.sess.Table.Null = strings.Trim(rest, `"`)
	return nil
}

func (r *REPL) pager(_ context.Context, args []string, _ string) error {
	return r.onOff(".pager", &r.pagerOn, args)
}

func (r *REPL) once(_ context.Context, args []string, _ string) error {
	f, err := os.Create(args[0])
	if err != nil {
		return err
	}
	if r.onceFile != nil {
		r.onceFile.Close()
	}
	r.onceFile = f
	return nil
}

func (r *REPL) open(_ context.Context, args []string, _ string) error {
	if args[0] == "--lake" && len(args) == 2 {
		return r.openLake(args[1])
	}
	if len(args) != 1 {
		return fmt.Errorf("usage: %s", lookup(".open").usage())
	}
	path := args[0]
	if r.ix != nil && samePath(r.ix.Path(), path) {
		return fmt.Errorf("%s is already open", path)
	}
	if r.opts.Open == nil {
		return errors.New(".open: this REPL cannot open an index")
	}
	_, statErr := os.Stat(path)
	created := os.IsNotExist(statErr)
	ix, err := r.opts.Open(path)
	if err != nil {
		return err
	}
	if r.ix != nil {
		if err := r.ix.Close(); err != nil {
			fmt.Fprintf(r.stderr, "closing %s: %v\n", r.ix.Path(), err)
		}
	}
	if err := r.leaveLake(); err != nil {
		fmt.Fprintf(r.stderr, "closing the lake: %v\n", err)
	}
	r.setIndex(ix)
	if created {
		fmt.Fprintf(r.stdout, "index %s: new and empty (.ingest FILE|DIR fills it)\n", path)
		return nil
	}
	fmt.Fprintf(r.stdout, "index %s\n", path)
	return nil
}

func samePath(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// errNoIndex is the error of commands and statements that need an index.
var errNoIndex = errors.New("no index is open: .open PATH opens one")

func (r *REPL) ingest(ctx context.Context, args []string, _ string) error {
	if r.ix == nil {
		return r.noIndex()
	}
	var progress io.Writer
	if r.opts.Interactive {
		progress = r.stderr
	}
	onFailure := func(f string) {
		if progress != nil {
			fmt.Fprint(r.stderr, "\r\033[K")
		}
		fmt.Fprintln(r.stderr, f)
	}
	var sum string
	var failed int
	err := r.runCancellable(ctx, func(ctx context.Context) error {
		var err error
		sum, failed, err = r.ix.Ingest(ctx, r.cfg, args, progress, onFailure)
		return err
	})
	if sum == "" {
		return err
	}
	fmt.Fprintf(r.stdout, "%s into %s\n", sum, r.ix.Path())
	if errors.Is(err, context.Canceled) {
		return fmt.Errorf("ingest interrupted; run the same .ingest again to resume: %w", err)
	}
	if err == nil && failed > 0 {
		return fmt.Errorf("%d failures recorded (flowq ingest --failures lists them)", failed)
	}
	return err
}

func (r *REPL) explain(ctx context.Context, _ []string, rest string) error {
	if r.ix == nil && r.sess.Remote == nil {
		return errNoIndex
	}
	q := strings.TrimSpace(rest)
	return r.toOutput(func() error {
		return r.runCancellable(ctx, func(ctx context.Context) error {
			return r.sess.Exec(ctx, ".explain", "explain "+q)
		})
	})
}

func (r *REPL) grammar(context.Context, []string, string) error {
	_, err := fmt.Fprintln(r.sess.Out, strings.TrimRight(lang.Grammar(), "\n"))
	return err
}

func (r *REPL) stats(ctx context.Context, _ []string, _ string) error {
	if r.ix == nil {
		return r.noIndex()
	}
	return r.runCancellable(ctx, func(ctx context.Context) error {
		n, err := r.ix.Count(ctx)
		if err != nil {
			return err
		}
		var rows bytes.Buffer
		tw := tabwriter.NewWriter(&rows, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "kind\tkeys\tkey bytes\tvalue bytes\t\n")
		if err := r.ix.Stats(ctx, func(kind string, keys int, keyBytes, valueBytes int64) {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t\n", kind, keys, keyBytes, valueBytes)
		}); err != nil {
			return err
		}
		fmt.Fprintf(r.sess.Out, "index %s: %d transactions\n", r.ix.Path(), n)
		if err := tw.Flush(); err != nil {
			return err
		}
		_, err = r.sess.Out.Write(rows.Bytes())
		return err
	})
}

func (r *REPL) read(ctx context.Context, args []string, _ string) error {
	if r.ix == nil && r.sess.Remote == nil {
		return errNoIndex
	}
	b, err := ReadScript(nil, args[0])
	if errors.Is(err, ErrScriptTooLong) {
		return fmt.Errorf("%s: %v, the limit on a script .read reads", args[0], err)
	}
	if err != nil {
		return err
	}
	return r.toOutput(func() error {
		return r.runCancellable(ctx, func(ctx context.Context) error {
			return r.sess.Exec(ctx, args[0], string(b))
		})
	})
}

// MaxScriptBytes bounds the file .read reads: a script of 64 MiB is far
// beyond any written by hand, and .read of a device or a FIFO stops there
// instead of filling memory.
const MaxScriptBytes = 64 << 20

// ErrScriptTooLong is ReadScript's error on a script over
// MaxScriptBytes; each caller says which limit it is.
var ErrScriptTooLong = fmt.Errorf("over %d bytes (%s)", MaxScriptBytes, lang.SizeText(MaxScriptBytes))

// ReadScript reads a script from r, or from the file at path when r is
// nil, at most MaxScriptBytes of it: .read, and flowq query and run (a
// query file or standard input) read their statements with it.
func ReadScript(r io.Reader, path string) ([]byte, error) {
	if r == nil {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxScriptBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxScriptBytes {
		return nil, ErrScriptTooLong
	}
	return b, nil
}

func (r *REPL) output(_ context.Context, args []string, _ string) error {
	var f *os.File
	if args[0] != "stdout" && args[0] != "-" {
		var err error
		if f, err = os.Create(args[0]); err != nil {
			return err
		}
	}
	if r.outFile != nil {
		if err := r.outFile.Close(); err != nil {
			fmt.Fprintf(r.stderr, "closing %s: %v\n", r.outFile.Name(), err)
		}
	}
	r.outFile = f
	if f != nil {
		r.sess.Out = f
	} else {
		r.sess.Out = r.stdout
	}
	return nil
}

// draw writes a picture of an indexed transaction: DOT, or SVG and PNG
// through Graphviz, chosen by the file's extension.
func (r *REPL) draw(ctx context.Context, args []string, _ string) error {
	if r.ix == nil {
		return r.noIndex()
	}
	view, file := "graph", args[len(args)-1]
	if len(args) == 3 {
		view = args[1]
	}
	if view != "graph" && view != "tree" {
		return fmt.Errorf("view %q: want graph or tree", view)
	}
	format := strings.TrimPrefix(filepath.Ext(file), ".")
	if format != "dot" && format != "svg" && format != "png" {
		return fmt.Errorf("%s: name the file .dot, .svg or .png", file)
	}
	h, err := normalform.ParseHash(args[0])
	if err != nil {
		return fmt.Errorf("transaction %q: %v", args[0], err)
	}
	rec, err := r.ix.Get(h)
	if err != nil {
		return fmt.Errorf("transaction %s: %w", args[0], err)
	}
	a, err := rec.Analysis()
	if err != nil {
		return fmt.Errorf("transaction %s: %w", args[0], err)
	}
	var b bytes.Buffer
	if err := Draw(ctx, r.cfg, a, view, format, &b); err != nil {
		return err
	}
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(r.stderr, "%s of %s written to %s\n", map[string]string{"graph": "transfer graph", "tree": "reduced tree"}[view], h.Hex(), file)
	return nil
}

// helpWords prints the words of a class of the language's vocabulary,
// each with its help, from the table the parser and the planner read.
func (r *REPL) helpWords(class lang.Class) error {
	tw := tabwriter.NewWriter(r.stdout, 0, 0, 2, ' ', 0)
	for _, d := range lang.Vocab.Decls(class) {
		if d.Alias {
			continue
		}
		where := ""
		if d.Places == lang.InFindings {
			where = " (block findings)"
		} else if d.Places == lang.Anywhere && class != lang.ClassOperator {
			where = " (also block findings)"
		}
		fmt.Fprintf(tw, "%s\t%s%s\n", d.Word, d.Help, where)
	}
	return tw.Flush()
}
