package repl

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/show"
	"github.com/flowq/flowq/planner"
)

// Modes are the output modes.
var Modes = []string{"table", "json", "csv", "box", "markdown", "line"}

// Session evaluates query scripts against an index and renders their
// results. It is what `flowq query`, `flowq run` and the REPL share; it
// knows nothing of terminals.
type Session struct {
	Cfg   *normalform.Config
	Src   planner.Source
	Out   io.Writer
	Mode  string // table, json, csv
	Timer bool   // print each statement's time
	Echo  bool   // print each statement (and the comments before it) before its result
	// Timeout and MaxRows bound each statement (zero: the planner's
	// defaults; negative: no limit).
	Timeout time.Duration
	MaxRows int
	// Remote, when set, runs the statements in place of the planner (a
	// flowq server's client): it gets the session (its Out, Mode, Timer,
	// Echo and limits) and the text as ExecAt got it. Src is not used.
	Remote func(ctx context.Context, s *Session, file, src string, at lang.Pos) error
	// Table is how the table-like modes (table, box, markdown, line:
	// table.go) print.
	Table TableStyle
	// OrderNote: under the rows of a find without order by, say in what
	// order they came (the REPL sets it).
	OrderNote bool
}

// StatementError is a statement's failure, located in its script.
type StatementError struct {
	Err error
}

func (e *StatementError) Error() string { return e.Err.Error() }
func (e *StatementError) Unwrap() error { return e.Err }

// Exec parses src (file names it in errors) and runs its statements in
// order; it stops at the first error, which names file:line:col.
func (s *Session) Exec(ctx context.Context, file, src string) error {
	return s.ExecAt(ctx, file, src, lang.Pos{Line: 1, Column: 1})
}

// ExecAt is Exec for a text that starts at line at.Line, column at.Column
// of a larger input (a statement the REPL read): errors name the input's
// lines and columns.
func (s *Session) ExecAt(ctx context.Context, file, src string, at lang.Pos) error {
	if s.Remote != nil {
		return s.Remote(ctx, s, file, src, at)
	}
	sts, err := lang.ParseAt(file, src, at)
	if err != nil {
		return &StatementError{Err: err}
	}
	prev := 0
	for i, st := range sts {
		if s.Echo {
			end := st.End().Offset
			if end < prev || end > len(src) {
				end = prev
			}
			if i > 0 {
				fmt.Fprintln(s.Out)
			}
			echo(s.Out, src[prev:end])
			prev = end
		}
		if err := s.run(ctx, file, src, st); err != nil {
			return err
		}
	}
	return nil
}

// echo prints a script's text before a statement: its comments as they
// are, its statement lines after a prompt.
func echo(w io.Writer, text string) {
	text = strings.TrimLeft(text, "; \t\r\n")
	for _, line := range strings.Split(strings.TrimRight(text, " \t\r\n"), "\n") {
		line = strings.TrimRight(line, "\r")
		t := strings.TrimSpace(line)
		switch {
		case t == "":
			fmt.Fprintln(w)
		case strings.HasPrefix(t, "--") || strings.HasPrefix(t, "#"):
			fmt.Fprintln(w, line)
		default:
			fmt.Fprintln(w, "flowq> "+line)
		}
	}
}

func (s *Session) run(ctx context.Context, file, src string, st lang.Statement) error {
	start := time.Now()
	pl := &planner.Planner{Cfg: s.Cfg, Src: s.Src}
	q, err := pl.Build(st)
	if err != nil {
		return &StatementError{Err: err}
	}
	if q.Explain {
		fmt.Fprint(s.Out, planner.Explain(q.Plan))
		if o := orderLine(q); o != "" {
			fmt.Fprintln(s.Out, o)
		}
		return nil
	}
	r := newRenderer(s.Out, s.Mode)
	if show, ok := q.Plan.(*planner.ShowTx); ok && s.Mode == "json" {
		r.show = s.showJSON(show)
	}
	r.style = s.Table
	x := &planner.Executor{Src: s.Src, Cfg: s.Cfg, Timeout: s.Timeout, MaxRows: s.MaxRows, LendRows: r.streams()}
	err = x.Run(ctx, q, r.row)
	r.flush()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		pos := st.Pos()
		return &StatementError{Err: fmt.Errorf("%s:%d:%d: %w", file, pos.Line, pos.Column, err)}
	}
	s.afterRows(ctx, q, r.n)
	if s.Timer {
		fmt.Fprintf(s.Out, "(%d rows, %s)\n", r.n, time.Since(start).Round(time.Microsecond))
	} else if isTableMode(s.Mode) && r.n == 0 {
		fmt.Fprintln(s.Out, "(no rows)")
	}
	return nil
}

// showJSON is `show`'s answer in the JSON mode: the transaction's
// structured analysis (show.AnalysisJSON, as `flowq inspect
// --format json` prints it; with the rewrite steps when the statement
// asks for them), not its text.
func (s *Session) showJSON(p *planner.ShowTx) func(tx string) ([]byte, error) {
	steps := slices.ContainsFunc(p.Views, func(v string) bool { return v == "steps" || v == "all" })
	return func(tx string) ([]byte, error) {
		h, err := normalform.ParseHash(tx)
		if err != nil {
			return nil, fmt.Errorf("tx %q: %w", tx, err)
		}
		rec, err := s.Src.Get(h)
		if err != nil {
			return nil, err
		}
		a, err := rec.Analysis()
		if err != nil {
			return nil, fmt.Errorf("tx %s: the stored normal form does not decode: %w", h.Hex(), err)
		}
		b, err := show.MarshalAnalysis(s.Cfg, a, steps)
		return append(b, '\n'), err
	}
}

// renderer writes rows in one mode. Tables are buffered to align their
// columns; JSON lines and CSV stream.
type renderer struct {
	w    io.Writer
	mode string
	n    int
	rows []planner.Row
	csv  *csv.Writer
	// show, in the JSON mode, renders a shown transaction (by its hash).
	show func(tx string) ([]byte, error)

	style TableStyle // the table-like modes' (table.go)
}

func newRenderer(w io.Writer, mode string) *renderer {
	r := &renderer{w: w, mode: mode}
	if mode == "csv" {
		r.csv = csv.NewWriter(w)
	}
	return r
}

func (r *renderer) row(row planner.Row) error {
	r.n++
	switch r.mode {
	case "json":
		if r.show != nil && row.Get("tx") != "" {
			b, err := r.show(row.Get("tx"))
			if err != nil {
				return err
			}
			_, err = r.w.Write(b)
			return err
		}
		b, err := jsonRow(row)
		if err != nil {
			return err
		}
		_, err = r.w.Write(b)
		return err
	case "csv":
		if r.n == 1 {
			if err := r.csv.Write(CSVHeader(row)); err != nil {
				return err
			}
		}
		return r.csv.Write(CSVCells(row))
	}
	// table: a text field (show) prints as it is
	if len(row) > 0 && row[len(row)-1].Name == "text" {
		_, err := io.WriteString(r.w, row[len(row)-1].Human)
		return err
	}
	r.rows = append(r.rows, row)
	return nil
}

// Streams reports whether output mode writes each row as it comes and
// keeps none (JSON lines, CSV), so that the executor may lend it rows
// (planner.Executor.LendRows); the table modes keep them to align columns
// (and flowq serve gives those a turn of their own).
func Streams(mode string) bool { return mode == "json" || mode == "csv" }

func (r *renderer) streams() bool { return Streams(r.mode) }

// flush writes a buffered table (table.go).
func (r *renderer) flush() {
	if r.csv != nil {
		r.csv.Flush()
	}
	writeTable(r.w, r.mode, r.rows, r.style)
}
