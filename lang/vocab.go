package lang

import (
	"slices"
	"strings"

	"github.com/flowq/flowq/normalform"
)

// The vocabulary: every word the language resolves by name, declared once
// (in the manner of cel-go's environment): what it names (its Class),
// where it may appear (Places), the typed value the checker gives the
// planner, and its help text. The check pass (check.go) resolves names
// against it; the parser's hints ("did you mean"), the planner (which
// receives the typed values), the REPL's completion and .help read it.
// The engine's names (verdicts, tiers, reasons, levels, paths, modes)
// come from normalform, which owns them.

// Class is what a word of the vocabulary names.
type Class uint8

const (
	ClassStatement  Class = iota + 1 // a statement's first word
	ClassFindTarget                  // after find: what it finds
	ClassCountWhat                   // after count: what it counts
	ClassGroupBy                     // after count … by
	ClassMetric                      // compared, and after order by
	ClassOperator                    // a comparison
	ClassCondition                   // a word a condition starts with
	ClassLevel                       // an equivalence level (at LEVEL, LEVEL = HASH)
	ClassVerdict
	ClassTier
	ClassPath
	ClassMode
	ClassReason
	ClassView // after show TX as
)

var classNames = map[Class]string{
	ClassStatement: "statement", ClassFindTarget: "find target", ClassCountWhat: "count target",
	ClassGroupBy: "grouping", ClassMetric: "metric", ClassOperator: "operator", ClassCondition: "condition",
	ClassLevel: "equivalence level", ClassVerdict: "verdict", ClassTier: "tier", ClassPath: "path",
	ClassMode: "mode", ClassReason: "reason", ClassView: "view",
}

func (c Class) String() string { return classNames[c] }

// Places says where a word may appear: in statements over transactions,
// over block findings (find or count sandwiches and backruns), or both.
type Places uint8

const (
	InTxs      Places = 1 << iota // statements over transactions
	InFindings                    // statements over block findings
	Anywhere   = InTxs | InFindings
)

// Decl declares one word.
type Decl struct {
	Word   string // lower case, as written
	Class  Class
	Places Places
	Value  any // the typed value: a normalform.Verdict, a GroupBy, a Metric kind, …
	Help   string
	// Alias marks a second spelling (txs for transactions, the singular of
	// a find target): resolved, not offered by completion.
	Alias bool
}

// Vocabulary is the table of declarations.
type Vocabulary struct {
	decls   []Decl
	byClass map[Class][]int
}

// Vocab is the language's vocabulary.
var Vocab = newVocabulary()

// Lookup resolves a word (any case) of a class.
func (v *Vocabulary) Lookup(c Class, word string) (Decl, bool) {
	w := strings.ToLower(word)
	for _, i := range v.byClass[c] {
		if v.decls[i].Word == w {
			return v.decls[i], true
		}
	}
	return Decl{}, false
}

// Words are the words of a class allowed in places (aliases left out), in
// declaration order.
func (v *Vocabulary) Words(c Class, in Places) []string {
	var out []string
	for _, i := range v.byClass[c] {
		if d := v.decls[i]; !d.Alias && d.Places&in != 0 {
			out = append(out, d.Word)
		}
	}
	return out
}

// Decls are the declarations of a class, aliases included.
func (v *Vocabulary) Decls(c Class) []Decl {
	var out []Decl
	for _, i := range v.byClass[c] {
		out = append(out, v.decls[i])
	}
	return out
}

// Classes lists the classes, in order.
func (v *Vocabulary) Classes() []Class {
	var out []Class
	for c := ClassStatement; c <= ClassView; c++ {
		out = append(out, c)
	}
	return out
}

// ClassNamed is the class a name (as .help takes it: "verdict",
// "verdicts", "grouping", "level") names.
func (v *Vocabulary) ClassNamed(name string) (Class, bool) {
	n := strings.TrimSuffix(strings.ToLower(name), "s")
	for _, c := range v.Classes() {
		s := classNames[c]
		if s == n || strings.HasSuffix(s, " "+n) || strings.ReplaceAll(s, " ", "") == n {
			return c, true
		}
	}
	return 0, false
}

func (v *Vocabulary) add(d Decl) {
	if d.Places == 0 {
		d.Places = InTxs
	}
	v.byClass[d.Class] = append(v.byClass[d.Class], len(v.decls))
	v.decls = append(v.decls, d)
}

// --- typed values -------------------------------------------------------

// StmtKind is a statement's kind.
type StmtKind uint8

const (
	StmtFind StmtKind = iota + 1
	StmtSame
	StmtMatch
	StmtAnomalies
	StmtCount
	StmtShow
	StmtFindings
	StmtShowBlock
)

var stmtKindNames = [...]string{"", "find", "same", "match", "anomalies", "count", "show", "findings", "block"}

func (k StmtKind) String() string { return stmtKindNames[k] }

// KindOf is the kind of a statement (of the statement an explain wraps).
func KindOf(st Statement) StmtKind {
	switch x := st.(type) {
	case *Explain:
		return KindOf(x.Query)
	case *Find:
		return StmtFind
	case *Same:
		return StmtSame
	case *Match:
		return StmtMatch
	case *Anomalies:
		return StmtAnomalies
	case *Count:
		return StmtCount
	case *Show:
		return StmtShow
	case *Findings:
		return StmtFindings
	case *ShowBlock:
		return StmtShowBlock
	}
	return 0
}

// Target is what a find or a count is over: transactions (of a verdict,
// for find), bots, shapes, families, or block findings.
type Target uint8

const (
	TargetTransactions Target = iota // find: any verdict
	TargetArbitrages
	TargetWarnings
	TargetNone
	TargetBots
	TargetShapes
	TargetFamilies
	TargetSandwiches
	TargetBackruns
)

var targetNames = [...]string{"transactions", "arbitrages", "warnings", "none", "bots", "shapes", "families", "sandwiches", "backruns"}

func (t Target) String() string { return targetNames[t] }

// Findings says the target is block findings.
func (t Target) Findings() bool { return t == TargetSandwiches || t == TargetBackruns }

// Verdict is the verdict a find of t asks for; false for any.
func (t Target) Verdict() (normalform.Verdict, bool) {
	switch t {
	case TargetArbitrages:
		return normalform.VerdictArbitrage, true
	case TargetWarnings:
		return normalform.VerdictWarning, true
	case TargetNone:
		return normalform.VerdictNone, true
	}
	return 0, false
}

// GroupBy is what count … by groups on.
type GroupBy uint8

const (
	GroupFamily GroupBy = iota + 1
	GroupShape
	GroupTokens
	GroupExact
	GroupBot
	GroupSender
	GroupVerdict
	GroupTier
	GroupPath
	GroupMode
	GroupBlock
)

var groupByNames = [...]string{"", "family", "shape", "tokens", "exact", "bot", "sender", "verdict", "tier", "path", "mode", "block"}

func (g GroupBy) String() string { return groupByNames[g] }

// Level is the equivalence level whose hash g groups on; false when g is
// not a level.
func (g GroupBy) Level() (normalform.Level, bool) {
	switch g {
	case GroupFamily:
		return normalform.Family, true
	case GroupShape:
		return normalform.Shape, true
	case GroupTokens:
		return normalform.Tokens, true
	case GroupExact:
		return normalform.Exact, true
	}
	return 0, false
}

// MetricKind is what a metric measures.
type MetricKind uint8

const (
	MetricGross MetricKind = iota + 1
	MetricNet
	MetricPools
	MetricHops
	MetricCycles
	MetricLeftovers
	MetricBlock
)

var metricNames = [...]string{"", "gross", "net", "pools", "hops", "cycles", "leftovers", "block"}

func (m MetricKind) String() string { return metricNames[m] }

// IsProfit says m is a profit (gross or net).
func (m MetricKind) IsProfit() bool { return m == MetricGross || m == MetricNet }

// IsCount says m is a count of the normal form (pools, hops, cycles,
// leftovers), stored in the record's header.
func (m MetricKind) IsCount() bool { return m >= MetricPools && m <= MetricLeftovers }

// Op is a comparison.
type Op uint8

const (
	OpEq Op = iota + 1
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
)

var opNames = [...]string{"", "=", "!=", "<", "<=", ">", ">="}

func (o Op) String() string { return opNames[o] }

// Holds says whether the comparison holds for c, the sign of a comparison
// of the left side with the right (cmp.Compare's).
func (o Op) Holds(c int) bool {
	switch o {
	case OpEq:
		return c == 0
	case OpNe:
		return c != 0
	case OpLt:
		return c < 0
	case OpLe:
		return c <= 0
	case OpGt:
		return c > 0
	case OpGe:
		return c >= 0
	}
	return false
}

// ParseOp reads a comparison symbol ("==" is "=").
func ParseOp(s string) (Op, bool) {
	if s == "==" {
		return OpEq, true
	}
	if i := slices.Index(opNames[1:], s); i >= 0 {
		return Op(i + 1), true
	}
	return 0, false
}

// Field is the field of an "is" condition: verdict = …, tier = …,
// path = …, mode = ….
type Field uint8

const (
	FieldVerdict Field = iota + 1
	FieldTier
	FieldPath
	FieldMode
)

var fieldNames = [...]string{"", "verdict", "tier", "path", "mode"}

func (f Field) String() string { return fieldNames[f] }

// Class is the class of the values the field takes.
func (f Field) Class() Class {
	return [...]Class{0, ClassVerdict, ClassTier, ClassPath, ClassMode}[f]
}

// View is a view of show TX as.
type View uint8

const (
	ViewTree View = iota + 1
	ViewTerms
	ViewCycles
	ViewBalances
	ViewSteps
	ViewTransfers
	ViewAll
)

var viewNames = [...]string{"", "tree", "terms", "cycles", "balances", "steps", "transfers", "all"}

func (v View) String() string { return viewNames[v] }

// --- the table ------------------------------------------------------------

func newVocabulary() *Vocabulary {
	v := &Vocabulary{byClass: map[Class][]int{}}
	for _, d := range []Decl{
		{Word: "explain", Help: "the plan of a statement instead of its result"},
		{Word: "find", Value: StmtFind, Places: Anywhere, Help: "transactions (or block findings) matching a filter"},
		{Word: "same", Value: StmtSame, Help: "are two transactions equivalent at a level, and where do they first differ"},
		{Word: "match", Value: StmtMatch, Help: "every transaction equivalent to a reference one"},
		{Word: "anomalies", Value: StmtAnomalies, Help: "a bot's transactions whose shape it had not used before"},
		{Word: "count", Value: StmtCount, Places: Anywhere, Help: "group and count"},
		{Word: "show", Value: StmtShow, Help: "one transaction (show TX as VIEW), or a block (show block N)"},
	} {
		d.Class = ClassStatement
		v.add(d)
	}
	for _, d := range []Decl{
		{Word: "arbitrages", Value: TargetArbitrages, Help: "transactions whose verdict is arbitrage"},
		{Word: "arbitrage", Value: TargetArbitrages, Alias: true},
		{Word: "warnings", Value: TargetWarnings, Help: "transactions whose verdict is warning"},
		{Word: "warning", Value: TargetWarnings, Alias: true},
		{Word: "none", Value: TargetNone, Help: "transactions whose verdict is none"},
		{Word: "transactions", Value: TargetTransactions, Help: "transactions of any verdict"},
		{Word: "txs", Value: TargetTransactions, Help: "transactions of any verdict"},
		{Word: "sandwiches", Value: TargetSandwiches, Places: InFindings, Help: "sandwiches found in blocks"},
		{Word: "sandwich", Value: TargetSandwiches, Places: InFindings, Alias: true},
		{Word: "backruns", Value: TargetBackruns, Places: InFindings, Help: "back-runs found in blocks"},
		{Word: "backrun", Value: TargetBackruns, Places: InFindings, Alias: true},
	} {
		d.Class = ClassFindTarget
		v.add(d)
	}
	for _, d := range []Decl{
		{Word: "transactions", Value: TargetTransactions, Help: "transactions per group"},
		{Word: "txs", Value: TargetTransactions, Help: "transactions per group"},
		{Word: "bots", Value: TargetBots, Help: "distinct bots per group"},
		{Word: "shapes", Value: TargetShapes, Help: "distinct shapes per group"},
		{Word: "families", Value: TargetFamilies, Help: "distinct families per group"},
		{Word: "sandwiches", Value: TargetSandwiches, Places: InFindings, Help: "sandwiches per group"},
		{Word: "backruns", Value: TargetBackruns, Places: InFindings, Help: "back-runs per group"},
	} {
		d.Class = ClassCountWhat
		v.add(d)
	}
	for _, d := range []Decl{
		{Word: "family", Value: GroupFamily, Help: "the family hash"},
		{Word: "shape", Value: GroupShape, Help: "the shape hash"},
		{Word: "tokens", Value: GroupTokens, Help: "the tokens hash"},
		{Word: "exact", Value: GroupExact, Help: "the exact hash"},
		{Word: "bot", Value: GroupBot, Places: Anywhere, Help: "the bot (the transaction's recipient)"},
		{Word: "sender", Value: GroupSender, Places: Anywhere, Help: "the sender"},
		{Word: "verdict", Value: GroupVerdict, Help: "the verdict"},
		{Word: "tier", Value: GroupTier, Help: "the tier"},
		{Word: "path", Value: GroupPath, Help: "the detection path"},
		{Word: "mode", Value: GroupMode, Help: "traces or receipts"},
		{Word: "block", Value: GroupBlock, Places: Anywhere, Help: "the block"},
	} {
		d.Class = ClassGroupBy
		v.add(d)
	}
	for _, d := range []Decl{
		{Word: "gross", Value: MetricGross, Places: Anywhere, Help: "gross profit (before costs), in a token"},
		{Word: "net", Value: MetricNet, Places: Anywhere, Help: "net profit (after costs), in a token; plain profit is net"},
		{Word: "pools", Value: MetricPools, Places: Anywhere, Help: "the pools the transaction swapped through"},
		{Word: "hops", Value: MetricHops, Help: "the swaps of its cycles"},
		{Word: "cycles", Value: MetricCycles, Help: "its cycles"},
		{Word: "leftovers", Value: MetricLeftovers, Help: "the transfers the reduction could not place"},
		{Word: "block", Value: MetricBlock, Places: Anywhere, Help: "the block (order by block: block, then position)"},
	} {
		d.Class = ClassMetric
		v.add(d)
	}
	for _, d := range []Decl{
		{Word: "=", Value: OpEq, Places: Anywhere, Help: "equal (also ==)"},
		{Word: "!=", Value: OpNe, Places: Anywhere, Help: "not equal"},
		{Word: "<", Value: OpLt, Places: Anywhere, Help: "less than (also under, below, less than, fewer than)"},
		{Word: "<=", Value: OpLe, Places: Anywhere, Help: "at most"},
		{Word: ">", Value: OpGt, Places: Anywhere, Help: "more than (also over, above, more than, greater than)"},
		{Word: ">=", Value: OpGe, Places: Anywhere, Help: "at least"},
	} {
		d.Class = ClassOperator
		v.add(d)
	}
	for _, d := range []Decl{
		{Word: "profit", Places: Anywhere, Help: "net profit > 1 WETH"},
		{Word: "gross", Places: Anywhere, Help: "gross profit > 1 WETH"},
		{Word: "net", Places: Anywhere, Help: "net profit in 0x… > 1000 (base units)"},
		{Word: "pools", Places: Anywhere, Help: "pools >= 3"},
		{Word: "hops", Help: "hops > 4"},
		{Word: "cycles", Help: "cycles = 1"},
		{Word: "leftovers", Help: "leftovers = 0"},
		{Word: "block", Places: Anywhere, Help: "block between A and B, block >= N"},
		{Word: "blocks", Places: Anywhere, Help: "blocks A..B"},
		{Word: "verdict", Value: FieldVerdict, Help: "verdict = arbitrage"},
		{Word: "tier", Value: FieldTier, Help: "tier = attempted"},
		{Word: "path", Value: FieldPath, Help: "path = rotation"},
		{Word: "mode", Value: FieldMode, Help: "mode = receipts"},
		{Word: "reason", Help: "reason leftovers"},
		{Word: "has", Help: "has reason leftovers"},
		{Word: "bot", Places: Anywhere, Help: "bot = ADDR"},
		{Word: "sender", Places: Anywhere, Help: "sender = ADDR"},
		{Word: "touches", Places: Anywhere, Help: "touches ADDR, touches USDC"},
		{Word: "flashloan", Help: "a loan recovered from the leftovers"},
		{Word: "through", Help: "through at least three pools"},
		{Word: "not", Places: Anywhere, Help: "not CONDITION"},
		{Word: "exact", Help: "exact = HASH"},
		{Word: "shape", Help: "shape = HASH"},
		{Word: "tokens", Help: "tokens = HASH"},
		{Word: "family", Help: "family = HASH"},
	} {
		d.Class = ClassCondition
		v.add(d)
	}
	for _, l := range normalform.Levels {
		v.add(Decl{Word: l.String(), Class: ClassLevel, Value: l, Places: InTxs, Help: levelHelp[l]})
	}
	for _, x := range normalform.Verdicts {
		v.add(Decl{Word: x.String(), Class: ClassVerdict, Value: x, Help: "verdict " + x.String()})
	}
	for _, t := range normalform.Tiers {
		v.add(Decl{Word: t.String(), Class: ClassTier, Value: t, Help: "a " + t.Verdict().String() + " graded " + t.String()})
	}
	for _, p := range normalform.Paths {
		v.add(Decl{Word: p.String(), Class: ClassPath, Value: p, Help: "an arbitrage found by the " + p.String() + " path"})
	}
	for _, m := range normalform.Modes {
		v.add(Decl{Word: m.String(), Class: ClassMode, Value: m, Help: "analysed from " + m.String()})
	}
	for _, r := range normalform.Reasons {
		v.add(Decl{Word: string(r), Class: ClassReason, Value: r, Help: "the classification gave reason " + string(r)})
	}
	for _, d := range []Decl{
		{Word: "tree", Value: ViewTree, Help: "the normal form as a tree"},
		{Word: "terms", Value: ViewTerms, Help: "the normal form as the paper's terms"},
		{Word: "cycles", Value: ViewCycles, Help: "its cycles"},
		{Word: "balances", Value: ViewBalances, Help: "its balances"},
		{Word: "steps", Value: ViewSteps, Help: "the rewrite steps"},
		{Word: "transfers", Value: ViewTransfers, Help: "the decoded transfers"},
		{Word: "all", Value: ViewAll, Help: "everything (the default)"},
	} {
		d.Class = ClassView
		v.add(d)
	}
	return v
}

var levelHelp = map[normalform.Level]string{
	normalform.Exact:  "the normal form with its addresses, tokens and amounts",
	normalform.Shape:  "labels, composition, arity and path lengths; addresses and tokens renamed, amounts erased",
	normalform.Tokens: "as shape, with token identities kept",
	normalform.Family: "the skeleton: path lengths, arities and tokens erased",
}
