package lang

import (
	"fmt"

	"github.com/flowq/flowq/normalform"
)

// Pos is a position in a query's source: byte offset, 1-based line and
// column.
type Pos struct {
	Offset, Line, Column int
}

func (p Pos) String() string { return fmt.Sprintf("%d:%d", p.Line, p.Column) }

// Node is any node of flowq's query AST. Every node knows where it starts
// and ends in the source.
type Node interface {
	Pos() Pos
	End() Pos
	node()
}

// Span is the source extent of a node; embedded in every node.
type Span struct{ From, To Pos }

func (s Span) Pos() Pos { return s.From }
func (s Span) End() Pos { return s.To }
func (Span) node()      {}

// Statement is one query. The statement kinds are sealed: Find, Same,
// Match, Anomalies, Count, Show, Findings, ShowBlock, and Explain around
// any of them. Each knows the Source it was parsed from: the layers after
// the parser report their errors at its nodes through it.
type Statement interface {
	Node
	Source() *Source
	stmt()
}

// Stmt is what every statement embeds: its extent and its source.
type Stmt struct {
	Span
	Src *Source
}

// Source is the source of the statement; never nil for a parsed one.
func (s Stmt) Source() *Source { return s.Src }

// Expr is a boolean filter over transactions. Sealed: And, Or, Not, and
// the predicates.
type Expr interface {
	Node
	expr()
}

// --- statements ---------------------------------------------------------

// Explain asks for the plan of a query instead of its result.
type Explain struct {
	Stmt
	Query Statement
}

// Find is Q_arb and its generalisations: transactions matching a filter.
type Find struct {
	Stmt
	Target Target // transactions (any verdict), arbitrages, warnings or none
	Where  Expr   // nil: no filter
	Order  *Order
	Limit  *Limit
}

// Same is Q_eq (and, at level family, Q_fam): are two transactions
// equivalent at a level, and where do they first differ.
type Same struct {
	Stmt
	A, B  *TxRef
	Level *Ident // exact when nil
	At    normalform.Level
}

// Match is Q_match: every transaction equivalent to a reference one.
type Match struct {
	Stmt
	Ref   *TxRef
	Level *Ident // shape when nil
	At    normalform.Level
	Where Expr
	Order *Order
	Limit *Limit
}

// Anomalies is Q_anom: a bot's transactions whose shape it had not used
// before, against all its earlier transactions (Since nil and Baseline
// nil), or from a block on, or against a baseline block range.
type Anomalies struct {
	Stmt
	Bot      *AddrLit
	Since    *NumLit
	Baseline *BlockRange
	Limit    *Limit
}

// Count groups transactions and counts: the largest families (count by
// family), the bots per family (count bots by family), the shapes per bot
// (count shapes by bot).
type Count struct {
	Stmt
	What  Target // transactions, bots, shapes, families, sandwiches, backruns
	By    *Ident // family, shape, tokens, exact, bot, verdict, tier, path, block (findings: bot, sender, block)
	Group GroupBy
	Where Expr
	Limit *Limit
}

// Findings is "find sandwiches" or "find backruns": the block findings
// stored in the index (normalform/block), filtered by profit, pools,
// block, bot, sender and touches.
type Findings struct {
	Stmt
	Kind  Target // TargetSandwiches or TargetBackruns
	Where Expr
	Order *Order
	Limit *Limit
}

// ShowBlock is "show block N": a block's transactions in order, each with
// its verdict, tier, path and roles in the block's findings.
type ShowBlock struct {
	Stmt
	Block *NumLit
}

// Show shows one transaction: its normal form as a tree, as terms, its
// cycles and balances, its rewrite steps.
type Show struct {
	Stmt
	Tx    *TxRef
	Views []*Ident // empty: the default view
	As    []View   // the views, resolved; [ViewAll] by default
}

func (*Explain) stmt()   {}
func (*Find) stmt()      {}
func (*Same) stmt()      {}
func (*Match) stmt()     {}
func (*Anomalies) stmt() {}
func (*Count) stmt()     {}
func (*Show) stmt()      {}
func (*Findings) stmt()  {}
func (*ShowBlock) stmt() {}

// Order is "order by METRIC [in TOKEN] [asc|desc]".
type Order struct {
	Span
	Metric *Metric
	Desc   bool
}

// Limit is "limit N".
type Limit struct {
	Span
	N *NumLit
}

// --- expressions ----------------------------------------------------------

// And is L and R.
type And struct {
	Span
	L, R Expr
}

// Or is L or R.
type Or struct {
	Span
	L, R Expr
}

// Not is not X.
type Not struct {
	Span
	X Expr
}

// Compare is METRIC OP VALUE: "net profit > 1 WETH", "pools >= 3",
// "gross profit in 0xc02a… > 1000000" (base units).
type Compare struct {
	Span
	Metric *Metric
	Op     Op
	Value  *Amount
}

// Is is a field equal (or not) to a name: "verdict = arbitrage",
// "tier = confirmed".
type Is struct {
	Span
	Field Field
	Neg   bool
	Value *Ident
	// The value, resolved: the one of the Field's class.
	Verdict normalform.Verdict
	Tier    normalform.Tier
	Path    normalform.Path
	Mode    normalform.Mode
}

// HasReason is "reason NAME".
type HasReason struct {
	Span
	Reason *Ident
	Want   normalform.Reason
}

// InBlocks is "block between A and B", "block >= A", "blocks A..B".
type InBlocks struct {
	Span
	Range *BlockRange
}

// AddrIs is "bot = ADDR" (the recipient), "sender = ADDR".
type AddrIs struct {
	Span
	Field string // bot, sender
	Neg   bool
	Addr  *AddrLit
}

// Touches is "touches ADDR" or "touches TOKEN": an address or a token
// appears in the transaction's transfers.
type Touches struct {
	Span
	Target *TokenRef
}

// FlashLoan is "flashloan": a leftover cycle (a loan recovered from the
// leftovers) in the normal form.
type FlashLoan struct{ Span }

// HashIs is "family = HASH" (or shape, tokens, exact).
type HashIs struct {
	Span
	Level *Ident
	At    normalform.Level
	Hash  *HashLit
}

func (*And) expr()       {}
func (*Or) expr()        {}
func (*Not) expr()       {}
func (*Compare) expr()   {}
func (*Is) expr()        {}
func (*HasReason) expr() {}
func (*InBlocks) expr()  {}
func (*AddrIs) expr()    {}
func (*Touches) expr()   {}
func (*FlashLoan) expr() {}
func (*HashIs) expr()    {}

// --- leaves -----------------------------------------------------------------

// Metric is what a comparison or an order measures: "gross profit",
// "net profit" (optionally "in TOKEN"), "pools", "hops", "cycles",
// "leftovers", "block".
type Metric struct {
	Span
	Kind  MetricKind
	Token *TokenRef
}

// IsProfit reports a profit metric.
func (m *Metric) IsProfit() bool { return m.Kind.IsProfit() }

// String renders the metric as written.
func (m *Metric) String() string {
	s := m.Kind.String()
	if m.IsProfit() {
		s += " profit"
	}
	if m.Token != nil {
		s += " in " + m.Token.String()
	}
	return s
}

// Amount is a number with an optional token: "1.5 WETH", "1000000".
type Amount struct {
	Span
	Number *NumLit
	Token  *TokenRef
}

// TokenRef names a token by symbol ("WETH") or address; after
// "touches", an address may be shortened (Part), which the planner
// resolves through the index.
type TokenRef struct {
	Span
	Symbol  string
	Address string // 0x and 40 hex digits; "" when Part is set
	Part    Partial
}

func (t *TokenRef) String() string {
	if t.Part.IsPartial() {
		return "partial " + t.Part.String()
	}
	if t.Address != "" {
		return t.Address
	}
	return t.Symbol
}

// Partial is a reference written shortened, as flowq prints it
// (0x3db1…dcfa, 0x0000c…10000) or as a prefix (0x3db1a7): the hex digits
// before the "…" and after it (none for a prefix), lowercase, without
// 0x. The check pass bounds their number (MinPrefixDigits); the planner
// resolves the reference through the index, to the one value that starts
// with Prefix and ends with Suffix. The zero Partial is a whole value.
type Partial struct {
	Prefix, Suffix string
}

// Minimum digits of a shortened reference: MinPrefixDigits in all, and
// MinShortDigits before the "…" when digits follow it (the index is
// searched by the leading digits).
const (
	MinPrefixDigits = 6
	MinShortDigits  = 4
)

// IsPartial reports a shortened reference.
func (p Partial) IsPartial() bool { return p.Prefix != "" || p.Suffix != "" }

// String writes the reference as it reads: 0x3db1…dcfa, 0x3db1a7.
func (p Partial) String() string {
	if p.Suffix == "" {
		return "0x" + p.Prefix
	}
	return "0x" + p.Prefix + "…" + p.Suffix
}

// Digits is how many hex digits the reference gives.
func (p Partial) Digits() int { return len(p.Prefix) + len(p.Suffix) }

// BlockRange is a block range: From..To inclusive; a nil end is open.
type BlockRange struct {
	Span
	From, To *NumLit
	Op       Op // for "block OP N": the comparison; 0 for a range
}

// TxRef is a transaction hash literal: whole (Hash), or shortened
// (Part; Hash "").
type TxRef struct {
	Span
	Hash string
	Part Partial
}

// AddrLit is an address literal: whole (Addr; 0x0 is the null address),
// or shortened (Part; Addr "").
type AddrLit struct {
	Span
	Addr string
	Part Partial
}

// HashLit is a 32-byte hash literal: whole (Hash), or shortened (Part;
// Hash "").
type HashLit struct {
	Span
	Hash string
	Part Partial
}

// NumLit is a non-negative decimal number, as written.
type NumLit struct {
	Span
	Text string
}

// Ident is a bare word.
type Ident struct {
	Span
	Name string
}

// Walk calls fn on n and its descendants, depth first, until fn returns
// false.
func Walk(n Node, fn func(Node) bool) {
	if n == nil || !fn(n) {
		return
	}
	visit := func(c Node) {
		if c != nil && !isNil(c) {
			Walk(c, fn)
		}
	}
	switch x := n.(type) {
	case *Explain:
		visit(x.Query)
	case *Find:
		visit(x.Where)
		visit(x.Order)
		visit(x.Limit)
	case *Same:
		visit(x.A)
		visit(x.B)
		visit(x.Level)
	case *Match:
		visit(x.Ref)
		visit(x.Level)
		visit(x.Where)
		visit(x.Order)
		visit(x.Limit)
	case *Anomalies:
		visit(x.Bot)
		visit(x.Since)
		visit(x.Baseline)
		visit(x.Limit)
	case *Count:
		visit(x.By)
		visit(x.Where)
		visit(x.Limit)
	case *Findings:
		visit(x.Where)
		visit(x.Order)
		visit(x.Limit)
	case *ShowBlock:
		visit(x.Block)
	case *Show:
		visit(x.Tx)
		for _, v := range x.Views {
			visit(v)
		}
	case *Order:
		visit(x.Metric)
	case *Limit:
		visit(x.N)
	case *And:
		visit(x.L)
		visit(x.R)
	case *Or:
		visit(x.L)
		visit(x.R)
	case *Not:
		visit(x.X)
	case *Compare:
		visit(x.Metric)
		visit(x.Value)
	case *Is:
		visit(x.Value)
	case *HasReason:
		visit(x.Reason)
	case *InBlocks:
		visit(x.Range)
	case *AddrIs:
		visit(x.Addr)
	case *Touches:
		visit(x.Target)
	case *HashIs:
		visit(x.Level)
		visit(x.Hash)
	case *Metric:
		visit(x.Token)
	case *Amount:
		visit(x.Number)
		visit(x.Token)
	case *BlockRange:
		visit(x.From)
		visit(x.To)
	}
}

// isNil catches typed nil pointers stored in interfaces.
func isNil(n Node) bool {
	switch x := n.(type) {
	case *Order:
		return x == nil
	case *Limit:
		return x == nil
	case *Ident:
		return x == nil
	case *NumLit:
		return x == nil
	case *BlockRange:
		return x == nil
	case *TokenRef:
		return x == nil
	case *TxRef:
		return x == nil
	case *AddrLit:
		return x == nil
	case *HashLit:
		return x == nil
	case *Metric:
		return x == nil
	case *Amount:
		return x == nil
	}
	return false
}
