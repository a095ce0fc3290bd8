package planner

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strings"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/block"
)

// Block findings in the language (issue 18): "find sandwiches", "find
// backruns", "count sandwiches by bot", "show block N". They read the
// findings the index stores per block (Source.BlockReports), not the
// transactions' records.

// Finding is one block finding: a sandwich or a back-run of a block.
type Finding struct {
	Block    uint64
	Sandwich *block.Sandwich
	Backrun  *block.Backrun
	// rec reads the back-run's transaction record (its net balance).
	rec func() (*layout.Record, error)
}

// --- plan nodes -------------------------------------------------------------

// FindingsScan reads the stored block findings of a block range, in block
// order, and yields the sandwiches or the back-runs of each.
type FindingsScan struct {
	Kind   string // sandwiches, backruns
	Blocks layout.BlockRange
}

func (FindingsScan) access() {}
func (p FindingsScan) Describe() string {
	return fmt.Sprintf("index range: block findings%s (the %s of each block)", blocksText(p.Blocks), p.Kind)
}
func (FindingsScan) Inputs() []Plan { return nil }

// FindingsFilter keeps the findings for which its predicate holds.
type FindingsFilter struct {
	Input Plan
	Pred  *FindingPred
}

func (p *FindingsFilter) Describe() string { return "filter: " + p.Pred.Text() }
func (p *FindingsFilter) Inputs() []Plan   { return []Plan{p.Input} }

// FindingsSort orders findings by a key, read once per finding.
type FindingsSort struct {
	Input Plan
	Text  string
	Desc  bool
	key   func(*Finding) (findingKey, error)
	less  func(a, b findingKey) bool
}

// findingKey is what a findings sort orders by: an amount, a count, or
// the block and the position in it.
type findingKey struct {
	amount normalform.Signed
	n      int
	block  uint64
}

func (p *FindingsSort) Describe() string {
	d := "asc"
	if p.Desc {
		d = "desc"
	}
	return "sort by " + p.Text + " " + d
}
func (p *FindingsSort) Inputs() []Plan { return []Plan{p.Input} }

// ShowBlock lists a block's transactions in order with their verdicts,
// tiers, paths and roles.
type ShowBlock struct{ Block uint64 }

func (p *ShowBlock) Describe() string {
	return fmt.Sprintf("show block %d: its transactions in order, each with verdict, tier, path and roles", p.Block)
}
func (p *ShowBlock) Inputs() []Plan {
	b := layout.Blocks(p.Block, p.Block)
	return []Plan{FindingsScan{Kind: "transactions", Blocks: b}, &BlockScan{Blocks: b}}
}

// --- predicates -------------------------------------------------------------

// FindingPred is a compiled filter over findings.
type FindingPred struct {
	node   lang.Node
	src    *lang.Source
	parts  []*FindingPred
	Eval   func(*Finding) (bool, error)
	blocks *layout.BlockRange // the block range it pins exactly, pushed into the scan
}

// Text is the predicate as the query wrote it.
func (p *FindingPred) Text() string {
	if p.parts != nil {
		texts := make([]string, len(p.parts))
		for i, q := range p.parts {
			texts[i] = q.Text()
		}
		return strings.Join(texts, " and ")
	}
	return (&Pred{node: p.node, src: p.src}).Text()
}

// findings plans a find (or the input of a count) of block findings: a
// scan of the block keys over the block range the conjuncts pin, the
// rest a residual filter, then order and limit.
func (pl *Planner) findings(kind string, where lang.Expr, order *lang.Order, limit *lang.Limit) (Plan, error) {
	var preds []*FindingPred
	for _, e := range conjuncts(where) {
		p, err := pl.findingPred(e)
		if err != nil {
			return nil, err
		}
		preds = append(preds, p)
	}
	blocks := layout.AllBlocks
	var residual []*FindingPred
	for _, p := range preds {
		if p.blocks == nil {
			residual = append(residual, p)
			continue
		}
		blocks.From = max(blocks.From, p.blocks.From)
		blocks.To = min(blocks.To, p.blocks.To)
	}
	var plan Plan = FindingsScan{Kind: kind, Blocks: blocks}
	if len(residual) == 1 {
		plan = &FindingsFilter{Input: plan, Pred: residual[0]}
	} else if len(residual) > 1 {
		plan = &FindingsFilter{Input: plan, Pred: &FindingPred{parts: residual, Eval: allOf(residual)}}
	}
	if order != nil {
		m := order.Metric
		s := &FindingsSort{Input: plan, Text: m.String(), Desc: order.Desc}
		switch {
		case m.IsProfit():
			tok := normalform.NativeToken
			if m.Token != nil {
				var err error
				if tok, err = pl.token(m.Token); err != nil {
					return nil, err
				}
			}
			net := m.Kind == lang.MetricNet
			s.key = func(f *Finding) (findingKey, error) {
				v, _, err := pl.findingAmount(f, net, tok)
				return findingKey{amount: v}, err
			}
			s.less = func(a, b findingKey) bool { return a.amount.Cmp(b.amount) < 0 }
		case m.Kind == lang.MetricPools:
			s.key = func(f *Finding) (findingKey, error) { return findingKey{n: findingPools(f)}, nil }
			s.less = func(a, b findingKey) bool { return a.n < b.n }
		default: // block, then the position in it
			s.key = func(f *Finding) (findingKey, error) { return findingKey{block: f.Block, n: findingIndex(f)}, nil }
			s.less = func(a, b findingKey) bool {
				if a.block != b.block {
					return a.block < b.block
				}
				return a.n < b.n
			}
		}
		plan = s
	}
	return pl.withLimit(plan, limit)
}

func allOf(ps []*FindingPred) func(*Finding) (bool, error) {
	evals := make([]func(*Finding) (bool, error), len(ps))
	for i, p := range ps {
		evals[i] = p.Eval
	}
	return allHold(evals)
}

// findingPred compiles one filter expression over findings (the parser
// has kept out the conditions that do not apply to them).
func (pl *Planner) findingPred(e lang.Expr) (p *FindingPred, err error) {
	defer func() {
		if p != nil && p.parts == nil {
			p.node, p.src = e, pl.src
		}
	}()
	compile := func(es []lang.Expr) ([]*FindingPred, error) {
		out := make([]*FindingPred, len(es))
		for i, x := range es {
			q, err := pl.findingPred(x)
			if err != nil {
				return nil, err
			}
			q.blocks = nil // pinned only at the top level
			out[i] = q
		}
		return out, nil
	}
	switch x := e.(type) {
	case *lang.And:
		ps, err := compile(flatten(x, splitAnd))
		if err != nil {
			return nil, err
		}
		return &FindingPred{Eval: allOf(ps)}, nil
	case *lang.Or:
		ps, err := compile(flatten(x, splitOr))
		if err != nil {
			return nil, err
		}
		return &FindingPred{Eval: func(f *Finding) (bool, error) {
			for _, p := range ps {
				if ok, err := p.Eval(f); err != nil || ok {
					return ok, err
				}
			}
			return false, nil
		}}, nil
	case *lang.Not:
		in, err := pl.findingPred(x.X)
		if err != nil {
			return nil, err
		}
		return &FindingPred{Eval: func(f *Finding) (bool, error) {
			ok, err := in.Eval(f)
			return !ok, err
		}}, nil
	case *lang.InBlocks:
		bp, err := pl.blocksPred(x)
		if err != nil {
			return nil, err
		}
		if bp.blocks == nil { // block != N
			from, _ := pl.block(x.Range.From)
			return &FindingPred{Eval: func(f *Finding) (bool, error) { return f.Block != from, nil }}, nil
		}
		rng := *bp.blocks
		return &FindingPred{blocks: &rng, Eval: func(f *Finding) (bool, error) {
			return rng.From <= f.Block && f.Block <= rng.To, nil
		}}, nil
	case *lang.AddrIs:
		a := normalform.AddrKey(addrOf(x.Addr.Addr))
		bot := x.Field == "bot"
		return &FindingPred{Eval: func(f *Finding) (bool, error) {
			s, b := findingWho(f)
			v := s
			if bot {
				v = b
			}
			return (v == a) != x.Neg, nil
		}}, nil
	case *lang.Touches:
		if x.Target.Address != "" {
			a := normalform.AddrKey(addrOf(x.Target.Address))
			return &FindingPred{Eval: func(f *Finding) (bool, error) {
				s, b := findingWho(f)
				if s == a || b == a {
					return true, nil
				}
				for _, w := range findingSwaps(f) {
					if w.Pool == a || w.In == a || w.Out == a {
						return true, nil
					}
				}
				return false, nil
			}}, nil
		}
		tok, err := pl.token(x.Target)
		if err != nil {
			return nil, err
		}
		return &FindingPred{Eval: func(f *Finding) (bool, error) {
			for _, w := range findingSwaps(f) {
				if pl.Cfg.TokenEq(tokenOfKey(w.In), tok) || pl.Cfg.TokenEq(tokenOfKey(w.Out), tok) {
					return true, nil
				}
			}
			return false, nil
		}}, nil
	case *lang.Compare:
		if !x.Metric.IsProfit() { // pools
			var v uint64
			if _, err := fmt.Sscan(x.Value.Number.Text, &v); err != nil {
				return nil, pl.errAt(x.Value, "%s is out of range", word(x.Value.Number.Text))
			}
			return &FindingPred{Eval: func(f *Finding) (bool, error) {
				n := uint64(findingPools(f))
				return x.Op.Holds(cmp.Compare(n, v)), nil
			}}, nil
		}
		ref := x.Metric.Token
		if ref == nil {
			ref = x.Value.Token
		}
		tok, err := pl.token(ref)
		if err != nil {
			return nil, err
		}
		amt, err := pl.amount(x.Value.Number, tok, ref.Address == "")
		if err != nil {
			return nil, err
		}
		net := x.Metric.Kind == lang.MetricNet
		return &FindingPred{Eval: func(f *Finding) (bool, error) {
			v, known, err := pl.findingAmount(f, net, tok)
			if err != nil || !known {
				return false, err // net unknown: no comparison holds
			}
			return x.Op.Holds(v.Cmp(amt)), nil
		}}, nil
	}
	return nil, pl.errAt(e, "%s does not apply to block findings", lang.Dump(e))
}

// findingAmount is a finding's balance in a token (tokens equal under
// =_τ: ETH and WETH are one). Gross: a sandwich's gain in τ, or what it
// kept of another token; a back-run's gain in its detection's unit.
// Net: a sandwich's gain less both legs' costs (in the native asset; the
// other tokens it kept as they are), a back-run's transaction's net
// balance. known is false when the costs are not.
func (pl *Planner) findingAmount(f *Finding, net bool, tok normalform.Token) (normalform.Signed, bool, error) {
	switch {
	case f.Sandwich != nil:
		s := f.Sandwich
		tau := tokenOfKey(s.Token)
		if net && s.Costs == "" {
			return normalform.Signed{}, false, nil
		}
		if pl.Cfg.TokenEq(tau, tok) {
			if net {
				if s.Net == "" { // τ is not the native asset: its net is its gain, costs are in ETH
					return signedOf(s.Gain), true, nil
				}
				return signedOf(s.Net), true, nil
			}
			return signedOf(s.Gain), true, nil
		}
		if net && pl.Cfg.TokenEq(tok, normalform.NativeToken) {
			// costs in the native asset, τ another token
			v := new(big.Int).Neg(bigOf(s.Costs))
			for k, x := range s.Left {
				if pl.Cfg.TokenEq(tokenOfKey(k), tok) {
					v.Add(v, bigOf(x))
				}
			}
			return signedOfBig(v), true, nil
		}
		v := new(big.Int)
		for k, x := range s.Left {
			if pl.Cfg.TokenEq(tokenOfKey(k), tok) {
				v.Add(v, bigOf(x))
			}
		}
		return signedOfBig(v), true, nil
	case f.Backrun != nil:
		if !net {
			if pl.Cfg.TokenEq(tokenOfKey(f.Backrun.Token), tok) {
				return signedOf(f.Backrun.Gain), true, nil
			}
			return normalform.Signed{}, true, nil
		}
		if f.rec == nil {
			return normalform.Signed{}, false, nil
		}
		r, err := f.rec()
		if err != nil {
			return normalform.Signed{}, false, err
		}
		if !r.CostsKnown {
			return normalform.Signed{}, false, nil
		}
		return amountOf(r, layout.Net, pl.Cfg.Unit(tok)), true, nil
	}
	return normalform.Signed{}, false, nil
}

// findingWho is a finding's attacker: sender and bot (lowercase hex).
func findingWho(f *Finding) (sender, bot string) {
	if f.Sandwich != nil {
		return f.Sandwich.Sender, f.Sandwich.Bot
	}
	return f.Backrun.Sender, f.Backrun.Bot
}

// findingSwaps are a finding's swaps: a sandwich's legs and victims, a
// back-run's swaps and those it corrects.
func findingSwaps(f *Finding) []block.Swap {
	if s := f.Sandwich; s != nil {
		return append(append(append([]block.Swap{}, s.FrontSwaps...), s.BackSwaps...), s.Victims...)
	}
	return append(append([]block.Swap{}, f.Backrun.Swaps...), f.Backrun.Corrects...)
}

// findingPools is the number of pools a finding trades on.
func findingPools(f *Finding) int {
	if f.Sandwich != nil {
		return len(f.Sandwich.Pools)
	}
	seen := map[string]bool{}
	for _, s := range f.Backrun.Swaps {
		seen[s.Pool] = true
	}
	return len(seen)
}

// findingIndex is the position of a finding's first transaction in its
// block.
func findingIndex(f *Finding) int {
	if f.Sandwich != nil {
		return f.Sandwich.Front.Index
	}
	return f.Backrun.Index
}

func bigOf(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return new(big.Int)
	}
	return v
}

func signedOf(s string) normalform.Signed { return signedOfBig(bigOf(s)) }

func signedOfBig(v *big.Int) normalform.Signed {
	var out normalform.Signed
	out.Neg = v.Sign() < 0
	if out.Abs.SetFromBig(new(big.Int).Abs(v)) { // overflow: not from a stored finding
		out.Abs.SetAllOne()
	}
	return out
}

// tokenOfKey reads a token key of block findings (0x and 40 hex digits;
// the native asset's is its pseudo-address).
func tokenOfKey(k string) normalform.Token {
	a := addrOf(k)
	if a == normalform.NativeAddress {
		return normalform.NativeToken
	}
	return normalform.FungibleToken(a)
}

// --- execution --------------------------------------------------------------

// isFindings reports a plan over block findings.
func isFindings(p Plan) bool {
	switch n := p.(type) {
	case FindingsScan:
		return true
	case *FindingsFilter:
		return isFindings(n.Input)
	case *FindingsSort:
		return isFindings(n.Input)
	case *Limit:
		return isFindings(n.Input)
	case *Group:
		return isFindings(n.Input)
	}
	return false
}

// findings runs a findings plan.
func (x *Executor) findings(ctx context.Context, p Plan, emit func(*Finding) error) error {
	switch n := p.(type) {
	case FindingsScan:
		return x.Src.BlockReports(ctx, n.Blocks, func(r *block.Report) error {
			if n.Kind == "sandwiches" {
				for i := range r.Sandwiches {
					if err := emit(&Finding{Block: r.Block, Sandwich: &r.Sandwiches[i]}); err != nil {
						return err
					}
				}
				return nil
			}
			for i := range r.Backruns {
				br := &r.Backruns[i]
				f := &Finding{Block: r.Block, Backrun: br}
				f.rec = func() (*layout.Record, error) {
					h, err := normalform.ParseHash(br.Tx)
					if err != nil {
						return nil, fmt.Errorf("block %d: back-run tx %q: %w", r.Block, br.Tx, err)
					}
					return x.get(h)
				}
				if err := emit(f); err != nil {
					return err
				}
			}
			return nil
		})
	case *FindingsFilter:
		return x.findings(ctx, n.Input, func(f *Finding) error {
			ok, err := n.Pred.Eval(f)
			if err != nil || !ok {
				return err
			}
			return emit(f)
		})
	case *FindingsSort:
		return sortedBy(func(emit func(*Finding) error) error { return x.findings(ctx, n.Input, emit) }, n.key, n.less, n.Desc, emit)
	case *Limit:
		return limitTo(n.N, func(emit func(*Finding) error) error { return x.findings(ctx, n.Input, emit) }, emit)
	}
	return fmt.Errorf("the plan step %q cannot run over block findings (a bug in flowq's planner)", p.Describe())
}

// hashField is a field naming a transaction: the whole hash, and for
// people its first bytes.
func hashField(name, h string) Field {
	hu := h
	if len(h) > 12 {
		hu = h[:10] + "…"
	}
	return Field{name, h, hu}
}

// hashesField is a field naming transactions, comma-separated.
func hashesField(name string, hs []string) Field {
	var hu []string
	for _, h := range hs {
		hu = append(hu, hashField("", h).Human)
	}
	return Field{name, strings.Join(hs, ","), strings.Join(hu, ",")}
}

// amountField is a field of a signed decimal amount in a token's base
// units ("" when unknown).
func (x *Executor) amountField(name, v string, tok normalform.Token) Field {
	if v == "" {
		return Field{name, "", "unknown"}
	}
	return Field{name, v, x.Cfg.FormatSigned(signedOf(v), tok)}
}

func (x *Executor) tokenField(name string, tok normalform.Token) Field {
	return Field{name, tok.Key(), x.Cfg.TokenName(tok)}
}

// findingRow is a finding's row.
func (x *Executor) findingRow(f *Finding) Row {
	num := func(n int) string { return fmt.Sprint(n) }
	block := fmt.Sprint(f.Block)
	if s := f.Sandwich; s != nil {
		tau := tokenOfKey(s.Token)
		var victims []string
		for _, v := range s.Victims {
			if len(victims) == 0 || victims[len(victims)-1] != v.Tx {
				victims = append(victims, v.Tx)
			}
		}
		net := x.amountField("net", s.Net, normalform.NativeToken)
		if s.Net == "" && s.Costs != "" {
			net.Human = "" // τ is not the native asset: no one unit
		}
		return Row{
			{"block", block, block},
			hashField("front", s.Front.Tx),
			hashesField("victims", victims),
			hashField("back", s.Back.Tx),
			addrField("sender", addrOf(s.Sender)),
			addrField("bot", addrOf(s.Bot)),
			{"pools", num(len(s.Pools)), num(len(s.Pools))},
			x.tokenField("token", tau),
			x.amountField("gain", s.Gain, tau),
			net,
			x.amountField("builder_paid", s.BuilderPaid, normalform.NativeToken),
		}
	}
	b := f.Backrun
	tok := tokenOfKey(b.Token)
	var corrects []string
	for _, c := range b.Corrects {
		if !containsStr(corrects, c.Tx) {
			corrects = append(corrects, c.Tx)
		}
	}
	pools := num(findingPools(f))
	return Row{
		{"block", block, block},
		{"index", num(b.Index), num(b.Index)},
		hashField("tx", b.Tx),
		addrField("sender", addrOf(b.Sender)),
		addrField("bot", addrOf(b.Bot)),
		{"pools", pools, pools},
		x.tokenField("token", tok),
		x.amountField("gain", b.Gain, tok),
		hashesField("corrects", corrects),
	}
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// findingsGroup counts findings by bot, sender or block, largest first.
func (x *Executor) findingsGroup(ctx context.Context, plan Plan, emit func(Row) error) error {
	g, limit := splitGroup(plan)
	type bucket struct {
		key     Field
		n       int
		example string
	}
	buckets := map[string]*bucket{}
	var order []string
	err := x.findings(ctx, g.Input, func(f *Finding) error {
		var k Field
		sender, bot := findingWho(f)
		switch g.By {
		case lang.GroupBot:
			k = addrField("bot", addrOf(bot))
		case lang.GroupSender:
			k = addrField("sender", addrOf(sender))
		default:
			b := fmt.Sprint(f.Block)
			k = Field{"block", b, b}
		}
		bk := buckets[k.Value]
		if bk == nil {
			ex := ""
			if f.Sandwich != nil {
				ex = f.Sandwich.Front.Tx
			} else {
				ex = f.Backrun.Tx
			}
			bk = &bucket{key: k, example: ex}
			buckets[k.Value] = bk
			order = append(order, k.Value)
		}
		bk.n++
		return nil
	})
	if err != nil {
		return err
	}
	for _, k := range largestFirst(order, func(k string) int { return buckets[k].n }, limit) {
		b := buckets[k]
		c := fmt.Sprint(b.n)
		if err := emit(Row{b.key, {g.What, c, c}, {"example", b.example, b.example}}); err != nil {
			return err
		}
	}
	return nil
}

// showBlock lists a block's transactions with their roles: each
// transaction's row and path from its record, its roles from the stored
// findings.
func (x *Executor) showBlock(ctx context.Context, p *ShowBlock, emit func(Row) error) error {
	var rep *block.Report
	if err := x.Src.BlockReports(ctx, layout.Blocks(p.Block, p.Block), func(r *block.Report) error {
		rep = r
		return nil
	}); err != nil {
		return err
	}
	if rep == nil {
		if dirty, err := x.Src.Dirty(p.Block); err == nil && dirty {
			return fmt.Errorf("block %d: its findings wait to be computed (an ingest stopped before it could): ingest again", p.Block)
		}
		return fmt.Errorf("block %d is not in the index: ingest its transactions first (flowq ingest, or .ingest in the REPL)", p.Block)
	}
	// The rows are the block's records (headers, with their addresses,
	// at known indexes, in index order); the roles are the findings'.
	var txs []block.TxRow
	paths := map[string]string{}
	if err := x.Src.Filter(ctx, layout.Blocks(p.Block, p.Block), true, nil, false, func(r *layout.Record) error {
		if !r.Loc.Known() {
			return nil
		}
		row := block.TxRow{Index: int(r.Loc.Index), Tx: r.Hash.Hex(), From: normalform.AddrKey(r.From), To: normalform.AddrKey(r.Recipient),
			Verdict: r.Verdict.String()}
		if r.Tier != normalform.TierNone {
			row.Tier = r.Tier.String()
		}
		txs = append(txs, row)
		paths[row.Tx] = r.Path.String()
		return nil
	}); err != nil {
		return err
	}
	sort.Slice(txs, func(i, j int) bool { return txs[i].Index < txs[j].Index })
	roles := block.Roles(rep)
	block := fmt.Sprint(p.Block)
	// A block ingested partly shows each missing index as a row of its
	// own (no finding spans it).
	missing := rep.Missing
	emitMissing := func(upTo int) error {
		for len(missing) > 0 && missing[0] < upTo {
			idx := fmt.Sprint(missing[0])
			missing = missing[1:]
			if err := emit(Row{{"block", block, block}, {"index", idx, idx}, {"tx", "(not in the index)", "(not in the index)"},
				{"sender", "", ""}, {"bot", "", ""}, {"verdict", "missing", "missing"}, {"tier", "", ""}, {"path", "", ""},
				{"roles", "partial block", "partial block"}}); err != nil {
				return err
			}
		}
		return nil
	}
	for _, t := range txs {
		if err := emitMissing(t.Index); err != nil {
			return err
		}
		t.Roles = roles[t.Index]
		roles := strings.Join(t.Roles, ",")
		idx := fmt.Sprint(t.Index)
		path := paths[t.Tx]
		row := Row{
			{"block", block, block},
			{"index", idx, idx},
			{"tx", t.Tx, t.Tx},
			addrField("sender", addrOf(t.From)),
			addrField("bot", addrOf(t.To)),
			{"verdict", t.Verdict, t.Verdict},
			{"tier", t.Tier, t.Tier},
			{"path", path, path},
			{"roles", roles, strings.Join(t.Roles, ", ")},
		}
		if err := emit(row); err != nil {
			return err
		}
	}
	return emitMissing(math.MaxInt) // the missing indexes after the last given (the header's count says)
}
