package sqlgen

import (
	"context"
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

// RowWidth is the number of RowColumns; the anomalies' shape and first
// block follow them.
const RowWidth = 15

// QueryFunc runs SQL on the lake and calls fn with each row's values as
// database/sql scans them (VARCHAR string, UBIGINT uint64, INTEGER int32,
// BOOLEAN bool, LIST []any, STRUCT map[string]any, BLOB []byte). An error
// from fn stops the query and is returned as it is.
type QueryFunc func(ctx context.Context, sql string, fn func(vals []any) error) error

// TxRows runs a find's, match's or anomalies' SQL through query and
// emits each transaction's row as the planner's executor formats it from
// a record (same columns, same values, same human forms), built from the
// columns (TxRow): the normal form is not read.
func (q *Query) TxRows(ctx context.Context, cfg *normalform.Config, query QueryFunc, emit func(planner.Row) error) error {
	switch q.Kind {
	case lang.StmtFind, lang.StmtMatch, lang.StmtAnomalies:
	default:
		return fmt.Errorf("%s: not a statement returning transactions (a bug in flowq)", q.Kind)
	}
	return query(ctx, q.SQL, func(vals []any) error {
		row, err := q.txRow(cfg, vals)
		if err != nil {
			return err
		}
		return emit(row)
	})
}

// txRow is one row of TxRows.
func (q *Query) txRow(cfg *normalform.Config, vals []any) (planner.Row, error) {
	w := RowWidth
	if len(vals) < w {
		return nil, fmt.Errorf("the lake's SQL gave %d columns, want %d (%s)", len(vals), w, RowColumns)
	}
	row, err := TxRow(cfg, vals[:w])
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
// from the transaction's record. A token with an id takes its standard
// (ERC-721, ERC-1155, ERC-6909: the human form names it) from the
// balance's kind, which lakes hold since schema 2 (duck refuses earlier
// ones).
func TxRow(cfg *normalform.Config, vals []any) (planner.Row, error) {
	tx, _ := vals[0].(string)
	bad := func(col string, v any) error {
		return fmt.Errorf("tx %s: the lake's column %s holds a %s (%v), not what flowq writes", tx, col, sqlType(v), v)
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
	tokenOf := func(key, kind string) (normalform.Token, error) {
		addr, id, hasID := strings.Cut(key, "/")
		if !common.IsHexAddress(addr) {
			return normalform.Token{}, fmt.Errorf("tx %s: the lake's token %q is not an address", tx, key)
		}
		a := common.HexToAddress(addr)
		k, known := tokenKinds[kind]
		if !hasID && (kind == "" || known && (k == normalform.Fungible || k == normalform.Native)) {
			if kind == normalform.Native.String() || kind == "" && a == normalform.NativeAddress {
				return normalform.Token{Addr: a, Kind: normalform.Native}, nil
			}
			return normalform.FungibleToken(a), nil
		}
		v, err := uint256.FromDecimal(id)
		if !hasID || !known || k == normalform.Fungible || k == normalform.Native || err != nil {
			return normalform.Token{}, fmt.Errorf("tx %s: the lake's token %q of standard %q is not a token flowq writes (a token id names erc721, erc1155 or erc6909)", tx, key, kind)
		}
		return normalform.Token{Addr: a, ID: *v, Kind: k}, nil
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
			kind, _ := e["kind"].(string)
			t, err := tokenOf(key, kind)
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

// tokenKinds are the tokens' standards by the names the lake's kind holds
// (normalform.TokenKind.String).
var tokenKinds = map[string]normalform.TokenKind{
	normalform.Fungible.String():  normalform.Fungible,
	normalform.Native.String():    normalform.Native,
	normalform.NFT721.String():    normalform.NFT721,
	normalform.Multi1155.String(): normalform.Multi1155,
	normalform.Multi6909.String(): normalform.Multi6909,
}

// sqlType names a scanned value's SQL type (database/sql's scanning of
// DuckDB's values), for errors.
func sqlType(v any) string {
	switch v.(type) {
	case nil:
		return "NULL"
	case string:
		return "VARCHAR"
	case uint64:
		return "UBIGINT"
	case uint32:
		return "UINTEGER"
	case int32:
		return "INTEGER"
	case int64:
		return "BIGINT"
	case bool:
		return "BOOLEAN"
	case float64:
		return "DOUBLE"
	case []byte:
		return "BLOB"
	case []any:
		return "LIST"
	case map[string]any:
		return "STRUCT"
	}
	return "value of another type"
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
