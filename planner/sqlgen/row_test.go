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
		[]any{map[string]any{"token": weth, "amount": "1500000000000000000", "kind": "erc20"}},
		[]any{map[string]any{"token": "0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee", "amount": "-2", "kind": "native"}},
		true, int32(1), int32(2), int32(3), int32(0), "0x00000000000000000000000000000000000000b0", []any{"profit"}}
}

// TestTxRowFromColumns: a row's fields from the columns; a value of the
// wrong type is an error naming the column and the transaction; a token
// with an id needs the normal form.
func TestTxRowFromColumns(t *testing.T) {
	cfg := normalform.DefaultConfig()
	row, err := TxRow(cfg, rowVals())
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
	if row, _ := TxRow(cfg, vals); row.Get("net") != "" || row[6].Human != "unknown" {
		t.Errorf("costs unknown: net %+v", row[6])
	}
	vals = rowVals()
	vals[10] = "2"
	if _, err := TxRow(cfg, vals); err == nil || !strings.Contains(err.Error(), "column pools holds a VARCHAR (2)") || !strings.Contains(err.Error(), "tx 0xabab") {
		t.Errorf("a string for pools: %v", err)
	}
	vals = rowVals()
	vals[6] = []any{map[string]any{"token": "0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2", "amount": "1.5"}}
	if _, err := TxRow(cfg, vals); err == nil || !strings.Contains(err.Error(), `gross amount "1.5"`) {
		t.Errorf("a bad amount: %v", err)
	}
	// A token id: its standard from kind; without one, an error.
	for kind, want := range map[string]string{"erc1155": "-10 × ERC-1155 0x3962…0000 #1", "erc721": "-ERC-721 0x3962…0000 #1", "erc6909": "-10 × ERC-6909 0x3962…0000 #1"} {
		vals = rowVals()
		vals[6] = []any{map[string]any{"token": "0x3962000000000000000000000000000000000000/1", "amount": "-10", "kind": kind}}
		if row, err := TxRow(cfg, vals); err != nil || row[5].Human != want {
			t.Errorf("%s: gross %+v, %v; want %q", kind, row[5], err, want)
		}
	}
	for _, kind := range []string{"", "erc20", "erc1156"} {
		vals = rowVals()
		vals[6] = []any{map[string]any{"token": "0x3962000000000000000000000000000000000000/1", "amount": "-10", "kind": kind}}
		if _, err := TxRow(cfg, vals); err == nil || !strings.Contains(err.Error(), `of standard "`+kind+`" is not a token flowq writes`) {
			t.Errorf("a token id of standard %q: %v", kind, err)
		}
	}
}

// TestTxRows: the rows of a statement's SQL, each from its columns, the
// anomalies' shape and why after them; an error of emit stops it as it
// is; a count is not a statement of rows of transactions.
func TestTxRows(t *testing.T) {
	shape := "0x" + strings.Repeat("12", 32)
	query := func(_ context.Context, sql string, fn func([]any) error) error {
		for i := 0; i < 2; i++ {
			v := rowVals()
			if sql == "anomalies" {
				v = append(v, shape, uint64(16))
			}
			if err := fn(v); err != nil {
				return err
			}
		}
		return nil
	}
	cfg := normalform.DefaultConfig()
	var got []planner.Row
	q := &Query{Kind: lang.StmtAnomalies, SQL: "anomalies"}
	if err := q.TxRows(context.Background(), cfg, query, func(r planner.Row) error { got = append(got, r); return nil }); err != nil || len(got) != 2 {
		t.Fatalf("%d rows, %v", len(got), err)
	}
	if f := got[0][len(got[0])-2]; f.Name != "shape" || f.Value != shape || f.Human != shape[:18]+"…" || got[0].Get("why") != "first use of this shape" {
		t.Errorf("anomalies' fields: %+v", got[0][len(got[0])-2:])
	}
	stop := errors.New("stop")
	q = &Query{Kind: lang.StmtFind, SQL: "find"}
	if err := q.TxRows(context.Background(), cfg, query, func(planner.Row) error { return stop }); err != stop {
		t.Errorf("emit's error: %v", err)
	}
	q = &Query{Kind: lang.StmtFind, SQL: "anomalies"} // a column too many is ignored; one too few is an error
	short := func(ctx context.Context, sql string, fn func([]any) error) error { return fn(rowVals()[:RowWidth-1]) }
	if err := q.TxRows(context.Background(), cfg, short, func(planner.Row) error { return nil }); err == nil || !strings.Contains(err.Error(), "gave 14 columns, want 15") {
		t.Errorf("a short row: %v", err)
	}
	q = &Query{Kind: lang.StmtCount, SQL: "count"}
	if err := q.TxRows(context.Background(), cfg, query, func(planner.Row) error { return nil }); err == nil {
		t.Error("a count's rows are not transactions'")
	}
}
