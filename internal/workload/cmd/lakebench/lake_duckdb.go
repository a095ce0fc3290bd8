//go:build duckdb

package main

import (
	"context"
	"fmt"

	"github.com/flowq/flowq/index/lake/duck"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/planner"
	"github.com/flowq/flowq/planner/sqlgen"
)

func checkLakeEngine() error { return nil }

// lakeEngine runs statements as SQL on embedded DuckDB over the lake, as
// `flowq query --lake` does: the statement compiled by planner/sqlgen, a
// match's reference read first, and each transaction's row built from
// the columns the SQL returns (sqlgen.TxRows: rows counted, not rendered).
// With sqlOnly it stops at the SQL's rows (values scanned, rows not
// built): the part DuckDB does.
type lakeEngine struct {
	db      *duck.DB
	c       *sqlgen.Compiler
	sqlOnly bool
}

func openLake(dir string) (*lakeEngine, error) {
	db, err := duck.Open(dir)
	if err != nil {
		return nil, err
	}
	return &lakeEngine{db: db, c: &sqlgen.Compiler{Cfg: normalform.DefaultConfig()}}, nil
}

// sqlOnlyEngine is the same DuckDB, counting the SQL's rows only.
func (l *lakeEngine) sqlOnlyEngine() engine { return &lakeEngine{db: l.db, c: l.c, sqlOnly: true} }

func (l *lakeEngine) name() string {
	if l.sqlOnly {
		return "lake (SQL only)"
	}
	return "lake"
}
func (l *lakeEngine) close() { l.db.Close() }

func (l *lakeEngine) query(ctx context.Context, sql string, fn func([]any) error) error {
	res, err := l.db.Query(ctx, sql, func(_ []string, vals []any) error { return fn(vals) })
	if err == nil && len(res.Skipped) > 0 {
		return fmt.Errorf("%v (the other ranges answered)", res.Skipped[0])
	}
	return err
}

func (l *lakeEngine) run(ctx context.Context, src string, key func(string)) (int, error) {
	st, err := lang.ParseOne("q", src)
	if err != nil {
		return 0, err
	}
	q, err := l.c.Compile(st)
	if err != nil {
		return 0, err
	}
	if q.RefSQL != "" {
		found := false
		if err := l.query(ctx, q.RefSQL, func([]any) error { found = true; return nil }); err != nil {
			return 0, err
		}
		if !found {
			return 0, fmt.Errorf("tx %s is not in the lake", q.Ref.Hex())
		}
	}
	rows := 0
	if q.Kind == lang.StmtCount || l.sqlOnly {
		err = l.query(ctx, q.SQL, func(vals []any) error {
			rows++
			if key != nil {
				if q.Kind == lang.StmtCount {
					k, _ := sqlgen.GroupKey(q.Group, fmt.Sprint(vals[0]))
					key(k + "=" + fmt.Sprint(vals[1]))
				} else {
					key(fmt.Sprint(vals[0]))
				}
			}
			return nil
		})
		return rows, err
	}
	// Each row as flowq query --lake builds it: from the columns
	// (sqlgen.TxRows), the normal form decoded only for a token id.
	err = q.TxRows(ctx, l.c.Cfg, l.query, func(r planner.Row) error {
		rows++
		if key != nil {
			key(r[0].Value)
		}
		return nil
	})
	return rows, err
}
