//go:build duckdb

package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/planner"
	"github.com/flowq/flowq/planner/sqlgen"
)

// rowFromNF is a transaction's row as the lake built it before rows came
// from the columns: the record rebuilt from the stored normal form,
// formatted by the planner's executor (its find over one record).
func rowFromNF(t *testing.T, cfg *normalform.Config, tx any, nf any) planner.Row {
	t.Helper()
	rec, err := record(tx, nf)
	if err != nil {
		t.Fatal(err)
	}
	mem := &memSource{recs: map[normalform.Hash]*layout.Record{rec.Hash: rec}}
	x := &planner.Executor{Src: mem, Cfg: cfg, Timeout: -1, MaxRows: -1}
	var row planner.Row
	if err := x.Run(context.Background(), &planner.Query{Plan: planner.TxLookup{Tx: rec.Hash}, Kind: lang.StmtFind}, func(r planner.Row) error { row = r; return nil }); err != nil {
		t.Fatal(err)
	}
	return row
}

// sameRow says where two rows differ, field by field (name, value, human
// form), or "".
func sameRow(got, want planner.Row) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d fields, want %d:\n got %v\nwant %v", len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Sprintf("field %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	return ""
}

// TestLakeRowsFromColumnsAsFromNF: for every find, match and anomalies
// statement of examples/queries and the planner's data-driven tests, the
// rows flowq query --lake gives (built from the Parquet columns the SQL
// returns, sqlgen.TxRows) are, in order and field by field (name, value,
// human form), the rows built from each transaction's stored normal form
// through the planner's executor; and sqlgen.TxRow gives the same row
// from the columns alone for every transaction of each statement,
// transactions with token ids (ERC-721, ERC-1155) among them.
func TestLakeRowsFromColumnsAsFromNF(t *testing.T) {
	lk := t.TempDir()
	if _, errs, code := flowq(t, nil, "", append([]string{"ingest", "--lake", lk}, sameAnswerInputs...)...); code != 0 {
		t.Fatalf("ingest --lake: %s", errs)
	}
	cfg := normalform.DefaultConfig()
	r, err := openLakeRunner(filepath.Clean(lk), cfg, sqlgen.DuckDB, -1, -1, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	var statements, rows, fromColumns, idRows int
	seen := map[string]bool{}
	// Besides the statements, every transaction of the lake, in both
	// orders: the ERC-721 and ERC-1155 scenarios' balances hold token ids,
	// whose standards (their human forms name them) come from the column
	// kind.
	all := []string{"find where hops >= 0", "find where hops >= 0 order by block desc limit 40"}
	for _, stmt := range append(all, lakeStatements(t)...) {
		if seen[stmt] {
			continue
		}
		seen[stmt] = true
		st, err := lang.ParseOne("x", stmt)
		if err != nil {
			t.Fatal(err)
		}
		q, err := r.c.Compile(st)
		if err != nil || q.Explain || (q.Kind != lang.StmtFind && q.Kind != lang.StmtMatch && q.Kind != lang.StmtAnomalies) {
			continue // not supported on the lake, an explain, or no transactions
		}
		var want []planner.Row
		if q.RefSQL != "" {
			found := false
			if err := r.query(ctx, q.RefSQL, func([]any) error { found = true; return nil }); err != nil {
				t.Fatal(err)
			}
			if !found {
				continue // the reference is not in the lake: an error, TestLakeSameAnswersAsBadger
			}
		}
		// The SQL with the column nf after the row's.
		w := sqlgen.RowWidth
		withNF := strings.Replace(q.SQL, sqlgen.RowColumns, sqlgen.RowColumns+", nf", -1)
		if withNF == q.SQL {
			t.Fatalf("%s: the SQL does not select sqlgen.RowColumns: %s", stmt, q.SQL)
		}
		err = r.query(ctx, withNF, func(vals []any) error {
			row := rowFromNF(t, cfg, vals[0], vals[w])
			if q.Kind == lang.StmtAnomalies {
				shape := fmt.Sprint(vals[w+1])
				why := q.Why(vals[w+2].(uint64))
				row = append(row, planner.Field{Name: "shape", Value: shape, Human: shape[:18] + "…"}, planner.Field{Name: "why", Value: why, Human: why})
			}
			want = append(want, row)
			// The row from the columns alone.
			cols, err := sqlgen.TxRow(cfg, vals[:w])
			if err != nil {
				t.Errorf("%s: tx %v: %v", stmt, vals[0], err)
				return nil
			}
			fromColumns++
			if d := sameRow(cols, row[:len(cols)]); d != "" {
				t.Errorf("%s: tx %v: the row from the columns differs from the normal form's: %s", stmt, vals[0], d)
			}
			for _, side := range vals[6:8] {
				list, _ := side.([]any)
				for _, x := range list {
					if strings.Contains(x.(map[string]any)["token"].(string), "/") {
						idRows++ // its standard from the column kind (lake schema 2)
						return nil
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		var got []planner.Row
		if err := r.Run(ctx, st, func(row planner.Row) error { got = append(got, row); return nil }); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d rows from the columns, %d from the normal forms", stmt, len(got), len(want))
			continue
		}
		for i := range got {
			if d := sameRow(got[i], want[i]); d != "" {
				t.Errorf("%s: row %d: %s", stmt, i, d)
			}
		}
		statements++
		rows += len(got)
	}
	t.Logf("%d statements, %d rows the same; per transaction, %d rows from the columns alone, %d of them with a token id", statements, rows, fromColumns, idRows)
	if statements < 20 || rows < 300 || idRows == 0 {
		t.Errorf("only %d statements and %d rows compared, %d of them with a token id", statements, rows, idRows)
	}
}
