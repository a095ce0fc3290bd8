package repl

import (
	"encoding/json"
	"strings"

	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/show"
	"github.com/flowq/flowq/planner"
)

// The JSON mode's rows follow the JSON contract (normalform/show/contract.go):
// a column has the type its name has in show.TxJSON and the other
// JSON outputs. The planner gives every value as text; jsonValue types it
// by the column's name.

// numberColumns hold counts and positions: JSON numbers.
var numberColumns = map[string]bool{
	"block": true, "index": true, "cycles": true, "pools": true, "hops": true, "leftovers": true,
	"transactions": true, "bots": true, "shapes": true, "families": true, "count": true,
}

// balanceColumns hold balances: {token: amount} (show.Amounts).
var balanceColumns = map[string]bool{"gross": true, "net": true}

// amountColumns hold one amount, a decimal string (its token in another
// column).
var amountColumns = map[string]bool{"gain": true, "builder_paid": true}

// listColumns hold lists, comma-separated in the planner's values.
var listColumns = map[string]bool{"reasons": true, "victims": true, "corrects": true, "roles": true}

// jsonValue is a field's value under the contract: numbers as numbers,
// balances as maps, lists as arrays, amounts as decimal strings, and
// what is unknown (a number or an amount left empty) as null.
func jsonValue(f planner.Field) any {
	v := f.Value
	switch {
	case balanceColumns[f.Name]:
		return balance(v, f.Human)
	case listColumns[f.Name]:
		if v == "" {
			return []string{}
		}
		return strings.Split(v, ",")
	case v == "" && (numberColumns[f.Name] || amountColumns[f.Name] || f.Human == "unknown"):
		return nil
	case numberColumns[f.Name] && isInteger(v):
		return json.Number(v)
	}
	return v
}

// balance reads the planner's balance text: "token:amount;..." for a
// record, one amount (in the native asset) for a finding's net; "" is an
// empty balance, or unknown when its human form says so.
func balance(v, human string) show.Amounts {
	if v == "" {
		if human == "unknown" || human == "" {
			return nil
		}
		return show.Amounts{}
	}
	m := show.Amounts{}
	if !strings.Contains(v, ":") {
		m[normalform.NativeToken.Key()] = v
		return m
	}
	for _, part := range strings.Split(v, ";") {
		if tok, amt, ok := strings.Cut(part, ":"); ok {
			m[tok] = amt
		}
	}
	return m
}

func isInteger(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c == '-' && i == 0 && len(s) > 1 {
			continue
		}
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// jsonRow renders a row as one JSON object, its columns in order.
func jsonRow(row planner.Row) ([]byte, error) {
	b := []byte{'{'}
	for i, f := range row {
		if i > 0 {
			b = append(b, ',')
		}
		kb, err := json.Marshal(f.Name)
		if err != nil {
			return nil, err
		}
		vb, err := json.Marshal(jsonValue(f))
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, kb...), ':'), vb...)
	}
	return append(b, '}', '\n'), nil
}

// CSVHeader is a row's CSV header: a balance column is two, NAME_token
// and NAME_amount (the tokens and their amounts, ';'-separated in the
// same order when there are several).
func CSVHeader(row planner.Row) []string {
	var head []string
	for _, f := range row {
		if balanceColumns[f.Name] {
			head = append(head, f.Name+"_token", f.Name+"_amount")
			continue
		}
		head = append(head, f.Name)
	}
	return head
}

// CSVCells is a row's CSV cells, in the columns of CSVHeader: the
// planner's values, a balance's tokens apart from its amounts, what is
// unknown empty.
func CSVCells(row planner.Row) []string {
	var cells []string
	for _, f := range row {
		if !balanceColumns[f.Name] {
			cells = append(cells, f.Value)
			continue
		}
		var toks, amts []string
		if f.Value != "" && !strings.Contains(f.Value, ":") {
			toks, amts = []string{normalform.NativeToken.Key()}, []string{f.Value}
		} else if f.Value != "" {
			for _, part := range strings.Split(f.Value, ";") {
				if tok, amt, ok := strings.Cut(part, ":"); ok {
					toks, amts = append(toks, tok), append(amts, amt)
				}
			}
		}
		cells = append(cells, strings.Join(toks, ";"), strings.Join(amts, ";"))
	}
	return cells
}
