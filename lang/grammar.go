package lang

import (
	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// The grammar below is participle's and stays in this file: parse.go
// lowers it into the AST of ast.go, which is what the rest of flowq sees.

// keywords are the language's reserved words: a token symbol or a name
// cannot be one (so "order" after an amount is never read as a token).
const keywords = "explain|find|arbitrages|arbitrage|warnings|warning|transactions|txs|none|where|order|by|asc|desc|limit|same|and|at|match|anomalies|for|of|bot|since|block|blocks|baseline|count|bots|shapes|families|show|as|or|not|has|reason|touches|flashloan|flash_loan|gross|net|profit|in|pools|hops|cycles|leftovers|verdict|tier|path|mode|sandwiches|sandwich|backruns|backrun|is|between|sender|with|through|over|above|under|below|least|most|more|less|greater|fewer|than"

// numWords are the numbers a query may spell out ("at least three
// pools"); the lexer reads them before identifiers, so a token whose
// symbol is one of them is named by its address.
const numWords = "zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"

var queryLexer = lexer.MustSimple([]lexer.SimpleRule{
	{Name: "Comment", Pattern: `(--|#)[^\n]*`},
	{Name: "Whitespace", Pattern: `[ \t\r\n]+`},
	// Short is a hash or address as flowq prints it shortened: its first
	// digits, "…" (or "..."), its last digits (0x3db1…dcfa, 0x0000c…10000;
	// 0x1234abcd… with none after). Prefix is 0x and hex digits that are
	// neither an address nor a hash: a prefix of one (0x3db1a7), or 0x0,
	// the null address. The check pass bounds their digits; the planner
	// resolves them through the index.
	{Name: "Short", Pattern: `0[xX][0-9a-fA-F]+(…|\.\.\.)[0-9a-fA-F]*`},
	{Name: "Hash", Pattern: `0[xX][0-9a-fA-F]{64}\b`},
	{Name: "Address", Pattern: `0[xX][0-9a-fA-F]{40}\b`},
	{Name: "Prefix", Pattern: `0[xX][0-9a-fA-F]+`},
	{Name: "BadHex", Pattern: `0[xX]`},
	{Name: "Number", Pattern: `[0-9]+(\.[0-9]+)?`},
	{Name: "NumWord", Pattern: `(?i)\b(` + numWords + `)\b`},
	{Name: "Keyword", Pattern: `(?i)\b(` + keywords + `)\b`},
	{Name: "Ident", Pattern: `[a-zA-Z_][a-zA-Z0-9_]*`},
	{Name: "String", Pattern: `"(\\.|[^"\\])*"?`},
	{Name: "Op", Pattern: `>=|<=|!=|==|=|>|<`},
	{Name: "Range", Pattern: `\.\.`},
	{Name: "Punct", Pattern: `[;(),]`},
})

type gProgram struct {
	Stmts []*gStatement `parser:"( @@ ( ';' @@? )* )?"`
}

type gStatement struct {
	Pos     lexer.Position
	EndPos  lexer.Position
	Explain bool    `parser:"@'explain'?"`
	Find    *gFind  `parser:"( @@"`
	Same    *gSame  `parser:"| @@"`
	Match   *gMatch `parser:"| @@"`
	Anom    *gAnom  `parser:"| @@"`
	Count   *gCount `parser:"| @@"`
	Show    *gShow  `parser:"| @@ )"`
}

type gFind struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Kind   string  `parser:"( 'find' @( 'arbitrages' | 'arbitrage' | 'warnings' | 'warning' | 'transactions' | 'txs' | 'none' | 'sandwiches' | 'sandwich' | 'backruns' | 'backrun' )? | @( 'arbitrages' | 'warnings' | 'transactions' | 'txs' | 'sandwiches' | 'backruns' ) )"`
	Where  *gExpr  `parser:"( ( 'where' | 'with' ) @@ | (?= 'through') @@ )?"`
	Order  *gOrder `parser:"@@?"`
	Limit  *gLimit `parser:"@@?"`
}

type gSame struct {
	Pos    lexer.Position
	EndPos lexer.Position
	A      *gTx    `parser:"'same' @@"`
	B      *gTx    `parser:"( 'and' | ',' )? @@"`
	Level  *gIdent `parser:"( 'at' @@ )?"`
}

type gMatch struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Ref    *gTx    `parser:"'match' @@"`
	Level  *gIdent `parser:"( 'at' @@ )?"`
	Where  *gExpr  `parser:"( ( 'where' | 'with' ) @@ )?"`
	Order  *gOrder `parser:"@@?"`
	Limit  *gLimit `parser:"@@?"`
}

type gAnom struct {
	Pos      lexer.Position
	EndPos   lexer.Position
	Bot      *gAddr  `parser:"'anomalies' ( 'for' | 'of' ) 'bot'? @@"`
	Since    *gNum   `parser:"( 'since' 'block' @@"`
	Baseline *gRange `parser:"| 'baseline' 'blocks'? @@ )?"`
	Limit    *gLimit `parser:"@@?"`
}

type gCount struct {
	Pos    lexer.Position
	EndPos lexer.Position
	What   string  `parser:"'count' @( 'transactions' | 'txs' | 'bots' | 'shapes' | 'families' | 'sandwiches' | 'backruns' )?"`
	By     *gIdent `parser:"'by' @@"`
	Where  *gExpr  `parser:"( ( 'where' | 'with' ) @@ )?"`
	Limit  *gLimit `parser:"@@?"`
}

type gShow struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Block  *gNum     `parser:"'show' ( 'block' @@"`
	Tx     *gTx      `parser:"| @@"`
	Views  []*gIdent `parser:"( 'as' @@ ( ',' @@ )* )? )"`
}

type gOrder struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Metric *gMetric `parser:"'order' 'by' @@"`
	Dir    string   `parser:"@( 'asc' | 'desc' )?"`
}

type gLimit struct {
	Pos    lexer.Position
	EndPos lexer.Position
	N      *gNum `parser:"'limit' @@"`
}

type gExpr struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Left   *gAnd   `parser:"@@"`
	Right  []*gAnd `parser:"( 'or' @@ )*"`
}

type gAnd struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Left   *gUnary   `parser:"@@"`
	Right  []*gUnary `parser:"( 'and' @@ | (?= 'through') @@ )*"`
}

type gUnary struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Not    bool   `parser:"@'not'?"`
	Group  *gExpr `parser:"( '(' @@ ')'"`
	Pred   *gPred `parser:"| @@ )"`
}

type gPred struct {
	Pos     lexer.Position
	EndPos  lexer.Position
	Compare *gCompare `parser:"@@"`
	Is      *gIs      `parser:"| @@"`
	Reason  *gIdent   `parser:"| 'has'? 'reason' @@"`
	Blocks  *gBlocks  `parser:"| @@"`
	AddrIs  *gAddrIs  `parser:"| @@"`
	Touches *gToken   `parser:"| 'touches' @@"`
	Flash   bool      `parser:"| @( 'flashloan' | 'flash_loan' )"`
	Through *gThrough `parser:"| @@"`
	HashIs  *gHashIs  `parser:"| @@"`
}

// gThrough is a count written number first: "through at least three
// pools", "with 2 cycles".
type gThrough struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Op     *gOp   `parser:"'through'? @@?"`
	N      *gNum  `parser:"@@"`
	What   string `parser:"@( 'pools' | 'hops' | 'cycles' | 'leftovers' )"`
}

// gOp is a comparison, as a symbol or in words.
type gOp struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Sym    string `parser:"@Op"`
	Ge     bool   `parser:"| @( 'at' 'least' )"`
	Le     bool   `parser:"| @( 'at' 'most' )"`
	Gt     bool   `parser:"| @( 'over' | 'above' | ( 'more' | 'greater' ) 'than' )"`
	Lt     bool   `parser:"| @( 'under' | 'below' | ( 'less' | 'fewer' ) 'than' )"`
}

func (g *gOp) op() Op {
	switch {
	case g == nil:
		return OpEq
	case g.Ge:
		return OpGe
	case g.Le:
		return OpLe
	case g.Gt:
		return OpGt
	case g.Lt:
		return OpLt
	}
	o, _ := ParseOp(g.Sym)
	return o
}

type gCompare struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Metric *gMetric `parser:"@@"`
	Op     *gOp     `parser:"@@"`
	Value  *gAmount `parser:"@@"`
}

type gMetric struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Profit string  `parser:"( ( @( 'gross' | 'net' ) 'profit' | @'profit' )"`
	Token  *gToken `parser:"( 'in' @@ )?"`
	Count  string  `parser:"| @( 'pools' | 'hops' | 'cycles' | 'leftovers' | 'block' ) )"`
}

type gAmount struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Number *gNum   `parser:"@@"`
	Token  *gToken `parser:"@@?"`
}

type gIs struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Field  string  `parser:"@( 'verdict' | 'tier' | 'path' | 'mode' )"`
	Op     string  `parser:"( @( '=' | '==' | '!=' ) | @'is' )"`
	Value  *gIdent `parser:"@@"`
}

type gBlocks struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Range  *gRange `parser:"'blocks' @@"`
	From   *gNum   `parser:"| 'block' ( 'between' @@"`
	To     *gNum   `parser:"'and' @@"`
	Op     string  `parser:"| @Op"`
	N      *gNum   `parser:"@@ )"`
}

type gRange struct {
	Pos    lexer.Position
	EndPos lexer.Position
	From   *gNum `parser:"@@ Range"`
	To     *gNum `parser:"@@"`
}

type gAddrIs struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Field  string `parser:"@( 'bot' | 'sender' )"`
	Op     string `parser:"( @( '=' | '==' | '!=' ) | @'is' )"`
	Addr   *gAddr `parser:"@@"`
}

type gHashIs struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Level  *gIdent `parser:"@@"`
	Op     string  `parser:"@( '=' | '==' )"`
	Hash   *gHash  `parser:"@@"`
}

type gToken struct {
	Pos     lexer.Position
	EndPos  lexer.Position
	Address string `parser:"@( Address | Short | Prefix )"`
	Symbol  string `parser:"| @Ident"`
}

type gTx struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Hash   string `parser:"@( Hash | Short | Prefix | Address )"`
}

type gAddr struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Addr   string `parser:"@( Address | Short | Prefix )"`
}

type gHash struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Hash   string `parser:"@( Hash | Short | Prefix | Address )"`
}

type gNum struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Text   string `parser:"@( Number | NumWord )"`
}

type gIdent struct {
	Pos    lexer.Position
	EndPos lexer.Position
	Name   string `parser:"@(Ident | Keyword)"`
}

var parser = participle.MustBuild[gProgram](
	participle.Lexer(queryLexer),
	participle.Elide("Whitespace", "Comment"),
	participle.CaseInsensitive("Ident", "Keyword"),
	participle.UseLookahead(4),
)
