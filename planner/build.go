package planner

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/holiman/uint256"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
)

// Planner builds plans for one chain configuration. It reports errors
// at the nodes of the statement it builds, through the statement's
// lang.Source.
type Planner struct {
	Cfg *normalform.Config
	// Src, when set, resolves the statement's shortened references
	// (0x3db1…dcfa, prefixes) once, when it is planned; without it a
	// shortened reference is an error that asks for the whole value.
	Src Source
	src *lang.Source // the statement's, during Build
}

// Query is a planned statement.
type Query struct {
	Stmt    lang.Statement
	Plan    Plan
	Explain bool
	Kind    lang.StmtKind
	Level   normalform.Level
}

func (pl *Planner) errAt(n lang.Node, format string, args ...any) error {
	return pl.src.Errorf(n, format, args...)
}

// Build plans a statement the parser checked (lang.Check): it reads the
// typed values the check pass resolved, never a name.
func (pl *Planner) Build(st lang.Statement) (*Query, error) {
	b := *pl // errors bind to this statement's source
	b.src = st.Source()
	if b.src == nil {
		b.src = &lang.Source{}
	}
	if err := b.resolveRefs(st); err != nil {
		return nil, err
	}
	return b.build(st)
}

func (pl *Planner) build(st lang.Statement) (*Query, error) {
	q := &Query{Stmt: st, Kind: lang.KindOf(st)}
	if e, ok := st.(*lang.Explain); ok {
		q.Explain = true
		st = e.Query
	}
	var err error
	switch s := st.(type) {
	case *lang.Find:
		q.Plan, err = pl.find(s.Target, s.Where, s.Order, s.Limit, nil)
	case *lang.Match:
		q.Level = s.At
		ref, err2 := pl.tx(s.Ref)
		if err2 != nil {
			return nil, err2
		}
		var then Plan
		then, err = pl.find(lang.TargetTransactions, s.Where, s.Order, s.Limit, &HashLookup{Level: q.Level, Blocks: layout.AllBlocks})
		q.Plan = &MatchRef{Ref: TxLookup{Tx: ref}, Level: q.Level, Then: then}
	case *lang.Same:
		q.Level = s.At
		a, err1 := pl.tx(s.A)
		b, err2 := pl.tx(s.B)
		if err1 != nil {
			return nil, err1
		}
		if err2 != nil {
			return nil, err2
		}
		q.Plan = &Compare{A: TxLookup{Tx: a}, B: TxLookup{Tx: b}, Level: q.Level}
	case *lang.Anomalies:
		p := &Anomalies{Bot: addrOf(s.Bot.Addr)}
		if s.Since != nil {
			n, err := pl.block(s.Since)
			if err != nil {
				return nil, err
			}
			p.Since = &n
		}
		if s.Baseline != nil {
			from, err1 := pl.block(s.Baseline.From)
			to, err2 := pl.block(s.Baseline.To)
			if err1 != nil || err2 != nil {
				return nil, firstErr(err1, err2)
			}
			p.Baseline = &layout.BlockRange{From: from, To: to}
		}
		if s.Limit != nil {
			p.Limit, err = pl.limit(s.Limit)
		}
		q.Plan = p
	case *lang.Findings:
		q.Plan, err = pl.findings(s.Kind.String(), s.Where, s.Order, s.Limit)
	case *lang.ShowBlock:
		var n uint64
		if n, err = pl.block(s.Block); err == nil {
			q.Plan = &ShowBlock{Block: n}
		}
	case *lang.Count:
		var in Plan
		if s.What.Findings() {
			in, err = pl.findings(s.What.String(), s.Where, nil, nil)
		} else {
			in, err = pl.find(lang.TargetTransactions, s.Where, nil, nil, nil)
		}
		if err == nil {
			in = countByKeys(in, s.Group, s.What)
			q.Plan = &Group{Input: in, By: s.Group, What: s.What.String()}
			if s.Limit != nil {
				var n int
				n, err = pl.limit(s.Limit)
				q.Plan = &Limit{Input: q.Plan, N: n}
			}
		}
	case *lang.Show:
		h, err2 := pl.tx(s.Tx)
		if err2 != nil {
			return nil, err2
		}
		views := []string{}
		for _, v := range s.As {
			views = append(views, v.String())
		}
		q.Plan = &ShowTx{Input: TxLookup{Tx: h}, Views: views}
	default:
		return nil, fmt.Errorf("this statement cannot be planned")
	}
	if err != nil {
		return nil, err
	}
	return q, nil
}

// countByKeys is the access path of a count of transactions by shape,
// tokens or family over a full scan or a block range (no other filter):
// the hash keys, counted without reading records (HashCount). Any other
// count keeps its input.
func countByKeys(in Plan, by lang.GroupBy, what lang.Target) Plan {
	if what.String() != "transactions" {
		return in
	}
	lvl, ok := by.Level()
	if !ok || lvl == normalform.Exact { // exact keys hold a tag, not the hash
		return in
	}
	switch n := in.(type) {
	case *FullScan:
		return &HashCount{Level: lvl, Blocks: layout.AllBlocks}
	case *BlockScan:
		return &HashCount{Level: lvl, Blocks: n.Blocks}
	}
	return in
}

// word cuts a word of the query for a message when it is long.
func word(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

func addrOf(s string) normalform.Address {
	var a normalform.Address
	b, _ := hexBytes(s)
	copy(a[:], b)
	return a
}

func hexBytes(s string) ([]byte, error) {
	s = strings.TrimPrefix(strings.ToLower(s), "0x")
	out := make([]byte, len(s)/2)
	for i := range out {
		var v byte
		for _, c := range s[2*i : 2*i+2] {
			v <<= 4
			switch {
			case c >= '0' && c <= '9':
				v |= byte(c - '0')
			case c >= 'a' && c <= 'f':
				v |= byte(c - 'a' + 10)
			default:
				return nil, fmt.Errorf("not hex")
			}
		}
		out[i] = v
	}
	return out, nil
}

func (pl *Planner) tx(t *lang.TxRef) (normalform.Hash, error) {
	h, err := normalform.ParseHash(t.Hash)
	if err != nil {
		return h, pl.errAt(t, "%v", err)
	}
	return h, nil
}

func (pl *Planner) block(n *lang.NumLit) (uint64, error) {
	var v uint256.Int
	if err := v.SetFromDecimal(n.Text); err != nil || !v.IsUint64() {
		return 0, pl.errAt(n, "block %s is out of range", word(n.Text))
	}
	return v.Uint64(), nil
}

func (pl *Planner) limit(l *lang.Limit) (int, error) {
	var v uint256.Int
	if err := v.SetFromDecimal(l.N.Text); err != nil || !v.IsUint64() || v.Uint64() > 1<<31 {
		return 0, pl.errAt(l.N, "limit %s is too large", word(l.N.Text))
	}
	return int(v.Uint64()), nil
}

// token resolves a token reference: an address, or a symbol the chain
// configuration knows.
func (pl *Planner) token(t *lang.TokenRef) (normalform.Token, error) {
	if t.Address != "" {
		tok := normalform.FungibleToken(addrOf(t.Address))
		if tok.Addr == normalform.NativeAddress {
			tok = normalform.NativeToken
		}
		return tok, nil
	}
	tok, ok := pl.Cfg.TokenBySymbol(t.Symbol)
	if !ok {
		return tok, pl.errAt(t, "%s", pl.Cfg.SymbolError(t.Symbol, fmt.Sprintf("%q", word(t.Symbol))))
	}
	return tok, nil
}

// amount converts a literal to base units: with the token's decimals when
// it is written with a symbol ("1.5 WETH"), as base units when the token
// is named by address ("in 0x… > 1000").
func (pl *Planner) amount(n *lang.NumLit, tok normalform.Token, human bool) (normalform.Signed, error) {
	var out normalform.Signed
	dec := uint8(0)
	if human {
		ti, ok := pl.Cfg.TokenInfo(tok)
		if !ok {
			return out, pl.errAt(n, "the decimals of %s are unknown: give the amount in base units with \"in 0x…\"", tok.Key())
		}
		dec = ti.Decimals
	}
	intPart, frac, _ := strings.Cut(n.Text, ".")
	if !human && frac != "" {
		return out, pl.errAt(n, "%s: a token named by address takes its amount in base units, a whole number (name it by symbol to use decimals)", word(n.Text))
	}
	if len(frac) > int(dec) {
		return out, pl.errAt(n, "%s has more decimals than the token's %d", word(n.Text), dec)
	}
	digits := intPart + frac + strings.Repeat("0", int(dec)-len(frac))
	if len(strings.TrimLeft(digits, "0")) > 78 { // 2^256 has 78 digits: do not convert a megabyte of them
		return out, pl.errAt(n, "%s is out of range", word(n.Text))
	}
	v, ok := new(big.Int).SetString(digits, 10)
	if !ok || v.BitLen() > 256 {
		return out, pl.errAt(n, "%s is out of range", word(n.Text))
	}
	out.Abs.SetFromBig(v)
	return out, nil
}

// conjuncts flattens a filter's top-level ands.
func conjuncts(e lang.Expr) []lang.Expr {
	if e == nil {
		return nil
	}
	return flatten(e, splitAnd)
}

// find plans a filtered scan: it chooses the access path, pushes the block
// range down, and keeps the rest as a residual filter. When access is
// given (match), it is used, with the block range pushed into it.
func (pl *Planner) find(target lang.Target, where lang.Expr, order *lang.Order, limit *lang.Limit, access Access) (Plan, error) {
	preds, err := pl.preds(conjuncts(where))
	if err != nil {
		return nil, err
	}
	if v, ok := target.Verdict(); ok {
		preds = append(preds, verdictPred(v, nil, false))
	}
	// The block range: the intersection of the exact block conjuncts.
	blocks := layout.AllBlocks
	for _, p := range preds {
		if p.blocks != nil {
			if p.blocks.From > blocks.From {
				blocks.From = p.blocks.From
			}
			if p.blocks.To < blocks.To {
				blocks.To = p.blocks.To
			}
		}
	}
	served := map[*Pred]bool{}
	if access == nil {
		access = pl.choose(preds, blocks, served)
	} else if h, ok := access.(*HashLookup); ok {
		h2 := *h
		h2.Blocks = blocks
		access = &h2
		for _, p := range preds {
			if p.blocks != nil {
				served[p] = true
			}
		}
	}
	var plan Plan = access
	var residual []*Pred
	for _, p := range preds {
		if !served[p] {
			residual = append(residual, p)
		}
	}
	if len(residual) > 0 {
		plan = &Filter{Input: plan, Pred: andPreds(residual)}
	}
	if order != nil {
		k, err := pl.sortKey(order.Metric)
		if err != nil {
			return nil, err
		}
		plan = &Sort{Input: plan, Key: k, Desc: order.Desc}
	}
	return pl.withLimit(plan, limit)
}

// choose picks the most selective access path a conjunct allows and marks
// the conjuncts it decides exactly.
func (pl *Planner) choose(preds []*Pred, blocks layout.BlockRange, served map[*Pred]bool) Access {
	markBlocks := func() {
		for _, p := range preds {
			if p.blocks != nil {
				served[p] = true
			}
		}
	}
	for rank := 0; rank < 6; rank++ {
		for _, p := range preds {
			if p.access == nil || p.rank != rank {
				continue
			}
			switch a := p.access.(type) {
			case *HashLookup:
				a2 := *a
				a2.Blocks = blocks
				served[p] = true
				markBlocks()
				return &a2
			case *BotScan:
				a2 := *a
				a2.Blocks = blocks
				served[p] = true
				markBlocks()
				return &a2
			case *AddressScan:
				a2 := *a
				a2.Blocks = blocks
				served[p] = true
				markBlocks()
				return &a2
			case *TokenScan:
				a2 := *a
				a2.Blocks = blocks
				served[p] = true
				markBlocks()
				return &a2
			case *KeyScan:
				a2 := *a
				a2.Lookup.Blocks = blocks
				served[p] = true
				markBlocks()
				return &a2
			case *ProfitRange:
				// The range is inclusive; the predicate stays as a filter
				// (strict bounds, and the block range).
				return a
			case *TierScan:
				a2 := *a
				a2.Blocks = blocks
				served[p] = true
				// a tier conjunct refines a verdict scan, and a tier scan
				// decides its verdict
				for _, q := range preds {
					t, ok := q.access.(*TierScan)
					if !ok || q == p || t.Verdict != a2.Verdict {
						continue
					}
					if a2.Tier == nil && t.Tier != nil {
						a2.Tier = t.Tier
						served[q] = true
					} else if t.Tier == nil || (a2.Tier != nil && *t.Tier == *a2.Tier) {
						served[q] = true
					}
				}
				markBlocks()
				return &a2
			}
		}
	}
	if blocks != layout.AllBlocks {
		markBlocks()
		return &BlockScan{Blocks: blocks}
	}
	return &FullScan{}
}
