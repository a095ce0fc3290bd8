package sqlgen

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ethereum/go-ethereum/common"
	"github.com/holiman/uint256"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/show"
	"github.com/flowq/flowq/planner"
)

// RowWidth is the number of RowColumns; with Query.SQLWithNF the column
// nf is at RowWidth, and the anomalies' shape and first block follow.
const RowWidth = 15

// QueryFunc runs SQL on the lake and calls fn with each row's values as
// database/sql scans them (VARCHAR string, UBIGINT uint64, INTEGER int32,
// BOOLEAN bool, LIST []any, STRUCT map[string]any, BLOB []byte). An error
// from fn stops the query and is returned as it is.
type QueryFunc func(ctx context.Context, sql string, fn func(vals []any) error) error

// errNeedNF stops a statement's SQL at a row whose balance holds a token
// with an id: its standard (ERC-721, ERC-1155, ERC-6909), which its human
// form names, is only in the normal form.
var errNeedNF = errors.New("a token's standard is only in the normal form")

// TxRows runs a find's, match's or anomalies' SQL through query and
// emits each transaction's row as the planner's executor formats it from
// a record (same columns, same values, same human forms), built from the
// columns, without decoding the normal form. A row that holds a token
// with an id needs the token's standard, which only the normal form
// holds: the statement then runs again as SQLWithNF from that row on (the
// rows before it, in the same order, are not emitted again; a lake whose
// files changed in between, so that the last row given moved, is an
// error), and the normal form is decoded for the rows that need it.
func (q *Query) TxRows(ctx context.Context, cfg *normalform.Config, query QueryFunc, emit func(planner.Row) error) error {
	if q.SQLWithNF == "" {
		return fmt.Errorf("%s: not a statement returning transactions (a bug in flowq)", q.Kind)
	}
	n, last := 0, ""
	err := query(ctx, q.SQL, func(vals []any) error {
		row, err := q.txRow(cfg, vals, false)
		if err != nil {
			return err
		}
		n, last = n+1, row[0].Value
		return emit(row)
	})
	if !errors.Is(err, errNeedNF) {
		return err
	}
	i := 0
	return query(ctx, q.SQLWithNF, func(vals []any) error {
		if i++; i < n {
			return nil // emitted from the columns already
		}
		if i == n {
			if tx, _ := vals[0].(string); tx != last {
				return fmt.Errorf("the lake changed while the statement ran (its row %d was tx %s, now %v): the rows printed are not the answer; run it again", n, last, vals[0])
			}
			return nil
		}
		row, err := q.txRow(cfg, vals, true)
		if err != nil {
			return err
		}
		return emit(row)
	})
}

// txRow is one row of TxRows; withNF: vals holds nf at RowWidth.
func (q *Query) txRow(cfg *normalform.Config, vals []any, withNF bool) (planner.Row, error) {
	w := RowWidth
	if withNF {
		w++
	}
	if len(vals) < w {
		return nil, fmt.Errorf("the lake's SQL gave %d columns, want %d (%s)", len(vals), w, RowColumns)
	}
	var nf []byte
	if withNF {
		nf, _ = vals[RowWidth].([]byte)
	}
	row, err := TxRow(cfg, vals[:RowWidth], nf)
	if err != nil {
		return nil, err
	}
	if q.Kind == lang.StmtAnomalies {
		if len(vals) < w+2 {
			return nil, fmt.Errorf("the lake's SQL gave %d columns, want %d (the row's, hash_shape, first_block)", len(vals), w+2)
		}
		shape := fmt.Sprint(vals[w])
		first, _ := vals[w+1].(uint64)
		why := q.Why(first)
		human := shape
		if len(human) > 18 {
			human = human[:18] + "…"
		}
		row = append(row, planner.Field{Name: "shape", Value: shape, Human: human}, planner.Field{Name: "why", Value: why, Human: why})
	}
	return row, nil
}

// TxRow is a transaction's row in find, match and anomalies results
// built from the values of RowColumns, as the planner's executor builds it
// from the transaction's record. nf is the transaction's encoded normal
// form, or nil: it is decoded only when a balance holds a token with an
// id (whose standard only it holds); without it such a row is errNeedNF.
func TxRow(cfg *normalform.Config, vals []any, nf []byte) (planner.Row, error) {
	tx, _ := vals[0].(string)
	bad := func(col string, v any) error {
		return fmt.Errorf("tx %s: the lake's column %s holds %T (%v), not what flowq writes", tx, col, v, v)
	}
	str := func(i int, col string) (string, error) {
		if vals[i] == nil {
			return "", nil
		}
		s, ok := vals[i].(string)
		if !ok {
			return "", bad(col, vals[i])
		}
		return s, nil
	}
	num := func(i int, col string) (string, error) {
		switch v := vals[i].(type) {
		case int32:
			return fmt.Sprint(v), nil
		case int64:
			return fmt.Sprint(v), nil
		}
		return "", bad(col, vals[i])
	}
	if tx == "" {
		return nil, bad("tx_hash", vals[0])
	}
	b, ok := vals[1].(uint64)
	if !ok {
		return nil, bad("block", vals[1])
	}
	block := ""
	if b <= layout.MaxBlock { // the index keeps a later block in the normal form only
		block = fmt.Sprint(b)
	}
	verdict, err := str(3, "verdict")
	if err != nil {
		return nil, err
	}
	tier, err := str(4, "tier")
	if err != nil {
		return nil, err
	}
	path, err := str(5, "path")
	if err != nil {
		return nil, err
	}
	known, ok := vals[8].(bool)
	if !ok {
		return nil, bad("costs_known", vals[8])
	}
	var kinds map[string]normalform.Token // the tokens with ids, from the normal form
	tokenOf := func(key string) (normalform.Token, error) {
		if strings.IndexByte(key, '/') < 0 {
			if !common.IsHexAddress(key) {
				return normalform.Token{}, fmt.Errorf("tx %s: the lake's token %q is not an address", tx, key)
			}
			a := common.HexToAddress(key)
			if a == normalform.NativeAddress {
				return normalform.NativeToken, nil
			}
			return normalform.FungibleToken(a), nil
		}
		if nf == nil {
			return normalform.Token{}, errNeedNF
		}
		if kinds == nil {
			a, err := normalform.DecodeNF(nf)
			if err != nil {
				return normalform.Token{}, fmt.Errorf("tx %s: the stored normal form does not decode: %w", tx, err)
			}
			kinds = map[string]normalform.Token{}
			for _, d := range []normalform.Delta{a.Gross, a.Net} {
				for _, e := range d {
					kinds[e.Token.Key()] = e.Token
				}
			}
		}
		t, ok := kinds[key]
		if !ok {
			return normalform.Token{}, fmt.Errorf("tx %s: the lake's token %s is not in its normal form's balances", tx, key)
		}
		return t, nil
	}
	amounts := func(i int, col string, known bool) (string, string, error) {
		if !known {
			return "", "unknown", nil
		}
		list, ok := vals[i].([]any)
		if !ok && vals[i] != nil {
			return "", "", bad(col, vals[i])
		}
		if len(list) == 0 {
			return "", "0", nil
		}
		m := make([]string, len(list))
		d := make(normalform.Delta, len(list))
		for j, x := range list {
			e, ok := x.(map[string]any)
			if !ok {
				return "", "", bad(col, x)
			}
			key, _ := e["token"].(string)
			amt, _ := e["amount"].(string)
			t, err := tokenOf(key)
			if err != nil {
				return "", "", err
			}
			s, err := parseSigned(amt)
			if err != nil {
				return "", "", fmt.Errorf("tx %s: the lake's %s amount %q of %s: %w", tx, col, amt, key, err)
			}
			m[j] = key + ":" + amt
			d[j] = normalform.DeltaEntry{Token: t, Amount: s}
		}
		return strings.Join(m, ";"), show.FormatGross(cfg, d), nil
	}
	gm, gh, err := amounts(6, "gross", true)
	if err != nil {
		return nil, err
	}
	nm, nh, err := amounts(7, "net", known)
	if err != nil {
		return nil, err
	}
	var counts [4]string
	for j, col := range []string{"cycles", "pools", "hops", "leftovers"} {
		if counts[j], err = num(9+j, col); err != nil {
			return nil, err
		}
	}
	bot, err := str(13, "bot")
	if err != nil {
		return nil, err
	}
	if !common.IsHexAddress(bot) {
		return nil, bad("bot", vals[13])
	}
	botAddr := common.HexToAddress(bot)
	var reasons []string
	if vals[14] != nil {
		list, ok := vals[14].([]any)
		if !ok {
			return nil, bad("reasons", vals[14])
		}
		reasons = make([]string, len(list))
		for j, x := range list {
			if reasons[j], ok = x.(string); !ok {
				return nil, bad("reasons", x)
			}
		}
	}
	return planner.Row{
		{Name: "tx", Value: tx, Human: tx},
		{Name: "block", Value: block, Human: block},
		{Name: "verdict", Value: verdict, Human: verdict},
		{Name: "tier", Value: tier, Human: tier},
		{Name: "path", Value: path, Human: path},
		{Name: "gross", Value: gm, Human: gh},
		{Name: "net", Value: nm, Human: nh},
		{Name: "cycles", Value: counts[0], Human: counts[0]},
		{Name: "pools", Value: counts[1], Human: counts[1]},
		{Name: "hops", Value: counts[2], Human: counts[2]},
		{Name: "leftovers", Value: counts[3], Human: counts[3]},
		{Name: "bot", Value: normalform.AddrKey(botAddr), Human: normalform.ShortAddr(botAddr)},
		{Name: "reasons", Value: strings.Join(reasons, ","), Human: strings.Join(reasons, ", ")},
	}, nil
}

// parseSigned parses a signed decimal amount in base units (Signed.String).
func parseSigned(s string) (normalform.Signed, error) {
	var v normalform.Signed
	digits, neg := strings.CutPrefix(s, "-")
	abs, err := uint256.FromDecimal(digits)
	if err != nil {
		return v, err
	}
	v.Abs = *abs
	v.Neg = neg && !abs.IsZero()
	return v, nil
}
