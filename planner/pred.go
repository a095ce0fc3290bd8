package planner

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
)

// Pred is a compiled filter: its text, how to evaluate it on a record,
// and what an index could do for it.
type Pred struct {
	// The text, rendered by Text only when asked for (explain): a node's
	// extent in the query's source, shared with the other predicates and
	// never copied (a 20,000-term "or" would otherwise copy its subtrees'
	// text at every level), or a fixed text, or the parts of a
	// conjunction the planner made.
	node  lang.Node
	src   *lang.Source
	lit   string
	parts []*Pred

	Eval func(r *layout.Record) (bool, error)
	// need says which fields of a record Eval reads: a header scan
	// (layout.Index.Filter) evaluates the predicate before decoding
	// records whole when it needs no more than the header.
	need needs
	// access is the index access that finds every record the predicate
	// can hold on, rank its selectivity (0 is the most selective), and
	// blocks the block range it pins exactly.
	access Access
	rank   int
	blocks *layout.BlockRange
}

// needs are the fields of a record a predicate or a grouping reads: the
// front's (layout.DecodeFrontInto: position, verdict, tier, path, mode,
// counts), the header's (layout.Record.Partial: the front's, the hashes
// and reasons), the header's with the principals' addresses, or all of
// them (the zero value). Each but needFull includes the ones before it.
type needs uint8

const (
	needFull needs = iota
	needFront
	needHeader
	needAddrs
)

// both is what two predicates together need.
func both(a, b needs) needs {
	if a == needFull || b == needFull {
		return needFull
	}
	return max(a, b)
}

// Text is the predicate as the query wrote it (whitespace collapsed).
func (p *Pred) Text() string {
	switch {
	case p.parts != nil:
		texts := make([]string, len(p.parts))
		for i, q := range p.parts {
			texts[i] = q.Text()
		}
		return strings.Join(texts, " and ")
	case p.node != nil:
		if t := p.src.TextOf(p.node); t != "" {
			return t
		}
		return lang.Dump(p.node)
	}
	return p.lit
}

// andPreds is the conjunction of ps, in order; its text is theirs joined
// by "and".
func andPreds(ps []*Pred) *Pred {
	if len(ps) == 1 {
		return ps[0]
	}
	need := needFront
	for _, p := range ps {
		need = both(need, p.need)
	}
	evals := make([]func(*layout.Record) (bool, error), len(ps))
	for i, p := range ps {
		evals[i] = p.Eval
	}
	return &Pred{parts: ps, need: need, Eval: allHold(evals)}
}

// orPreds is the disjunction of ps, tried in order.
func orPreds(ps []*Pred) *Pred {
	need := needFront
	for _, p := range ps {
		need = both(need, p.need)
	}
	return &Pred{need: need, Eval: func(r *layout.Record) (bool, error) {
		for _, p := range ps {
			if ok, err := p.Eval(r); err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	}}
}

// flatten lists the operands of a chain of one operator (the parser nests
// "a or b or c" as ((a or b) or c)), left to right, without recursion:
// a chain of 20,000 terms is as deep.
func flatten(e lang.Expr, split func(lang.Expr) (l, r lang.Expr, ok bool)) []lang.Expr {
	var out []lang.Expr
	stack := []lang.Expr{e}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if l, r, ok := split(x); ok {
			stack = append(stack, r, l)
			continue
		}
		out = append(out, x)
	}
	return out
}

func splitAnd(e lang.Expr) (lang.Expr, lang.Expr, bool) {
	if a, ok := e.(*lang.And); ok {
		return a.L, a.R, true
	}
	return nil, nil, false
}

func splitOr(e lang.Expr) (lang.Expr, lang.Expr, bool) {
	if o, ok := e.(*lang.Or); ok {
		return o.L, o.R, true
	}
	return nil, nil, false
}

// preds compiles each expression, in order, and stops at the first error.
func (pl *Planner) preds(es []lang.Expr) ([]*Pred, error) {
	ps := make([]*Pred, len(es))
	for i, e := range es {
		p, err := pl.pred(e)
		if err != nil {
			return nil, err
		}
		ps[i] = p
	}
	return ps, nil
}

func verdictPred(v normalform.Verdict, t *normalform.Tier, neg bool) *Pred {
	text := "verdict = " + v.String()
	if t != nil {
		text = "tier = " + t.String()
	}
	if neg {
		text = strings.Replace(text, "=", "!=", 1)
	}
	p := &Pred{lit: text, need: needFront, Eval: func(r *layout.Record) (bool, error) {
		ok := r.Verdict == v && (t == nil || r.Tier == *t)
		return ok != neg, nil
	}}
	if !neg {
		p.access, p.rank = &TierScan{Verdict: v, Tier: t}, 4
	}
	return p
}

// amountOf returns a record's balance in a token: gross per token as
// analysed, net with the wrapped native folded into the native asset.
func amountOf(r *layout.Record, side layout.Side, tok normalform.Token) normalform.Signed {
	as := r.Gross
	if side == layout.Net {
		as = r.Net
	}
	for _, a := range as {
		if a.Token == tok {
			return a.Amount
		}
	}
	return normalform.Signed{}
}

// pred compiles one filter expression. A chain of "and" or of "or"
// becomes one predicate over its operands, so that neither compiling nor
// evaluating it recurses once per term.
func (pl *Planner) pred(e lang.Expr) (p *Pred, err error) {
	defer func() {
		if p != nil {
			p.node, p.src, p.lit, p.parts = e, pl.src, "", nil
		}
	}()
	switch x := e.(type) {
	case *lang.And:
		ps, err := pl.preds(flatten(x, splitAnd))
		if err != nil {
			return nil, err
		}
		return andPreds(ps), nil // two operands at least: a new Pred
	case *lang.Or:
		ps, err := pl.preds(flatten(x, splitOr))
		if err != nil {
			return nil, err
		}
		return orPreds(ps), nil
	case *lang.Not:
		in, err := pl.pred(x.X)
		if err != nil {
			return nil, err
		}
		return &Pred{need: in.need, Eval: func(rec *layout.Record) (bool, error) {
			ok, err := in.Eval(rec)
			return !ok, err
		}}, nil
	case *lang.Compare:
		return pl.compare(x)
	case *lang.Is:
		neg := x.Neg
		switch x.Field {
		case lang.FieldMode:
			want := x.Mode
			return &Pred{need: needFront, Eval: func(rec *layout.Record) (bool, error) {
				return (rec.Mode == want) != neg, nil
			}}, nil
		case lang.FieldPath:
			want := x.Path
			return &Pred{need: needFront, Eval: func(rec *layout.Record) (bool, error) {
				return (rec.Path == want) != neg, nil
			}}, nil
		case lang.FieldVerdict:
			return verdictPred(x.Verdict, nil, neg), nil
		}
		t := x.Tier
		return verdictPred(t.Verdict(), &t, neg), nil
	case *lang.HasReason:
		r := x.Want
		return &Pred{need: needHeader, Eval: func(rec *layout.Record) (bool, error) {
			return slices.Contains(rec.Reasons, r), nil
		}}, nil
	case *lang.InBlocks:
		return pl.blocksPred(x)
	case *lang.AddrIs:
		a := addrOf(x.Addr.Addr)
		p := &Pred{need: needAddrs}
		if x.Field == "bot" {
			p.Eval = func(r *layout.Record) (bool, error) { return (r.Recipient == a) != x.Neg, nil }
			if !x.Neg {
				p.access, p.rank = &BotScan{Bot: a}, 1
			}
		} else {
			p.Eval = func(r *layout.Record) (bool, error) { return (r.HasFrom && r.From == a) != x.Neg, nil }
			if !x.Neg {
				p.access, p.rank = &AddressScan{Addr: a}, 2 // the sender is touched; the filter stays
			}
		}
		return p, nil
	case *lang.Touches:
		if x.Target.Address != "" {
			a := addrOf(x.Target.Address)
			return &Pred{access: &AddressScan{Addr: a, AsToken: true}, rank: 2, Eval: func(r *layout.Record) (bool, error) {
				return slices.Contains(r.Addresses, a) || slices.ContainsFunc(r.Tokens, func(y normalform.Token) bool { return y.Addr == a }), nil
			}}, nil
		}
		tok, err := pl.token(x.Target)
		if err != nil {
			return nil, err
		}
		return &Pred{access: &TokenScan{Token: tok, Name: x.Target.Symbol}, rank: 2, Eval: func(r *layout.Record) (bool, error) {
			return slices.Contains(r.Tokens, tok), nil
		}}, nil
	case *lang.FlashLoan:
		return &Pred{Eval: func(r *layout.Record) (bool, error) {
			a, err := r.Analysis()
			if err != nil {
				return false, fmt.Errorf("tx %s: %w", r.Hash.Hex(), err)
			}
			for _, c := range a.Cycles {
				if c.Label == normalform.LeftoverCycle {
					return true, nil
				}
			}
			return false, nil
		}}, nil
	case *lang.HashIs:
		lvl := x.At
		h, err := normalform.ParseHash(x.Hash.Hash)
		if err != nil {
			return nil, pl.errAt(x.Hash, "%v", err)
		}
		return &Pred{need: needHeader, access: &HashLookup{Level: lvl, Hash: h}, rank: 0, Eval: func(r *layout.Record) (bool, error) {
			return r.Hashes.Of(lvl) == h, nil
		}}, nil
	}
	return nil, pl.errAt(e, "unsupported filter %s", lang.Dump(e))
}

func (pl *Planner) blocksPred(x *lang.InBlocks) (*Pred, error) {
	r := x.Range
	from, err := pl.block(r.From)
	if err != nil {
		return nil, err
	}
	rng := layout.BlockRange{From: from, To: from}
	exact := true
	switch r.Op {
	case 0:
		to, err := pl.block(r.To)
		if err != nil {
			return nil, err
		}
		rng.To = to
	case lang.OpEq:
	case lang.OpGe:
		rng.To = math.MaxUint64 - 1
	case lang.OpGt:
		rng.From, rng.To = from+1, math.MaxUint64-1
	case lang.OpLe:
		rng.From = 0
	case lang.OpLt:
		if from == 0 {
			rng = layout.BlockRange{From: 1, To: 0}
		} else {
			rng = layout.BlockRange{From: 0, To: from - 1}
		}
	case lang.OpNe:
		exact = false
	}
	p := &Pred{need: needFront}
	if !exact {
		p.Eval = func(rec *layout.Record) (bool, error) {
			return rec.Loc.Block != layout.UnknownBlock && rec.Loc.Block != from, nil
		}
		return p, nil
	}
	p.Eval = func(rec *layout.Record) (bool, error) {
		b := rec.Loc.Block
		return b != layout.UnknownBlock && rng.From <= b && b <= rng.To, nil
	}
	p.blocks, p.rank = &rng, 5
	return p, nil
}

// compare compiles METRIC OP VALUE.
func (pl *Planner) compare(x *lang.Compare) (*Pred, error) {
	m := x.Metric
	if !m.IsProfit() {
		var v uint64
		if _, err := fmt.Sscan(x.Value.Number.Text, &v); err != nil {
			return nil, pl.errAt(x.Value, "%s is out of range", word(x.Value.Number.Text))
		}
		get := countOf[m.Kind]
		return &Pred{need: needFront, Eval: func(r *layout.Record) (bool, error) {
			n := uint64(get(r))
			return x.Op.Holds(cmp.Compare(n, v)), nil
		}}, nil
	}
	ref := m.Token
	if ref == nil {
		ref = x.Value.Token
	}
	tok, err := pl.token(ref)
	if err != nil {
		return nil, err
	}
	human := ref.Address == ""
	amt, err := pl.amount(x.Value.Number, tok, human)
	if err != nil {
		return nil, err
	}
	side := layout.Gross
	if m.Kind == lang.MetricNet {
		side = layout.Net
		if tok.Kind == normalform.Fungible && pl.Cfg.IsWrappedNative(tok.Addr) {
			tok = normalform.NativeToken // net balances fold the wrapped native
		}
	}
	p := &Pred{Eval: func(r *layout.Record) (bool, error) {
		if side == layout.Net && !r.CostsKnown {
			return false, nil // net unknown: no comparison holds
		}
		return x.Op.Holds(amountOf(r, side, tok).Cmp(amt)), nil
	}}
	// An index range only when it excludes zero: transactions with no
	// component in the token are not in the profit keyspace.
	if (x.Op == lang.OpGt && amt.Sign() >= 0) || ((x.Op == lang.OpGe || x.Op == lang.OpEq) && amt.Sign() > 0) {
		lo := amt
		var hi *normalform.Signed
		if x.Op == lang.OpEq {
			hi = &amt
		}
		name := ref.String()
		if side == layout.Net && tok.Kind == normalform.Native {
			name = pl.Cfg.NativeSymbol + " (native and wrapped)"
		}
		p.access, p.rank = &ProfitRange{Side: side, Token: tok, Name: name, Lo: &lo, Hi: hi}, 3
	}
	return p, nil
}

// countOf reads a count metric from a record's header.
var countOf = map[lang.MetricKind]func(*layout.Record) int{
	lang.MetricPools:     func(r *layout.Record) int { return r.Counts.Pools },
	lang.MetricHops:      func(r *layout.Record) int { return r.Counts.Hops },
	lang.MetricCycles:    func(r *layout.Record) int { return r.Counts.Cycles },
	lang.MetricLeftovers: func(r *layout.Record) int { return r.Counts.Leftovers },
}

// SortKey orders records.
type SortKey struct {
	Text string
	Less func(a, b *layout.Record) bool
}

func (pl *Planner) sortKey(m *lang.Metric) (*SortKey, error) {
	switch {
	case m.IsProfit():
		side := layout.Gross
		if m.Kind == lang.MetricNet {
			side = layout.Net
		}
		tok := normalform.NativeToken
		if m.Token != nil {
			var err error
			if tok, err = pl.token(m.Token); err != nil {
				return nil, err
			}
		}
		if side == layout.Net && tok.Kind == normalform.Fungible && pl.Cfg.IsWrappedNative(tok.Addr) {
			tok = normalform.NativeToken
		}
		return &SortKey{Text: m.String(), Less: func(a, b *layout.Record) bool {
			return amountOf(a, side, tok).Cmp(amountOf(b, side, tok)) < 0
		}}, nil
	case m.Kind == lang.MetricBlock:
		return &SortKey{Text: "block", Less: func(a, b *layout.Record) bool {
			if a.Loc.Block != b.Loc.Block {
				return a.Loc.Block < b.Loc.Block
			}
			return a.Loc.Index < b.Loc.Index
		}}, nil
	}
	get := countOf[m.Kind]
	return &SortKey{Text: m.Kind.String(), Less: func(a, b *layout.Record) bool { return get(a) < get(b) }}, nil
}
