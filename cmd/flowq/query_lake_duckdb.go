//go:build duckdb

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/flowq/flowq/index/lake/duck"
	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/block"
	"github.com/flowq/flowq/planner"
	"github.com/flowq/flowq/planner/sqlgen"
	"github.com/flowq/flowq/repl"
)

// lakeSession opens embedded DuckDB over the lake and returns a session
// whose statements run as SQL there (repl.Session.ExecWith), printed as
// the index's rows are. Warnings (range files left out) go to stderr.
func (q *queryFlags) lakeSession(cfg *normalform.Config, stdout, stderr io.Writer) (*repl.Session, func() error, int, error) {
	d, ok := sqlgen.ParseDialect(*q.lake.dialect)
	if !ok {
		return nil, nil, 2, fmt.Errorf("--dialect %q: want duckdb or clickhouse", *q.lake.dialect)
	}
	r, err := openLakeRunner(*q.lake.dir, cfg, d, *q.timeout, *q.maxRows, stderr)
	if err != nil {
		return nil, nil, 1, err
	}
	s := &repl.Session{Cfg: cfg, Out: stdout, Mode: *q.format, Timer: *q.timer, Timeout: *q.timeout, MaxRows: *q.maxRows}
	s.Remote = func(ctx context.Context, s *repl.Session, file, src string, at lang.Pos) error {
		return s.ExecWith(ctx, file, src, at, r)
	}
	return s, r.Close, 0, nil
}

// openLake opens a lake for the REPL (.open --lake DIR, flowq repl
// --lake DIR): the planner's default limits, explain in DuckDB's SQL.
func openLake(cfg *normalform.Config, dir string, warn io.Writer) (repl.Lake, error) {
	return openLakeRunner(dir, cfg, sqlgen.DuckDB, 0, 0, warn)
}

// lakeRunner runs statements as SQL on DuckDB over a lake (repl.Runner,
// repl.Lake).
type lakeRunner struct {
	db         *duck.DB
	dir        string
	cfg        *normalform.Config
	c, explain *sqlgen.Compiler
	timeout    time.Duration
	maxRows    int
	// warn receives the warning, before a statement's rows, that range
	// files were left out; skipped collects them for the statement's
	// PartialError.
	warn    io.Writer
	skipped []*duck.FileError
}

func openLakeRunner(dir string, cfg *normalform.Config, d sqlgen.Dialect, timeout time.Duration, maxRows int, warn io.Writer) (*lakeRunner, error) {
	db, err := duck.Open(dir)
	if err != nil {
		return nil, err
	}
	r := &lakeRunner{db: db, dir: dir, cfg: cfg, timeout: timeout, maxRows: maxRows, warn: warn}
	src := &memSource{db: db}
	r.c = &sqlgen.Compiler{Cfg: cfg, Src: src}
	r.explain = &sqlgen.Compiler{Cfg: cfg, Dialect: d, Src: src}
	src.sql = r.c
	db.OnSkip = func(fs []*duck.FileError) {
		for _, f := range fs {
			if slices.ContainsFunc(r.skipped, func(g *duck.FileError) bool { return g.Path == f.Path }) {
				continue // told already, by an earlier query of the statement
			}
			r.skipped = append(r.skipped, f)
			fmt.Fprintf(r.warn, "warning: partial answer: %s missing: %v (left out; the other ranges answer)\n", f.Missing(), f)
		}
	}
	return r, nil
}

func (r *lakeRunner) Path() string { return r.dir }
func (r *lakeRunner) Close() error { return r.db.Close() }

func (r *lakeRunner) Explain(st lang.Statement) (string, error) { return lakeSQLText(r.explain, st) }

// query runs SQL on the lake (a sqlgen.QueryFunc).
func (r *lakeRunner) query(ctx context.Context, sql string, fn func(vals []any) error) error {
	_, err := r.db.Query(ctx, sql, func(_ []string, vals []any) error { return fn(vals) })
	return err
}

// partial is the statement's PartialError when range files were left
// out of it (nil otherwise).
func (r *lakeRunner) partial() error {
	if len(r.skipped) == 0 {
		return nil
	}
	p := &repl.PartialError{}
	seen := map[string]bool{}
	for _, f := range r.skipped {
		if m := f.Missing(); !seen[m] {
			seen[m] = true
			p.Missing = append(p.Missing, m)
		}
	}
	return p
}

// record rebuilds a transaction's record from its stored normal form.
func record(tx any, nf any) (*layout.Record, error) {
	b, _ := nf.([]byte)
	a, err := normalform.DecodeNF(b)
	if err != nil {
		return nil, fmt.Errorf("tx %v: the stored normal form does not decode: %w", tx, err)
	}
	return layout.NewRecord(a, 0)
}

func (r *lakeRunner) Analysis(h normalform.Hash) (*normalform.Analysis, error) {
	var a *normalform.Analysis
	err := r.query(context.Background(), fmt.Sprintf("SELECT nf FROM lake WHERE tx_hash = '%s'", h.Hex()), func(vals []any) error {
		b, _ := vals[0].([]byte)
		var err error
		a, err = normalform.DecodeNF(b)
		return err
	})
	if err == nil && a == nil {
		err = fmt.Errorf("tx %s is not in the lake", h.Hex())
	}
	return a, err
}

func (r *lakeRunner) Run(ctx context.Context, st lang.Statement, emit func(planner.Row) error) error {
	r.skipped = nil
	err := r.run(ctx, st, emit)
	if err == nil {
		err = r.partial()
	}
	return err
}

func (r *lakeRunner) run(ctx context.Context, st lang.Statement, emit func(planner.Row) error) error {
	q, err := r.c.Compile(st)
	var unsupported *sqlgen.UnsupportedError
	if err != nil && !errors.As(err, &unsupported) {
		return &repl.StatementError{Err: err} // the planner's error, at its position
	}
	if err != nil {
		return err
	}
	if r.timeout >= 0 {
		t := r.timeout
		if t == 0 {
			t = planner.DefaultTimeout
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	if r.maxRows >= 0 {
		max, n, inner := r.maxRows, 0, emit
		if max == 0 {
			max = planner.DefaultMaxRows
		}
		emit = func(row planner.Row) error {
			if n++; n > max {
				return &planner.LimitError{Limit: "result size", Value: fmt.Sprintf("%d rows", max), Hint: "narrow the query or add 'limit N'; flowq --max-rows"}
			}
			return inner(row)
		}
	}
	// show and same: the planner's executor over a source that holds the
	// records the SQL read.
	mem := &memSource{recs: map[normalform.Hash]*layout.Record{}}
	x := &planner.Executor{Src: mem, Cfg: r.cfg, Timeout: -1, MaxRows: -1}
	switch q.Kind {
	case lang.StmtFind, lang.StmtMatch, lang.StmtAnomalies:
		if q.RefSQL != "" {
			found := false
			if err := r.query(ctx, q.RefSQL, func([]any) error { found = true; return nil }); err != nil {
				return err
			}
			if !found && len(r.skipped) > 0 {
				return fmt.Errorf("tx %s is not in the lake's readable files: it may be in %v, left out (unreadable)", q.Ref.Hex(), r.partial().(*repl.PartialError).Missing)
			}
			if !found {
				return fmt.Errorf("tx %s is not in the lake: ingest it first (flowq ingest --lake)", q.Ref.Hex())
			}
		}
		// Each row from its columns (sqlgen.TxRows); the normal form is
		// decoded only for a row with a token id.
		return q.TxRows(ctx, r.cfg, r.query, emit)
	case lang.StmtCount:
		return r.query(ctx, q.SQL, func(vals []any) error {
			k, h := sqlgen.GroupKey(q.Group, fmt.Sprint(vals[0]))
			n, txs := fmt.Sprint(vals[1]), fmt.Sprint(vals[2])
			row := planner.Row{{Name: q.Group.String(), Value: k, Human: h}, {Name: q.What, Value: n, Human: n}}
			if q.What != "transactions" {
				row = append(row, planner.Field{Name: "transactions", Value: txs, Human: txs})
			}
			ex := fmt.Sprint(vals[3])
			return emit(append(row, planner.Field{Name: "example", Value: ex, Human: ex}))
		})
	case lang.StmtShow, lang.StmtSame:
		if err := r.query(ctx, q.SQL, func(vals []any) error {
			rec, err := record(vals[0], vals[1])
			if err == nil {
				mem.recs[rec.Hash] = rec
			}
			return err
		}); err != nil {
			return err
		}
		return x.Run(ctx, q.Planned, emit)
	}
	return &sqlgen.UnsupportedError{What: q.Kind.String()}
}

// memSource holds the records a statement's SQL read: the planner's
// executor reads them by hash (show, same). With
// db set, it resolves shortened references by a prefix lookup on the lake
// (the compilers' Src).
type memSource struct {
	recs map[normalform.Hash]*layout.Record
	db   *duck.DB
	sql  *sqlgen.Compiler
}

var errMem = fmt.Errorf("not supported on the lake")

func (m *memSource) Get(tx normalform.Hash) (*layout.Record, error) {
	if r, ok := m.recs[tx]; ok {
		return r, nil
	}
	return nil, fmt.Errorf("tx %s: %w", tx.Hex(), layout.ErrNotFound)
}
func (m *memSource) Fetch(context.Context, layout.Lookup, func(*layout.Record) error) error {
	return errMem
}
func (m *memSource) Filter(context.Context, layout.BlockRange, bool, func(*layout.Record) (bool, error), bool, func(*layout.Record) error) error {
	return errMem
}
func (m *memSource) BotShapes(context.Context, normalform.Address, func(normalform.Hash, layout.Ref) error) error {
	return errMem
}
func (m *memSource) BlockReports(context.Context, layout.BlockRange, func(*block.Report) error) error {
	return errMem
}
func (m *memSource) Dirty(uint64) (bool, error) { return false, nil }

// Resolve lists the lake's values a shortened reference names
// (sqlgen.ResolveSQL): the planner makes them the statement's value, or
// its not-found and ambiguity errors, as over the index.
func (m *memSource) Resolve(ctx context.Context, by layout.Kind, level normalform.Level, prefix, suffix string, max int) ([]string, error) {
	if m.db == nil {
		return nil, fmt.Errorf("%w: a shortened hash or address (write the whole value)", errMem)
	}
	q, err := m.sql.ResolveSQL(by, level, prefix, suffix, max)
	if err != nil {
		return nil, err
	}
	var out []string
	_, err = m.db.Query(ctx, q, func(_ []string, vals []any) error {
		out = append(out, fmt.Sprint(vals[0]))
		return nil
	})
	return out, err
}
