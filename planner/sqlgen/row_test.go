package sqlgen

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/planner"
)

// rowVals are RowColumns' values for one transaction as database/sql
// scans DuckDB's (TestLakeRowsFromColumnsAsFromNF compares real ones).
func rowVals() []any {
	weth := "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2"
	return []any{"0x" + strings.Repeat("ab", 32), uint64(17), uint32(3), "arbitrage", "confirmed", "traces",
		[]any{map[string]any{"token": weth, "amount": "1500000000000000000"}},
		[]any{map[string]any{"token": "0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee", "amount": "-2"}},
		true, int32(1), int32(2), int32(3), int32(0), "0x00000000000000000000000000000000000000b0", []any{"profit"}}
}

// TestTxRowFromColumns: a row's fields from the columns; a value of the
// wrong type is an error naming the column and the transaction; a token
// with an id needs the normal form.
func TestTxRowFromColumns(t *testing.T) {
	cfg := normalform.DefaultConfig()
	row, err := TxRow(cfg, rowVals(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"block": "17", "verdict": "arbitrage", "pools": "2",
		"gross": "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2:1500000000000000000", "net": "0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee:-2",
		"bot": "0x00000000000000000000000000000000000000b0", "reasons": "profit"} {
		if got := row.Get(name); got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if h := row[5].Human; h != "+1.5 WETH" {
		t.Errorf("gross's human form %q, want +1.5 WETH", h)
	}
	vals := rowVals()
	vals[8] = false
	if row, _ := TxRow(cfg, vals, nil); row.Get("net") != "" || row[6].Human != "unknown" {
		t.Errorf("costs unknown: net %+v", row[6])
	}
	vals = rowVals()
	vals[10] = "2"
	if _, err := TxRow(cfg, vals, nil); err == nil || !strings.Contains(err.Error(), "column pools holds string") || !strings.Contains(err.Error(), "tx 0xabab") {
		t.Errorf("a string for pools: %v", err)
	}
	vals = rowVals()
	vals[6] = []any{map[string]any{"token": "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2", "amount": "1.5"}}
	if _, err := TxRow(cfg, vals, nil); err == nil || !strings.Contains(err.Error(), `gross amount "1.5"`) {
		t.Errorf("a bad amount: %v", err)
	}
	vals = rowVals()
	vals[6] = []any{map[string]any{"token": "0x3962000000000000000000000000000000000000/1", "amount": "-10"}}
	if _, err := TxRow(cfg, vals, nil); !errors.Is(err, errNeedNF) {
		t.Errorf("a token id without the normal form: %v", err)
	}
	if _, err := TxRow(cfg, vals, []byte("not a normal form")); err == nil || !strings.Contains(err.Error(), "the stored normal form does not decode") {
		t.Errorf("a token id with a bad normal form: %v", err)
	}
}

// TestTxRowsAgainWithNF: at the first row that needs the normal form,
// TxRows runs SQLWithNF and gives the rows after the ones it gave, once
// each, in order; an error of emit stops it as it is.
func TestTxRowsAgainWithNF(t *testing.T) {
	q := &Query{Kind: lang.StmtFind, SQL: "without", SQLWithNF: "with"}
	idRow := rowVals()
	idRow[0] = "0x" + strings.Repeat("cd", 32)
	idRow[6] = []any{map[string]any{"token": "0x3962000000000000000000000000000000000000/1", "amount": "-10"}}
	var ran []string
	query := func(_ context.Context, sql string, fn func([]any) error) error {
		ran = append(ran, sql)
		for _, v := range [][]any{rowVals(), idRow} {
			if sql == "with" {
				v = append(v[:RowWidth:RowWidth], []byte("not a normal form"))
			}
			if err := fn(v); err != nil {
				return err
			}
		}
		return nil
	}
	var got []planner.Row
	err := q.TxRows(context.Background(), normalform.DefaultConfig(), query, func(r planner.Row) error { got = append(got, r); return nil })
	if strings.Join(ran, ",") != "without,with" || len(got) != 1 || err == nil || !strings.Contains(err.Error(), "tx 0xcdcd") {
		t.Errorf("ran %v, %d rows, err %v", ran, len(got), err)
	}
	// A lake that changed between the two runs: the row given before
	// is not where it was.
	moved := func(_ context.Context, sql string, fn func([]any) error) error {
		first := rowVals()
		if sql == "with" {
			first[0] = "0x" + strings.Repeat("ef", 32)
		}
		return query(context.Background(), sql, func(v []any) error {
			if v[0] == rowVals()[0] {
				v[0] = first[0]
			}
			return fn(v)
		})
	}
	got = nil
	err = q.TxRows(context.Background(), normalform.DefaultConfig(), moved, func(r planner.Row) error { got = append(got, r); return nil })
	if len(got) != 1 || err == nil || !strings.Contains(err.Error(), "the lake changed while the statement ran") {
		t.Errorf("a lake that changed: %d rows, err %v", len(got), err)
	}
	stop := errors.New("stop")
	if err := q.TxRows(context.Background(), normalform.DefaultConfig(), query, func(planner.Row) error { return stop }); err != stop {
		t.Errorf("emit's error: %v", err)
	}
}
