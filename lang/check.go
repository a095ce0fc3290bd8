package lang

import (
	"strings"

	"github.com/flowq/flowq/normalform"
)

// Source is the text a script was parsed from, and its name in errors.
// Every statement keeps a pointer to it; positions and spans are offsets
// into Text. The layers after the parser bind their errors to it once
// (Errorf), rather than carrying the text beside the statement.
type Source struct {
	File string
	Text string
}

// Errorf makes an error at n's position, printed with its line and a
// caret, as a syntax error is.
func (s *Source) Errorf(n Node, format string, args ...any) *Error {
	return newError(s.File, s.Text, n.Pos(), format, args...)
}

// ErrorAt makes an error at a position.
func (s *Source) ErrorAt(pos Pos, format string, args ...any) *Error {
	return newError(s.File, s.Text, pos, format, args...)
}

// TextOf is n's text in the source, whitespace collapsed; "" when n's
// extent is not in it.
func (s *Source) TextOf(n Node) string {
	from, to := n.Pos().Offset, n.End().Offset
	if s == nil || from < 0 || to > len(s.Text) || from >= to {
		return ""
	}
	return strings.Join(strings.Fields(s.Text[from:to]), " ")
}

// Check is the check pass: it resolves the statement's names (levels,
// verdicts, tiers, paths, modes, reasons, groupings, views) against the
// vocabulary, fills in their typed values (Same.At, Count.Group, Is.Tier,
// HasReason.Want, …), and reports, at its position, every name the
// vocabulary does not know there and every condition or order that does
// not apply where it is written (block findings take fewer). Parse runs
// it on every statement; the planner reads the typed values only.
func Check(st Statement) ErrorList {
	c := &checker{src: st.Source()}
	c.stmt(st)
	return c.errs
}

type checker struct {
	src  *Source
	errs ErrorList
}

func (c *checker) errorAt(pos Pos, format string, args ...any) {
	c.errs = append(c.errs, newError(c.src.File, c.src.Text, pos, format, args...))
}

// resolve looks id up among the words of class allowed in places;
// what names the class in the error.
func (c *checker) resolve(id *Ident, class Class, in Places, what string) (Decl, bool) {
	if d, ok := Vocab.Lookup(class, id.Name); ok && d.Places&in != 0 {
		return d, true
	}
	c.errorAt(id.From, "unknown %s %q: want %s", what, clip(id.Name), strings.Join(Vocab.Words(class, in), ", "))
	return Decl{}, false
}

func (c *checker) level(id *Ident, def normalform.Level) normalform.Level {
	if id == nil {
		return def
	}
	if d, ok := c.resolve(id, ClassLevel, InTxs, "equivalence level"); ok {
		return d.Value.(normalform.Level)
	}
	return def
}

// The kinds of value a shortened reference names, for its messages.
const (
	refTx    = "a transaction hash"
	refAddr  = "an address"
	refHash  = "a structural hash"
	refWidth = 64 // digits of a hash; an address has 40
)

// partial checks a shortened reference (the check pass marks it: the
// planner resolves it through the index): enough digits to look up
// (MinPrefixDigits, MinShortDigits before the "…"), no more than the
// value has. n is the reference's node.
func (c *checker) partial(n Node, p Partial, what string) {
	if !p.IsPartial() {
		return
	}
	width := refWidth
	if what == refAddr {
		width = 40
	}
	switch {
	case p.Digits() > width:
		c.errorAt(n.Pos(), "%s has %d hex digits: %s has %d", clip(p.String()), p.Digits(), what, width)
	case p.Digits() < MinPrefixDigits:
		c.errorAt(n.Pos(), "%s is too short to name %s: write at least %d of its hex digits (a prefix, or a form as flowq prints it, 0x3db1…dcfa)", clip(p.String()), what, MinPrefixDigits)
	case p.Suffix != "" && len(p.Prefix) < MinShortDigits:
		c.errorAt(n.Pos(), "%s: %s shortened needs at least %d hex digits before the …", clip(p.String()), what, MinShortDigits)
	}
}

func (c *checker) tx(t *TxRef) {
	if t != nil {
		c.partial(t, t.Part, refTx)
	}
}

func (c *checker) addr(a *AddrLit) {
	if a != nil {
		c.partial(a, a.Part, refAddr)
	}
}

// token checks a token reference: after "touches" an address may be
// shortened (touches), elsewhere (a profit's token) it is named whole.
func (c *checker) token(t *TokenRef, touches bool) {
	if t == nil || !t.Part.IsPartial() {
		return
	}
	if !touches {
		c.errorAt(t.From, "%s: the token of a profit is named by its symbol or its whole address (0x and 40 hex digits), not a shortened one", clip(t.Part.String()))
		return
	}
	c.partial(t, t.Part, refAddr)
}

func (c *checker) order(o *Order) {
	if o != nil && o.Metric != nil {
		c.token(o.Metric.Token, false)
	}
}

func (c *checker) stmt(st Statement) {
	switch x := st.(type) {
	case *Explain:
		c.stmt(x.Query)
	case *Find:
		c.expr(x.Where, InTxs, "")
		c.order(x.Order)
	case *Findings:
		c.expr(x.Where, InFindings, x.Kind.String())
		c.findingsOrder(x.Order, x.Kind.String())
		c.order(x.Order)
	case *Same:
		x.At = c.level(x.Level, normalform.Exact)
		c.tx(x.A)
		c.tx(x.B)
	case *Match:
		x.At = c.level(x.Level, normalform.Shape)
		c.tx(x.Ref)
		c.expr(x.Where, InTxs, "")
		c.order(x.Order)
	case *Anomalies:
		c.addr(x.Bot)
	case *Count:
		in, what := InTxs, "grouping"
		if x.What.Findings() {
			in, what = InFindings, "grouping of "+x.What.String()
		}
		if d, ok := c.resolve(x.By, ClassGroupBy, in, what); ok {
			x.Group = d.Value.(GroupBy)
		}
		kind := ""
		if x.What.Findings() {
			kind = x.What.String()
		}
		c.expr(x.Where, in, kind)
	case *Show:
		c.tx(x.Tx)
		x.As = nil
		for _, v := range x.Views {
			if d, ok := c.resolve(v, ClassView, InTxs, "view"); ok {
				x.As = append(x.As, d.Value.(View))
			}
		}
		if len(x.Views) == 0 {
			x.As = []View{ViewAll}
		}
	}
}

// findingsOrder checks the order of a find of block findings: by profit,
// pools or block.
func (c *checker) findingsOrder(o *Order, kind string) {
	if o == nil {
		return
	}
	if d, ok := Vocab.Lookup(ClassMetric, o.Metric.Kind.String()); !ok || d.Places&InFindings == 0 {
		c.errorAt(o.Metric.From, "%s are ordered by profit, pools or block, not %s", kind, o.Metric.Kind)
	}
}

// expr checks a filter: its names resolve, and, over block findings
// (kind not ""), each condition applies to them. The walk keeps its own
// stack: a chain of 20,000 "or" is as deep.
func (c *checker) expr(e Expr, in Places, kind string) {
	stack := []Expr{e}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		what := "" // a condition that does not apply to block findings
		switch x := x.(type) {
		case nil:
		case *And:
			stack = append(stack, x.R, x.L)
		case *Or:
			stack = append(stack, x.R, x.L)
		case *Not:
			stack = append(stack, x.X)
		case *Compare:
			c.token(x.Metric.Token, false)
			c.token(x.Value.Token, false)
			if d, ok := Vocab.Lookup(ClassMetric, x.Metric.Kind.String()); !ok || d.Places&in == 0 {
				what = x.Metric.Kind.String()
			}
		case *Is:
			if kind != "" {
				what = x.Field.String()
				break
			}
			d, ok := c.resolve(x.Value, x.Field.Class(), InTxs, x.Field.String())
			if !ok {
				break
			}
			switch v := d.Value.(type) {
			case normalform.Verdict:
				x.Verdict = v
			case normalform.Tier:
				x.Tier, x.Verdict = v, v.Verdict()
			case normalform.Path:
				x.Path = v
			case normalform.Mode:
				x.Mode = v
			}
		case *HasReason:
			if kind != "" {
				what = "reason"
				break
			}
			if d, ok := c.resolve(x.Reason, ClassReason, InTxs, "reason"); ok {
				x.Want = d.Value.(normalform.Reason)
			}
		case *AddrIs:
			c.addr(x.Addr)
		case *Touches:
			c.token(x.Target, true)
		case *FlashLoan:
			if kind != "" {
				what = "flashloan"
			}
		case *HashIs:
			if kind != "" {
				what = x.Level.Name + " = HASH"
			}
			x.At = c.level(x.Level, normalform.Exact)
			c.partial(x.Hash, x.Hash.Part, refHash)
		}
		if what != "" && kind != "" {
			c.errorAt(x.Pos(), "%s does not apply to %s: filter them by profit, pools, block, bot, sender or touches", what, kind)
		}
	}
}
