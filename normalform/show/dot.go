package show

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/holiman/uint256"

	"github.com/flowq/flowq/normalform"
)

// Pictures: Graphviz DOT renderings of an analysis, after the paper's
// figures. TransferGraphDOT is the transfer graph (Figure 1, Figure
// "Transfer graph of tx_R"): addresses as nodes, transfers as edges
// numbered in trace order. NormalFormDOT is the reduced tree (Figure
// "Reduction of tx_R" (b)): the normal form's elements, each chain a box
// holding its composition (∘) and parallel arms (∥) down to its transfers.
//
// Both are pure and deterministic: the same analysis gives byte-identical
// text (no map is iterated to produce output). Every identifier and every
// string attribute is quoted and escaped (dotQuote), so token symbols and
// other text cannot break the syntax.

// The Okabe–Ito colours the paper's figures use: arbitrage cycles take
// them in order (vermillion is kept for leftovers).
var dotCycleColors = []string{"#0072B2", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#882255"}

// Light fills for transfer leaves, one per token in order of first
// appearance (the paper colours leaves by token).
var dotTokenFills = []string{"#dbe9f6", "#fde2c4", "#d9f0d3", "#f3d9ec", "#fff3bf", "#e0e0f8", "#d5f5f0", "#f0e0d0"}

const (
	dotFont       = "Helvetica"
	dotLeftover   = "#D55E00"
	dotCost       = "#999999"
	dotTrimmed    = "#bbbbbb"
	dotOtherCycle = "#555555"
	dotOpen       = "#333333"
	dotLC         = "#8c6d1f"
	dotSent       = "#a50f15" // Figure 1: sent from the cycle's origin
	dotReceived   = "#1b7837" // Figure 1: received at the cycle's origin
)

// dotQuote renders s as a DOT quoted string: quotes and backslashes are
// escaped, a newline becomes the label line break \n, carriage returns
// are dropped, other control characters and invalid UTF-8 become U+FFFD.
// Unicode is kept (DOT files are UTF-8).
func dotQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		switch {
		case r == utf8.RuneError && n <= 1:
			b.WriteRune(utf8.RuneError)
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// dotAttrs renders an attribute list from key, value pairs, every value
// quoted, in the order given.
func dotAttrs(kv ...string) string {
	if len(kv) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(" [")
	for i := 0; i+1 < len(kv); i += 2 {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(kv[i])
		b.WriteByte('=')
		b.WriteString(dotQuote(kv[i+1]))
	}
	b.WriteByte(']')
	return b.String()
}

// dotCaption is the graph label: what is drawn, the transaction, the
// verdict and tier with their reasons, the gross and the net profit.
func dotCaption(c *normalform.Config, a *normalform.Analysis, what string) string {
	m := &a.Tx.Meta
	var b strings.Builder
	b.WriteString(what + " of tx ")
	if m.HasHash {
		b.WriteString(m.Hash.Hex())
	} else {
		b.WriteString("(hash unknown)")
	}
	if m.HasBlock {
		fmt.Fprintf(&b, "  block %d", m.Block)
	}
	if m.HasIndex {
		fmt.Fprintf(&b, "  index %d", m.Index)
	}
	b.WriteString("\nverdict " + strings.ToUpper(a.Verdict.String()))
	if a.Tier != normalform.TierNone {
		fmt.Fprintf(&b, " (%s)", a.Tier)
	}
	if len(a.Reasons) > 0 {
		rs := make([]string, len(a.Reasons))
		for i, r := range a.Reasons {
			rs[i] = string(r)
		}
		b.WriteString("  reasons: " + strings.Join(rs, ", "))
	}
	b.WriteString("\ngross at the principals " + FormatDelta(c, a.Gross))
	if a.Costs.Known {
		b.WriteString("  ·  net profit " + FormatDelta(c, a.Net) + " (costs " + c.FormatAmount(&a.Costs.Total, normalform.NativeToken) + ")")
	} else {
		b.WriteString("  ·  net profit unknown (no receipt: gas cannot be charged)")
	}
	return b.String()
}

// dotElement is one element of the normal form as the pictures see it.
type dotElement struct {
	index  int               // among the normal form's children
	chain  *normalform.Chain // nil for a leaf
	leaf   *normalform.Transfer
	color  string // edge colour in the transfer graph
	kind   string // class: arbitrage, cycle, open, lc, leftover, cost
	swaps  map[int32]*normalform.Term
	ret    int32  // the transfer of a Star's return (its closing swap), or -1
	title  string // one line: C9 arbitrage at 0x… δ …
	counts bool   // a counted arbitrage
}

// dotElements classifies the normal form's children, in order.
func dotElements(c *normalform.Config, a *normalform.Analysis) []*dotElement {
	if a.NF == nil {
		return nil
	}
	var out []*dotElement
	arb := 0
	for i, n := range a.NF.Children {
		e := &dotElement{index: i, ret: -1}
		out = append(out, e)
		if n.Leaf != nil {
			e.leaf = n.Leaf
			if a.IsBuilderPayment(n.Leaf) {
				e.kind, e.color, e.title = "cost", dotCost, "builder payment"
			} else {
				e.kind, e.color, e.title = "leftover", dotLeftover, "leftover"
			}
			continue
		}
		ch := n.Chain
		e.chain = ch
		e.swaps = map[int32]*normalform.Term{}
		var prev *normalform.Token
		chainSwaps(ch, &prev, e.swaps)
		switch {
		case ch.Label == normalform.LeftoverCycle:
			e.kind, e.color = "lc", dotLC
			e.title = fmt.Sprintf("C%d leftover cycle (%s) at %s", ch.ID, ch.Rule, c.Short(ch.Origin()))
		case !ch.Closed():
			e.kind, e.color = "open", dotOpen
			e.title = fmt.Sprintf("C%d open chain (%s) %s → %s", ch.ID, ch.Label, c.Short(ch.Origin()), c.Short(ch.Dest()))
		case ch.Label == normalform.Arbitrage:
			e.kind, e.color = "arbitrage", dotCycleColors[arb%len(dotCycleColors)]
			arb++
			e.ret = starReturn(ch)
			e.counts = a.Counted(ch)
			e.title = fmt.Sprintf("C%d arbitrage at %s", ch.ID, c.Short(ch.Origin()))
		default:
			e.kind, e.color = "cycle", dotOtherCycle
			e.title = fmt.Sprintf("C%d %s at %s", ch.ID, ch.Label, c.Short(ch.Origin()))
		}
		if ch.Closed() {
			e.title += "  δ " + FormatDelta(c, ch.BalanceOf(ch.Origin()))
		}
		if e.kind == "arbitrage" {
			switch {
			case e.counts:
				e.title += "  [counted]"
			default:
				e.title += "  [inner: origin is not a principal]"
			}
			if ch.Promoted {
				e.title += " [promoted]"
			}
		}
	}
	return out
}

// chainSwaps records, per transfer, the swap its junction makes: the
// token changes between the transfer before it and it, at its source.
// It walks the chain as the algebra's bodyTerm does (each parallel arm
// starts from the token before the merge), so that the swaps drawn are the
// Swap(τ, τ') of the terms, the Star's return included.
func chainSwaps(c *normalform.Chain, prev **normalform.Token, out map[int32]*normalform.Term) {
	if c.Leaf != nil {
		t := c.Leaf
		if *prev != nil && **prev != t.Token {
			out[t.Pos] = &normalform.Term{Kind: normalform.TSwap, At: t.From, In: **prev, Out: t.Token}
		}
		tok := t.Token
		*prev = &tok
		return
	}
	if c.Merged && c.Rule.Parallel() {
		start := *prev
		for _, arm := range normalform.FlattenPar(c, nil) {
			p := start
			chainSwaps(arm, &p, out)
		}
		o := c.TokOut()
		*prev = &o
		return
	}
	chainSwaps(c.Left, prev, out)
	chainSwaps(c.Right, prev, out)
}

// starReturn finds the transfer of a Star's return: the algebra leaves a
// closing swap out of the Star's body when the body ends with a swap into
// the cycle's exit token (chainTerm); that swap's transfer is returned, or
// -1. The body is walked as bodyTerm walks it: a parallel merge is one
// item, anything else is a sequence.
func starReturn(c *normalform.Chain) int32 {
	last, lastPos := (*normalform.Term)(nil), int32(-1)
	var prev *normalform.Token
	var walk func(c *normalform.Chain)
	walk = func(c *normalform.Chain) {
		switch {
		case c.Leaf != nil:
			t := c.Leaf
			if prev != nil && *prev != t.Token {
				last, lastPos = &normalform.Term{Kind: normalform.TSwap, Out: t.Token}, t.Pos
			}
			tok := t.Token
			prev = &tok
		case c.Merged && c.Rule.Parallel():
			last, lastPos = &normalform.Term{Kind: normalform.TPar}, -1
			o := c.TokOut()
			prev = &o
		default:
			walk(c.Left)
			walk(c.Right)
		}
	}
	walk(c)
	if last != nil && last.Kind == normalform.TSwap && last.Out == c.TokOut() {
		return lastPos
	}
	return -1
}

// swapText renders a swap for people, as the terms do.
func swapText(c *normalform.Config, s *normalform.Term) string {
	return fmt.Sprintf("Swap@%s(%s,%s)", c.Short(s.At), c.TokenName(s.In), c.TokenName(s.Out))
}

// dotRole is how the transfer graph draws an address.
type dotRole struct {
	class string
	attrs []string
}

// TransferGraphDOT renders the transaction's transfer graph as Graphviz
// DOT: one node per address (the sender and recipient, the principals,
// as the paper draws EOA and SC; pools, the addresses where a chain's
// token changes, as circles with the tokens they swap; token contracts;
// the coinbase), one edge per transfer, labelled "#pos" in trace order and
// with its amount. The transfers of each element of the normal form are
// grouped in a subgraph: an arbitrage cycle's in its own colour and bold,
// with the cycle's id on every edge and its δ in the legend; costs
// (builder payments) dashed, leftovers in vermillion, transfers that
// trimming dropped dotted. A dashed edge from the sender to the recipient
// is the transaction's call, labelled with its gas cost when known.
func TransferGraphDOT(c *normalform.Config, a *normalform.Analysis) string {
	c = c.ForAnalysis(a)
	elems := dotElements(c, a)
	// Which element holds each transfer.
	of := map[int32]*dotElement{}
	for _, e := range elems {
		if e.leaf != nil {
			of[e.leaf.Pos] = e
			continue
		}
		for _, t := range e.chain.Transfers(nil) {
			of[t.Pos] = e
		}
	}
	// Addresses in order: the principals, then by first appearance.
	m := &a.Tx.Meta
	seen := map[normalform.Address]bool{}
	var addrs []normalform.Address
	add := func(x normalform.Address) {
		if !seen[x] {
			seen[x] = true
			addrs = append(addrs, x)
		}
	}
	ts := a.Tx.Transfers
	endpoint := map[normalform.Address]bool{}
	for i := range ts {
		endpoint[ts[i].From], endpoint[ts[i].To] = true, true
	}
	if m.HasFrom {
		add(a.Sender)
	}
	recipientKnown := m.HasTo || endpoint[a.Recipient]
	if recipientKnown {
		add(a.Recipient)
	}
	for i := range ts {
		add(ts[i].From)
		add(ts[i].To)
	}
	// Pools: where a chain's token changes (its swaps), with the tokens.
	poolToks := map[normalform.Address][]normalform.Token{}
	for _, e := range elems {
		if e.chain == nil {
			continue
		}
		for _, t := range e.chain.Transfers(nil) {
			if s := e.swaps[t.Pos]; s != nil {
				for _, tk := range []normalform.Token{s.In, s.Out} {
					if !slices.Contains(poolToks[s.At], tk) {
						poolToks[s.At] = append(poolToks[s.At], tk)
					}
				}
			}
		}
	}
	tokenContract := map[normalform.Address]normalform.Token{}
	for i := range ts {
		tk := ts[i].Token
		if tk.Kind != normalform.Native {
			if _, ok := tokenContract[tk.Addr]; !ok {
				tokenContract[tk.Addr] = tk
			}
		}
	}
	role := func(x normalform.Address) dotRole {
		short := c.Short(x)
		isFrom, isTo := m.HasFrom && x == a.Sender, recipientKnown && x == a.Recipient
		switch {
		case isFrom && isTo:
			return dotRole{"principal sender recipient", []string{"label", "from = to (sender and recipient)\n" + short, "shape", "box",
				"style", "rounded,filled", "fillcolor", "#fde9c9", "color", "#b8860b", "peripheries", "2", "penwidth", "1.5"}}
		case isFrom:
			return dotRole{"principal sender", []string{"label", "from (sender, EOA)\n" + short, "shape", "box",
				"style", "rounded,filled", "fillcolor", "#e6e6e6", "color", "#7f7f7f", "penwidth", "1.5"}}
		case isTo:
			return dotRole{"principal recipient", []string{"label", "to (recipient)\n" + short, "shape", "box",
				"style", "rounded,filled", "fillcolor", "#fde9c9", "color", "#b8860b", "peripheries", "2", "penwidth", "1.5"}}
		case m.HasHeader && x == m.Miner:
			return dotRole{"coinbase", []string{"label", "coinbase (block builder)\n" + short, "shape", "box",
				"style", "rounded,filled,dashed", "fillcolor", "#f2f2f2", "color", "#7f7f7f"}}
		}
		if tk, ok := tokenContract[x]; ok {
			name := "token " + short
			if ti, ok := c.TokenInfo(normalform.FungibleToken(tk.Addr)); ok && tk.Kind == normalform.Fungible {
				name = ti.Symbol + " contract"
			}
			return dotRole{"token", []string{"label", name + "\n" + short, "shape", "box",
				"style", "filled", "fillcolor", "#efe6f7", "color", "#7b5aa6"}}
		}
		if toks := poolToks[x]; len(toks) > 0 {
			names := make([]string, len(toks))
			for i, tk := range toks {
				names[i] = c.TokenName(tk)
			}
			return dotRole{"pool", []string{"label", "pool " + strings.Join(names, "/") + "\n" + short, "shape", "ellipse",
				"style", "filled", "fillcolor", "#dcebf7", "color", "#3b78b0"}}
		}
		return dotRole{"account", []string{"label", short, "shape", "ellipse", "style", "solid", "color", "#7f7f7f"}}
	}

	var b strings.Builder
	b.WriteString("digraph " + dotQuote("transfer graph") + " {\n")
	legend := dotCaption(c, a, "transfer graph")
	for _, e := range elems {
		if e.kind == "arbitrage" {
			legend += "\n" + e.title
		}
	}
	fmt.Fprintf(&b, "  graph%s;\n", dotAttrs("rankdir", "LR", "label", legend, "labelloc", "t", "fontname", dotFont, "fontsize", "12",
		"nodesep", "0.4", "ranksep", "1.1"))
	fmt.Fprintf(&b, "  node%s;\n", dotAttrs("fontname", dotFont, "fontsize", "10"))
	fmt.Fprintf(&b, "  edge%s;\n", dotAttrs("fontname", dotFont, "fontsize", "9", "arrowsize", "0.7"))
	for _, x := range addrs {
		r := role(x)
		attrs := append([]string{"id", normalform.AddrKey(x), "class", r.class, "tooltip", normalform.AddrKey(x)}, r.attrs...)
		fmt.Fprintf(&b, "  %s%s;\n", dotQuote(normalform.AddrKey(x)), dotAttrs(attrs...))
	}
	if m.HasFrom && recipientKnown && a.Sender != a.Recipient {
		label := "call"
		if a.Costs.Known {
			var gas uint256.Int
			gas.Add(&a.Costs.BaseFee, &a.Costs.Priority)
			label += "\ngas " + c.FormatAmount(&gas, normalform.NativeToken)
		}
		fmt.Fprintf(&b, "  %s -> %s%s;\n", dotQuote(normalform.AddrKey(a.Sender)), dotQuote(normalform.AddrKey(a.Recipient)),
			dotAttrs("id", "call", "class", "call", "label", label, "style", "dashed", "color", "#7f7f7f", "fontcolor", "#7f7f7f", "arrowhead", "empty"))
	}
	edge := func(t *normalform.Transfer, tag string, extra ...string) {
		label := fmt.Sprintf("#%d", t.Pos)
		if tag != "" {
			label += " · " + tag
		}
		label += "\n" + c.FormatAmount(&t.Amount, t.Token)
		if t.Flags&(normalform.Mint|normalform.Burn) != 0 {
			label += " [" + (t.Flags & (normalform.Mint | normalform.Burn)).String() + "]"
		}
		attrs := append([]string{"id", fmt.Sprintf("t%d", t.Pos), "label", label, "tooltip", LeafString(c, t)}, extra...)
		fmt.Fprintf(&b, "    %s -> %s%s;\n", dotQuote(normalform.AddrKey(t.From)), dotQuote(normalform.AddrKey(t.To)), dotAttrs(attrs...))
	}
	// Chains, one subgraph each, in the order of the normal form.
	for _, e := range elems {
		if e.chain == nil {
			continue
		}
		ch := e.chain
		fmt.Fprintf(&b, "  subgraph %s {\n", dotQuote(fmt.Sprintf("e%d:C%d", e.index, ch.ID)))
		fmt.Fprintf(&b, "    graph%s;\n", dotAttrs("label", e.title))
		width := "1.2"
		switch {
		case e.kind == "arbitrage" && e.counts:
			width = "2.5"
		case e.kind == "arbitrage":
			width = "1.8"
		}
		fmt.Fprintf(&b, "    edge%s;\n", dotAttrs("color", e.color, "penwidth", width))
		tag := fmt.Sprintf("C%d", ch.ID)
		if e.kind == "open" {
			tag += " (open)"
		} else if e.kind == "lc" {
			tag += " LC"
		}
		for _, t := range sortedByPos(ch.Transfers(nil)) {
			var extra []string
			extra = append(extra, "class", "transfer "+e.kind)
			if e.kind == "arbitrage" {
				switch {
				case t.From == ch.Origin():
					extra = append(extra, "fontcolor", dotSent)
				case t.To == ch.Origin():
					extra = append(extra, "fontcolor", dotReceived)
				}
			}
			edge(t, tag, extra...)
		}
		b.WriteString("  }\n")
	}
	// Leftovers, costs, and transfers that are not in the normal form.
	for i := range ts {
		t := &ts[i]
		e := of[t.Pos]
		switch {
		case e == nil:
			edge(t, "trimmed", "class", "transfer trimmed", "style", "dotted", "color", dotTrimmed, "fontcolor", "#7f7f7f")
		case e.kind == "leftover":
			edge(t, "leftover", "class", "transfer leftover", "style", "bold", "color", dotLeftover, "fontcolor", dotLeftover)
		case e.kind == "cost":
			edge(t, "builder payment", "class", "transfer cost", "style", "dashed", "color", dotCost, "fontcolor", "#7f7f7f")
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func sortedByPos(ts []*normalform.Transfer) []*normalform.Transfer {
	out := append([]*normalform.Transfer(nil), ts...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pos < out[j].Pos })
	return out
}

// nfDrawer writes the reduced tree: nodes in clusters as it goes, edges
// collected and written after every cluster at the top level (an edge
// inside a cluster would pull its other end into it).
type nfDrawer struct {
	c      *normalform.Config
	b      strings.Builder
	edges  []string
	fills  map[normalform.Token]string
	indent string
}

func (d *nfDrawer) node(id string, kv ...string) {
	fmt.Fprintf(&d.b, "%s%s%s;\n", d.indent, dotQuote(id), dotAttrs(kv...))
}

func (d *nfDrawer) edge(from, to string, kv ...string) {
	d.edges = append(d.edges, fmt.Sprintf("  %s -> %s%s;\n", dotQuote(from), dotQuote(to), dotAttrs(kv...)))
}

func (d *nfDrawer) open(id string, kv ...string) {
	fmt.Fprintf(&d.b, "%ssubgraph %s {\n", d.indent, dotQuote("cluster_"+id))
	d.indent += "  "
	fmt.Fprintf(&d.b, "%sgraph%s;\n", d.indent, dotAttrs(kv...))
}

func (d *nfDrawer) close() {
	d.indent = d.indent[:len(d.indent)-2]
	fmt.Fprintf(&d.b, "%s}\n", d.indent)
}

// leaf draws a transfer; note is an extra line (its swap, a return).
func (d *nfDrawer) leaf(t *normalform.Transfer, class, note string) string {
	id := fmt.Sprintf("t%d", t.Pos)
	label := fmt.Sprintf("#%d %s → %s\n%s", t.Pos, d.c.Short(t.From), d.c.Short(t.To), d.c.FormatAmount(&t.Amount, t.Token))
	if t.Flags&(normalform.Mint|normalform.Burn) != 0 {
		label += " [" + (t.Flags & (normalform.Mint | normalform.Burn)).String() + "]"
	}
	if note != "" {
		label += "\n" + note
	}
	attrs := []string{"id", id, "class", class, "label", label, "tooltip", LeafString(d.c, t), "fillcolor", d.fills[t.Token]}
	switch class {
	case "transfer leftover":
		attrs = append(attrs, "color", dotLeftover, "penwidth", "2")
	case "transfer cost":
		attrs = append(attrs, "style", "rounded,filled,dashed", "color", "#7f7f7f")
	}
	d.node(id, attrs...)
	return id
}

// nfPieces flattens chaining (∘) into its sequence of leaves and merges.
func nfPieces(ch *normalform.Chain, dst []*normalform.Chain) []*normalform.Chain {
	if ch.Leaf != nil || ch.Merged {
		return append(dst, ch)
	}
	return nfPieces(ch.Right, nfPieces(ch.Left, dst))
}

// flattenSum flattens nested merges of closed loops (R8, R9) into their
// operands, in chain order.
func flattenSum(c *normalform.Chain, dst []*normalform.Chain) []*normalform.Chain {
	if c.Leaf == nil && c.Merged && (c.Rule == normalform.R8 || c.Rule == normalform.R9) {
		return flattenSum(c.Right, flattenSum(c.Left, dst))
	}
	return append(dst, c)
}

// pieces draws a chain's sequence under parent: leaves, and a node per
// merge with its operands. A Star's return is marked on its transfer,
// with "hub" when the parallel arms just before it converge at its pool.
// Siblings are written last first (see NormalFormDOT); a merge's id is
// its parent's and its place in the sequence.
func (d *nfDrawer) pieces(e *dotElement, parent string, ch *normalform.Chain) {
	ps := nfPieces(ch, nil)
	for i := len(ps) - 1; i >= 0; i-- {
		p := ps[i]
		if p.Leaf != nil {
			note := ""
			if s := e.swaps[p.Leaf.Pos]; s != nil {
				note = "⇄ " + swapText(d.c, s)
				if p.Leaf.Pos == e.ret {
					note = "↩ return " + swapText(d.c, s)
					if i > 0 && ps[i-1].Merged && ps[i-1].Rule.Parallel() && ps[i-1].Dest() == p.Leaf.From {
						note += "\nhub: the arms converge here"
					}
				}
			}
			d.edge(parent, d.leaf(p.Leaf, "transfer "+e.kind, note))
			continue
		}
		id := fmt.Sprintf("%s.%d", parent, i+1)
		par := p.Rule.Parallel()
		var ops []*normalform.Chain
		var label, class, opName string
		if par {
			ops = normalform.FlattenPar(p, nil)
			sort.SliceStable(ops, func(i, j int) bool { return ops[i].First.Pos < ops[j].First.Pos })
			label = fmt.Sprintf("∥ %d parallel arms (%s)\n%s → %s\n%s → %s", len(ops), p.Rule, d.c.Short(p.Origin()), d.c.Short(p.Dest()),
				d.c.TokenName(p.TokIn()), d.c.TokenName(p.TokOut()))
			class, opName = "parallel", "arm"
		} else {
			ops = flattenSum(p, nil)
			label = fmt.Sprintf("∘ %d loops at %s merged (%s)\n%s → %s", len(ops), d.c.Short(p.Origin()), p.Rule,
				d.c.TokenName(p.TokIn()), d.c.TokenName(p.TokOut()))
			class, opName = "merge", "loop"
		}
		d.node(id, "id", id, "class", class, "label", label, "shape", "box", "style", "rounded,filled", "fillcolor", "#e6f4ea", "peripheries", "2")
		d.edge(parent, id)
		for j := len(ops) - 1; j >= 0; j-- {
			op := ops[j]
			opID := fmt.Sprintf("%s.%d", id, j+1)
			var swaps []string
			for _, t := range op.Transfers(nil) {
				if s := e.swaps[t.Pos]; s != nil {
					if t.Pos == e.ret {
						swaps = append(swaps, swapText(d.c, s)+" (return)")
					} else {
						swaps = append(swaps, swapText(d.c, s))
					}
				}
			}
			opLabel := fmt.Sprintf("%s %d: %s → %s", opName, j+1, d.c.TokenName(op.TokIn()), d.c.TokenName(op.TokOut()))
			switch len(swaps) {
			case 0:
				opLabel += "\nno swap"
			case 1:
				opLabel += "\n1 swap: " + swaps[0]
			default:
				opLabel += fmt.Sprintf("\n%d swaps: ", len(swaps)) + strings.Join(swaps, "\n∘ ")
			}
			d.open(opID, "label", fmt.Sprintf("%s %d", opName, j+1), "style", "rounded,dashed", "color", "#3b8a4f", "fontsize", "9")
			d.node(opID, "id", opID, "class", opName, "label", opLabel, "shape", "box", "style", "rounded,filled", "fillcolor", "white")
			d.edge(id, opID)
			d.pieces(e, opID, op)
			d.close()
		}
	}
}

// NormalFormDOT renders the analysis's normal form as Graphviz DOT: the
// reduced tree. The root is the transaction's frame; under it, each
// element of the normal form in order. A chain is a cluster (an
// arbitrage's labelled with its id, origin and δ, boxed in its colour;
// other cycles grey; open chains and leftover cycles dashed) holding the
// chain's head (its term: Star, Cycle, Path or LC, with its tokens) and
// its composition: the sequence (∘) of transfers and merges; a parallel
// merge (∥, R7/R13, flattened and in trace order as the terms have it) has
// one cluster per arm with the arm's swaps; a merge of closed loops
// (R8/R9) one per loop. Each transfer is a box with its trace position,
// endpoints, amount and, where the token changes, the swap it makes (a
// Star's closing swap marked as its return, at the hub when the arms
// converge there). Leftovers and builder payments are grouped in clusters
// of their own. The verdict, tier and net profit are in the graph label.
//
// The tree grows left to right (rankdir=LR, ordering=out), and Graphviz
// lays a node's first child out at the bottom there; siblings, clusters
// and edges are therefore written last first, and the whole tree sits in
// one invisible cluster (without it, dot orders the top-level clusters
// the other way round), so that the picture reads top down in order:
// elements in normal-form order, a chain's pieces in chain order, arms in
// trace order, leftovers and costs below.
func NormalFormDOT(c *normalform.Config, a *normalform.Analysis) string {
	c = c.ForAnalysis(a)
	d := &nfDrawer{c: c, fills: map[normalform.Token]string{}, indent: "  "}
	for i := range a.Tx.Transfers {
		tk := a.Tx.Transfers[i].Token
		if _, ok := d.fills[tk]; !ok {
			d.fills[tk] = dotTokenFills[len(d.fills)%len(dotTokenFills)]
		}
	}
	b := &d.b
	b.WriteString("digraph " + dotQuote("normal form") + " {\n")
	fmt.Fprintf(b, "  graph%s;\n", dotAttrs("rankdir", "LR", "ordering", "out", "label", dotCaption(c, a, "normal form"), "labelloc", "t",
		"fontname", dotFont, "fontsize", "12", "nodesep", "0.12", "ranksep", "0.3"))
	fmt.Fprintf(b, "  node%s;\n", dotAttrs("shape", "box", "style", "rounded,filled", "fillcolor", "white", "fontname", dotFont, "fontsize", "10"))
	fmt.Fprintf(b, "  edge%s;\n", dotAttrs("color", "#8c8c8c", "arrowhead", "none"))
	rootLabel := "normal form"
	if a.NF == nil {
		rootLabel += "\n(empty: no transfer survives)"
	} else {
		f := a.NF.Frame
		rootLabel += fmt.Sprintf("\n%s %s ⇒ %s", f.Type, c.Short(f.From), c.Short(f.To))
	}
	d.open("nf", "style", "invis")
	d.node("nf", "id", "nf", "class", "root", "label", rootLabel, "fillcolor", "#eeeeee")
	elems := dotElements(c, a)
	terms := a.RenderTerms(c)
	var lefts, costs []*normalform.Transfer
	for _, e := range elems {
		switch {
		case e.kind == "cost":
			costs = append(costs, e.leaf)
		case e.leaf != nil:
			lefts = append(lefts, e.leaf)
		}
	}
	// Last first: the costs, the leftovers, then the chains from the last.
	group := func(id, title, class string, ts []*normalform.Transfer) {
		if len(ts) == 0 {
			return
		}
		color := dotLeftover
		if class == "transfer cost" {
			color = "#7f7f7f"
		}
		d.open(id, "label", fmt.Sprintf("%s (%d)", title, len(ts)), "style", "rounded,dashed", "color", color, "fontsize", "11")
		for _, t := range ts { // in order: dot stacks a cluster's own leaves top down
			d.edge("nf", d.leaf(t, class, ""))
		}
		d.close()
	}
	group("costs", "builder payments (costs)", "transfer cost", costs)
	group("leftovers", "leftovers", "transfer leftover", lefts)
	for k := len(elems) - 1; k >= 0; k-- {
		e := elems[k]
		if e.chain == nil {
			continue
		}
		ch := e.chain
		id := fmt.Sprintf("e%d", e.index)
		style, fill, color, width := "rounded,filled", "#f4f4f4", dotOtherCycle, "1.2"
		switch e.kind {
		case "arbitrage":
			fill, color, width = "#eef5fc", e.color, "2.5"
			if !e.counts {
				width = "1.5"
			}
		case "open":
			style, fill, color = "rounded,dashed", "white", dotOpen
		case "lc":
			style, fill, color = "rounded,filled,dashed", "#fff4e0", dotLC
		}
		d.open(id, "label", e.title, "style", style, "fillcolor", fill, "color", color, "penwidth", width, "fontsize", "11")
		term := ""
		if e.index < len(terms) {
			term = terms[e.index]
		}
		d.node(id, "id", id, "class", "chain "+e.kind, "label", chainHead(c, ch), "tooltip", term, "peripheries", "2",
			"fillcolor", map[bool]string{true: "#dbe9f6", false: "white"}[e.kind == "arbitrage"])
		d.edge("nf", id)
		d.pieces(e, id, ch)
		d.close()
	}
	d.close()
	for _, e := range d.edges {
		b.WriteString(e)
	}
	b.WriteString("}\n")
	return b.String()
}

// chainHead is a chain's head: its term's constructor, origin and tokens,
// its rule and size.
func chainHead(c *normalform.Config, ch *normalform.Chain) string {
	name := "Path"
	switch {
	case ch.Label == normalform.LeftoverCycle:
		name = "LC"
	case ch.Closed() && ch.Label == normalform.Arbitrage:
		name = "Star"
	case ch.Closed() && ch.Label == normalform.Cycle:
		name = "Cycle"
	case ch.Closed():
		name = "Cycle:" + ch.Label.String()
	}
	s := fmt.Sprintf("%s@%s\n%s → %s", name, c.Short(ch.Origin()), c.TokenName(ch.TokIn()), c.TokenName(ch.TokOut()))
	if !ch.Closed() {
		s += fmt.Sprintf("\nto %s", c.Short(ch.Dest()))
	}
	return s + fmt.Sprintf("\n∘ %d transfers · %s", ch.N, ch.Rule)
}
