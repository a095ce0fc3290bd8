// Package sqlgen is the planner's second backend: it compiles checked
// statements of the query language (find, count, match, anomalies, show,
// same) to SQL over the Parquet lake's view or table lake (package
// index/lake: one row per transaction), for DuckDB or ClickHouse. It is
// pure Go and runs nothing: cmd/flowq runs the SQL on embedded DuckDB
// (build tag duckdb) and prints the rows as the Badger planner's.
//
// Exact amounts are compared through their amount_key (33 bytes whose
// byte order is the numeric order), never through the float column; a
// token without a component in a balance counts as zero, as in the
// planner. Statements over block findings (find sandwiches, count
// backruns, show block) are not supported: the lake holds no block
// findings (Compile says so).
package sqlgen

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/planner"
)

// Dialect is the SQL engine the text is for.
type Dialect uint8

const (
	DuckDB Dialect = iota
	ClickHouse
)

// ParseDialect reads a dialect's name (duckdb, clickhouse).
func ParseDialect(s string) (Dialect, bool) {
	switch strings.ToLower(s) {
	case "duckdb":
		return DuckDB, true
	case "clickhouse":
		return ClickHouse, true
	}
	return 0, false
}

func (d Dialect) String() string { return [...]string{"duckdb", "clickhouse"}[d] }

// UnsupportedError is a statement the lake cannot answer.
type UnsupportedError struct{ What string }

func (e *UnsupportedError) Error() string { return "not supported on the lake: " + e.What }

// Compiler compiles statements for one chain configuration and dialect.
type Compiler struct {
	Cfg     *normalform.Config
	Dialect Dialect
	// Table is what the SQL reads (default "lake": DuckDB's view over the
	// files, or ClickHouse's table loaded from them).
	Table string
	// Src, when set, resolves the statement's shortened references
	// (0x3db1a7, 0x3db1…dcfa) as the planner does over an index: only its
	// Resolve is called (cmd/flowq's is a prefix lookup on the lake).
	// Without it a shortened reference is an error (write the whole
	// value).
	Src planner.Source
}

// RowColumns are the columns a query returning transactions selects:
// the row's fields (TxRows formats them as the planner formats a record),
// not the normal form. The anomalies' shape and first block follow them.
const RowColumns = "tx_hash, block, tx_index, verdict, tier, path, gross, net, costs_known, cycles, pools, hops, leftovers, bot, reasons"

// Query is a compiled statement.
type Query struct {
	Kind    lang.StmtKind
	Explain bool
	// SQL is the statement's SQL (for same, the reading of both
	// transactions; for match, with the reference's hash as a subquery).
	SQL string
	// RefSQL, for match, reads the reference: no row when it is not in the
	// lake.
	RefSQL string
	Ref    normalform.Hash
	// Count: what is grouped and counted.
	Group lang.GroupBy
	What  string
	// Anomalies: the rows carry hash_shape and first_block columns; Why
	// says why each is one, as the planner says it.
	Since            *uint64
	BaseFrom, BaseTo uint64
	HasBase          bool
	// Planned is the planner's plan of the statement (show and same run
	// it over the rows the SQL read).
	Planned *planner.Query
}

// Compile compiles one statement (explain included: Query.Explain). The
// statement is planned by the planner first, so that its errors are the
// planner's, word for word.
func (c *Compiler) Compile(st lang.Statement) (*Query, error) {
	pl := &planner.Planner{Cfg: c.Cfg, Src: c.Src}
	pq, err := pl.Build(st)
	if err != nil {
		return nil, err
	}
	q := &Query{Kind: pq.Kind, Explain: pq.Explain, Planned: pq}
	if e, ok := st.(*lang.Explain); ok {
		st = e.Query
	}
	g := &gen{c: c}
	switch s := st.(type) {
	case *lang.Find:
		if s.Target.Findings() {
			return nil, &UnsupportedError{"find " + s.Target.String() + " (block findings are not in the lake; use the Badger index)"}
		}
		q.SQL = g.find(s.Target, s.Where, s.Order, s.Limit, "")
	case *lang.Count:
		if s.What.Findings() {
			return nil, &UnsupportedError{"count " + s.What.String() + " (block findings are not in the lake; use the Badger index)"}
		}
		q.Group, q.What = s.Group, s.What.String()
		q.SQL = g.count(s)
	case *lang.Match:
		h, _ := normalform.ParseHash(s.Ref.Hash)
		q.Ref = h
		col := hashColumn(s.At)
		q.RefSQL = fmt.Sprintf("SELECT %s FROM %s WHERE tx_hash = %s", col, c.table(), str(h.Hex()))
		ref := fmt.Sprintf("%s = (%s)", col, q.RefSQL)
		q.SQL = g.find(lang.TargetTransactions, s.Where, s.Order, s.Limit, ref)
	case *lang.Same:
		a, _ := normalform.ParseHash(s.A.Hash)
		b, _ := normalform.ParseHash(s.B.Hash)
		q.SQL = fmt.Sprintf("SELECT tx_hash, nf FROM %s WHERE tx_hash IN (%s, %s)", c.table(), str(a.Hex()), str(b.Hex()))
	case *lang.Show:
		h, _ := normalform.ParseHash(s.Tx.Hash)
		q.SQL = fmt.Sprintf("SELECT tx_hash, nf FROM %s WHERE tx_hash = %s", c.table(), str(h.Hex()))
	case *lang.Anomalies:
		q.SQL = g.anomalies(s, q)
	case *lang.Findings:
		return nil, &UnsupportedError{"find " + s.Kind.String() + " (block findings are not in the lake; use the Badger index)"}
	case *lang.ShowBlock:
		return nil, &UnsupportedError{"show block (block findings are not in the lake; use the Badger index)"}
	default:
		return nil, &UnsupportedError{"this statement"}
	}
	return q, nil
}

func (c *Compiler) table() string {
	if c.Table == "" {
		return "lake"
	}
	return c.Table
}

type gen struct{ c *Compiler }

// str is a SQL string literal.
func str(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func hashColumn(l normalform.Level) string { return "hash_" + l.String() }

// blob is a BLOB (DuckDB) or String (ClickHouse) literal of bytes.
func (g *gen) blob(b []byte) string {
	if g.c.Dialect == ClickHouse {
		return "unhex('" + hex.EncodeToString(b) + "')"
	}
	return "from_hex('" + hex.EncodeToString(b) + "')"
}

func (g *gen) has(list, value string) string {
	if g.c.Dialect == ClickHouse {
		return "has(" + list + ", " + value + ")"
	}
	return "list_contains(" + list + ", " + value + ")"
}

// amountKey is the amount_key of a balance's component in a token, the
// key of zero when the balance has none.
func (g *gen) amountKey(side, tok string) string {
	zero := g.blob(layout.LakeAmountKey(normalform.Signed{}))
	if g.c.Dialect == ClickHouse {
		i := fmt.Sprintf("indexOf(%s.token, %s)", side, str(tok))
		return fmt.Sprintf("if(%s = 0, %s, arrayElement(%s.amount_key, %s))", i, zero, side, i)
	}
	return fmt.Sprintf("coalesce(list_filter(%s, x -> x.token = %s)[1].amount_key, %s)", side, str(tok), zero)
}

// find is the SELECT of find and match: extra is a further conjunct.
func (g *gen) find(target lang.Target, where lang.Expr, order *lang.Order, limit *lang.Limit, extra string) string {
	var conds []string
	if extra != "" {
		conds = append(conds, extra)
	}
	if v, ok := target.Verdict(); ok {
		conds = append(conds, "verdict = "+str(v.String()))
	}
	if where != nil {
		conds = append(conds, g.expr(where))
	}
	s := "SELECT " + RowColumns + " FROM " + g.c.table()
	if len(conds) > 0 {
		s += " WHERE " + strings.Join(conds, " AND ")
	}
	if order != nil {
		s += " ORDER BY " + g.orderBy(order)
	} else {
		s += " ORDER BY " + g.position(false)
	}
	if limit != nil {
		s += " LIMIT " + limit.N.Text
	}
	return s
}

// position is the order of the lake's rows: block, position (unknown
// last), hash.
func (g *gen) position(desc bool) string {
	if desc {
		return "block DESC, coalesce(tx_index, 4294967295) DESC, tx_hash"
	}
	return "block, coalesce(tx_index, 4294967295), tx_hash"
}

func (g *gen) orderBy(o *lang.Order) string {
	dir := ""
	if o.Desc {
		dir = " DESC"
	}
	m := o.Metric
	switch {
	case m.Kind == lang.MetricBlock:
		return g.position(o.Desc)
	case m.IsProfit():
		side, tok := g.side(m.Kind, m.Token, true)
		return g.amountKey(side, tok) + dir + ", " + g.position(false)
	}
	return m.Kind.String() + dir + ", " + g.position(false)
}

// side is the list column and token key of a profit: net folds the
// wrapped native into the native asset.
func (g *gen) side(k lang.MetricKind, ref *lang.TokenRef, sorting bool) (string, string) {
	tok := normalform.NativeToken
	if ref != nil {
		tok = g.token(ref)
	}
	side := "gross"
	if k == lang.MetricNet {
		side = "net"
		if tok.Kind == normalform.Fungible && g.c.Cfg.IsWrappedNative(tok.Addr) {
			tok = normalform.NativeToken
		}
	}
	return side, tok.Key()
}

func (g *gen) token(t *lang.TokenRef) normalform.Token {
	if t.Address != "" {
		var a normalform.Address
		b, _ := hex.DecodeString(strings.TrimPrefix(strings.ToLower(t.Address), "0x"))
		copy(a[:], b)
		if a == normalform.NativeAddress {
			return normalform.NativeToken
		}
		return normalform.FungibleToken(a)
	}
	tok, _ := g.c.Cfg.TokenBySymbol(t.Symbol) // the planner resolved it already
	return tok
}

// amount converts a literal to base units (the planner checked it).
func (g *gen) amount(n *lang.NumLit, tok normalform.Token, human bool) normalform.Signed {
	var out normalform.Signed
	dec := 0
	if human {
		if ti, ok := g.c.Cfg.TokenInfo(tok); ok {
			dec = int(ti.Decimals)
		}
	}
	intPart, frac, _ := strings.Cut(n.Text, ".")
	digits := intPart + frac + strings.Repeat("0", dec-len(frac))
	v, _ := new(big.Int).SetString(digits, 10)
	if v != nil {
		out.Abs.SetFromBig(v)
	}
	return out
}

var sqlOps = map[lang.Op]string{lang.OpEq: "=", lang.OpNe: "<>", lang.OpLt: "<", lang.OpLe: "<=", lang.OpGt: ">", lang.OpGe: ">="}

func (g *gen) expr(e lang.Expr) string {
	switch x := e.(type) {
	case *lang.And:
		return "(" + g.expr(x.L) + " AND " + g.expr(x.R) + ")"
	case *lang.Or:
		return "(" + g.expr(x.L) + " OR " + g.expr(x.R) + ")"
	case *lang.Not:
		return "NOT " + g.expr(x.X)
	case *lang.Compare:
		return g.compare(x)
	case *lang.Is:
		var s string
		switch x.Field {
		case lang.FieldMode:
			s = "mode = " + str(x.Mode.String())
		case lang.FieldPath:
			s = "path = " + str(x.Path.String())
		case lang.FieldVerdict:
			s = "verdict = " + str(x.Verdict.String())
		default:
			s = "(verdict = " + str(x.Tier.Verdict().String()) + " AND tier = " + str(x.Tier.String()) + ")"
		}
		if x.Neg {
			return "NOT " + s
		}
		return s
	case *lang.HasReason:
		return g.has("reasons", str(string(x.Want)))
	case *lang.InBlocks:
		return g.blocks(x.Range)
	case *lang.AddrIs:
		a := strings.ToLower(x.Addr.Addr)
		var s string
		if x.Field == "bot" {
			s = "bot = " + str(a)
		} else {
			s = "coalesce(from_address = " + str(a) + ", false)"
		}
		if x.Neg {
			return "NOT " + s
		}
		return s
	case *lang.Touches:
		if x.Target.Address != "" {
			a := str(strings.ToLower(x.Target.Address))
			return "(" + g.has("addresses", a) + " OR " + g.has("token_addresses", a) + ")"
		}
		return g.has("tokens", str(g.token(x.Target).Key()))
	case *lang.FlashLoan:
		return "flash_loan"
	case *lang.HashIs:
		h, _ := normalform.ParseHash(x.Hash.Hash)
		return hashColumn(x.At) + " = " + str(h.Hex())
	}
	return "false"
}

func (g *gen) blocks(r *lang.BlockRange) string {
	from := r.From.Text
	if r.Op == 0 {
		return "block BETWEEN " + from + " AND " + r.To.Text
	}
	return "block " + sqlOps[r.Op] + " " + from
}

func (g *gen) compare(x *lang.Compare) string {
	m := x.Metric
	if !m.IsProfit() {
		v, _ := strconv.ParseUint(x.Value.Number.Text, 10, 64)
		return fmt.Sprintf("%s %s %d", m.Kind.String(), sqlOps[x.Op], v)
	}
	ref := m.Token
	if ref == nil {
		ref = x.Value.Token
	}
	tok := g.token(ref)
	amt := g.amount(x.Value.Number, tok, ref.Address == "")
	side, key := g.side(m.Kind, ref, false)
	s := g.amountKey(side, key) + " " + sqlOps[x.Op] + " " + g.blob(layout.LakeAmountKey(amt))
	if side == "net" {
		return "(costs_known AND " + s + ")" // net unknown: no comparison holds
	}
	return s
}

// groupExpr is the column a count groups on, as the planner's key (a
// string: hashes and addresses in hex, blocks in decimal).
func (g *gen) groupExpr(by lang.GroupBy) string {
	if lvl, ok := by.Level(); ok {
		return hashColumn(lvl)
	}
	switch by {
	case lang.GroupBot:
		return "bot"
	case lang.GroupSender:
		return "coalesce(from_address, '0x0000000000000000000000000000000000000000')"
	case lang.GroupBlock:
		if g.c.Dialect == ClickHouse {
			return "toString(block)"
		}
		return "CAST(block AS VARCHAR)"
	}
	return by.String()
}

func (g *gen) count(s *lang.Count) string {
	key := g.groupExpr(s.Group)
	n := "count(*)"
	switch s.What {
	case lang.TargetBots:
		n = "count(DISTINCT bot)"
	case lang.TargetShapes:
		n = "count(DISTINCT hash_shape)"
	case lang.TargetFamilies:
		n = "count(DISTINCT hash_family)"
	}
	// the example: the group's first transaction in the lake's order
	ex := "arg_min(tx_hash, (block, coalesce(tx_index, 4294967295), tx_hash))"
	if g.c.Dialect == ClickHouse {
		ex = "argMin(tx_hash, (block, coalesce(tx_index, 4294967295), tx_hash))"
	}
	sel := fmt.Sprintf("SELECT %s AS k, %s AS n, count(*) AS txs, %s AS example FROM %s", key, n, ex, g.c.table())
	if s.Where != nil {
		sel += " WHERE " + g.expr(s.Where)
	}
	sel += " GROUP BY k ORDER BY n DESC, k"
	if s.Limit != nil {
		sel += " LIMIT " + s.Limit.N.Text
	}
	return sel
}

// anomalies: the bot's transactions, each with its shape's first use (by
// position) and its rank in the bot's and the shape's transactions.
func (g *gen) anomalies(s *lang.Anomalies, q *Query) string {
	bot := str(strings.ToLower(s.Bot.Addr))
	pos := "block, coalesce(tx_index, 4294967295), tx_hash"
	inner := fmt.Sprintf("SELECT %s, hash_shape, "+
		"min(block) OVER (PARTITION BY hash_shape) AS first_block, "+
		"row_number() OVER (PARTITION BY hash_shape ORDER BY %s) AS in_shape, "+
		"row_number() OVER (ORDER BY %s) AS in_bot "+
		"FROM %s WHERE bot = %s", RowColumns, pos, pos, g.c.table(), bot)
	var cond string
	switch {
	case s.Baseline != nil:
		from, _ := strconv.ParseUint(s.Baseline.From.Text, 10, 64)
		to, _ := strconv.ParseUint(s.Baseline.To.Text, 10, 64)
		q.HasBase, q.BaseFrom, q.BaseTo = true, from, to
		cond = fmt.Sprintf("block > %d AND hash_shape NOT IN (SELECT hash_shape FROM %s WHERE bot = %s AND block BETWEEN %d AND %d)", to, g.c.table(), bot, from, to)
	case s.Since != nil:
		n, _ := strconv.ParseUint(s.Since.Text, 10, 64)
		q.Since = &n
		cond = fmt.Sprintf("block >= %d AND first_block >= %d", n, n)
	default:
		cond = "in_shape = 1 AND in_bot > 1"
	}
	sql := fmt.Sprintf("SELECT %s, hash_shape, first_block FROM (%s) AS t WHERE %s ORDER BY %s", RowColumns, inner, cond, pos)
	if s.Limit != nil {
		sql += " LIMIT " + s.Limit.N.Text
	}
	return sql
}

// Why is the anomalies' why column, as the planner writes it.
func (q *Query) Why(firstBlock uint64) string {
	switch {
	case q.HasBase:
		return fmt.Sprintf("shape not among blocks %d..%d", q.BaseFrom, q.BaseTo)
	case q.Since != nil:
		return fmt.Sprintf("shape first used at block %d", firstBlock)
	}
	return "first use of this shape"
}

// GroupKey is a count's key as the planner shows it: the value, and its
// human form (hashes and addresses shortened).
func GroupKey(by lang.GroupBy, key string) (string, string) {
	if _, ok := by.Level(); ok && len(key) > 18 {
		return key, key[:18] + "…"
	}
	if by == lang.GroupBot || by == lang.GroupSender {
		var a normalform.Address
		b, err := hex.DecodeString(strings.TrimPrefix(key, "0x"))
		if err == nil && len(b) == len(a) {
			copy(a[:], b)
			return key, normalform.ShortAddr(a)
		}
	}
	return key, key
}
