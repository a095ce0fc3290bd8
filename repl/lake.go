package repl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
	nfshow "github.com/flowq/flowq/normalform/show"
	"github.com/flowq/flowq/planner"
)

// Runner runs statements somewhere other than the planner's executor over
// an index: the Parquet lake's SQL (cmd/flowq, flowq query --lake). Its
// rows are the planner's (same columns, same values), and a Session prints
// them as it prints the index's.
type Runner interface {
	// Explain is what explain prints for a statement (the SQL).
	Explain(st lang.Statement) (string, error)
	// Run runs one statement (not an explain) and gives its rows.
	Run(ctx context.Context, st lang.Statement, emit func(planner.Row) error) error
	// Analysis reads one transaction's analysis (show in the JSON mode).
	Analysis(tx normalform.Hash) (*normalform.Analysis, error)
}

// Lake is a Parquet lake open in the REPL (.open --lake DIR, flowq repl
// --lake DIR): its statements run through it as SQL (cmd/flowq opens it on
// embedded DuckDB).
type Lake interface {
	Runner
	// Path names the lake's directory.
	Path() string
	Close() error
}

// PartialError is a Runner's answer to a statement that ran without some
// of its data: the rows it gave are not the whole answer. Missing names
// what is left out (block ranges); the Runner warned before the rows.
type PartialError struct {
	Missing []string
}

func (e *PartialError) Error() string {
	return "partial answer: " + strings.Join(e.Missing, ", ") + " missing (unreadable lake files, named above): the rows printed are not the whole answer"
}

// ExecWith runs a script's statements through a Runner, printing their
// rows in the session's mode as ExecAt prints the index's. A statement
// that answers partially (PartialError) does not stop the script: the
// next ones run, and ExecWith returns the partial answers' errors at the
// end, so that a caller's exit status says the output is not whole.
func (s *Session) ExecWith(ctx context.Context, file, src string, at lang.Pos, run Runner) error {
	sts, err := lang.ParseAt(file, src, at)
	if err != nil {
		return &StatementError{Err: err}
	}
	var partial []error
	for _, st := range sts {
		err := s.runWith(ctx, file, st, run)
		var p *PartialError
		if errors.As(err, &p) {
			partial = append(partial, err)
			continue
		}
		if err != nil {
			return err
		}
	}
	if len(partial) > 0 {
		return &StatementError{Err: errors.Join(partial...)}
	}
	return nil
}

func (s *Session) runWith(ctx context.Context, file string, st lang.Statement, run Runner) error {
	start := time.Now()
	fail := func(err error) error {
		pos := st.Pos()
		return &StatementError{Err: fmt.Errorf("%s:%d:%d: %w", file, pos.Line, pos.Column, err)}
	}
	if _, ok := st.(*lang.Explain); ok {
		text, err := run.Explain(st)
		if err != nil {
			return fail(err)
		}
		fmt.Fprintln(s.Out, text)
		return nil
	}
	r := newRenderer(s.Out, s.Mode)
	if show, ok := st.(*lang.Show); ok && s.Mode == "json" {
		steps := slices.ContainsFunc(show.As, func(v lang.View) bool { return v == lang.ViewSteps || v == lang.ViewAll })
		r.show = func(tx string) ([]byte, error) {
			h, err := normalform.ParseHash(tx)
			if err != nil {
				return nil, fmt.Errorf("tx %q: %w", tx, err)
			}
			a, err := run.Analysis(h)
			if err != nil {
				return nil, err
			}
			b, err := nfshow.MarshalAnalysis(s.Cfg, a, steps)
			return append(b, '\n'), err
		}
	}
	r.style = s.Table
	err := run.Run(ctx, st, r.row)
	r.flush()
	var partial *PartialError
	if errors.As(err, &partial) {
		err = nil
	}
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return err
		}
		var se *StatementError
		if errors.As(err, &se) {
			return err
		}
		return fail(err)
	}
	if s.OrderNote && isTableMode(s.Mode) && r.n > 1 && lakeUnordered(st) {
		fmt.Fprintln(s.Out, "(rows in lake order: by block, then position in the block; order by METRIC chooses another)")
	}
	if s.Timer {
		fmt.Fprintf(s.Out, "(%d rows, %s)\n", r.n, time.Since(start).Round(time.Microsecond))
	} else if isTableMode(s.Mode) && r.n == 0 {
		fmt.Fprintln(s.Out, "(no rows)")
	}
	if partial != nil {
		return fail(partial)
	}
	return nil
}

// lakeUnordered: a find or match without order by, whose rows come in
// the lake's position order (the SQL's tie-break).
func lakeUnordered(st lang.Statement) bool {
	switch x := st.(type) {
	case *lang.Find:
		return x.Order == nil && !x.Target.Findings()
	case *lang.Match:
		return x.Order == nil
	}
	return false
}

// openLake is .open --lake DIR: the index (or the lake) open before is
// closed, and statements run through the lake from now on; .open PATH
// goes back to an index.
func (r *REPL) openLake(dir string) error {
	if r.opts.OpenLake == nil {
		return errors.New(".open --lake: this REPL cannot open a lake")
	}
	if r.lake != nil && samePath(r.lake.Path(), dir) {
		return fmt.Errorf("the lake %s is already open", dir)
	}
	l, err := r.opts.OpenLake(dir, r.stderr)
	if err != nil {
		return fmt.Errorf(".open --lake %s: %w", dir, err)
	}
	if err := r.leaveLake(); err != nil {
		fmt.Fprintf(r.stderr, "closing the lake: %v\n", err)
	}
	if r.ix != nil {
		if err := r.ix.Close(); err != nil {
			fmt.Fprintf(r.stderr, "closing %s: %v\n", r.ix.Path(), err)
		}
		r.setIndex(nil)
	}
	r.setLake(l)
	fmt.Fprintf(r.stdout, "lake %s: statements run as SQL on DuckDB over its range files (.open PATH goes back to an index)\n", dir)
	return nil
}

// setLake makes l the lake the statements run through.
func (r *REPL) setLake(l Lake) {
	r.lake = l
	r.sess.Remote = func(ctx context.Context, s *Session, file, src string, at lang.Pos) error {
		return s.ExecWith(ctx, file, src, at, l)
	}
}

// leaveLake closes the open lake, if any: statements go back to the
// index (or to the server the REPL was started with).
func (r *REPL) leaveLake() error {
	if r.lake == nil {
		return nil
	}
	err := r.lake.Close()
	r.lake = nil
	r.sess.Remote = r.opts.Remote
	return err
}

// noIndex is the error of the commands that need the index itself
// (.ingest, .stats, .draw).
func (r *REPL) noIndex() error {
	if r.lake != nil {
		return fmt.Errorf("the lake %s is open, not an index: this command needs a Badger index (.open PATH); a lake is written with flowq ingest --lake", r.lake.Path())
	}
	return errNoIndex
}

// status is .status: what the statements run on.
func (r *REPL) status(context.Context, []string, string) error {
	switch {
	case r.lake != nil:
		fmt.Fprintf(r.stdout, "lake %s (Parquet range files; statements run as SQL on DuckDB; .open PATH goes back to an index)\n", r.lake.Path())
	case r.ix != nil && r.sess.Remote != nil:
		fmt.Fprintf(r.stdout, "index %s (Badger), served by a flowq server: statements run there\n", r.ix.Path())
	case r.ix != nil:
		fmt.Fprintf(r.stdout, "index %s (Badger)\n", r.ix.Path())
	case r.sess.Remote != nil:
		fmt.Fprintln(r.stdout, "a flowq server: statements run there")
	default:
		fmt.Fprintln(r.stdout, "nothing is open: .open PATH opens an index, .open --lake DIR a lake")
	}
	return nil
}
