package show

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/flowq/flowq/normalform"
)

// FormatDelta renders a balance's entries (one address) for people.
func FormatDelta(c *normalform.Config, d normalform.Delta) string {
	if len(d) == 0 {
		return "0"
	}
	parts := make([]string, len(d))
	for i, e := range d {
		parts[i] = c.FormatSigned(e.Amount, e.Token)
	}
	return strings.Join(parts, ", ")
}

// FormatGross renders a balance in one unit per =_τ class: when two of its
// entries are one class (ETH and WETH), the folded amount first, then the
// per-token detail in parentheses.
func FormatGross(c *normalform.Config, d normalform.Delta) string {
	seen := map[normalform.Token]bool{}
	folds := false
	for _, e := range d {
		u := c.Unit(e.Token)
		folds = folds || seen[u]
		seen[u] = true
	}
	if !folds {
		return FormatDelta(c, d)
	}
	f, err := c.Fold(d)
	if err != nil {
		return FormatDelta(c, d)
	}
	return FormatDelta(c, f) + " (" + FormatDelta(c, d) + ")"
}

// WriteChain renders a chain as a tree: a chaining is the sequence of its
// pieces (transfers and merges), a merge lists its parallel arms.
func WriteChain(c *normalform.Config, b *strings.Builder, ch *normalform.Chain, indent string) {
	pieces := pieces(c, ch, nil)
	for i, p := range pieces {
		first, rest := indent+"├─ ", indent+"│  "
		if i == len(pieces)-1 {
			first, rest = indent+"└─ ", indent+"   "
		}
		if p.Leaf != nil {
			b.WriteString(first + LeafString(c, p.Leaf) + "\n")
			continue
		}
		arms := Arms(c, p, nil)
		fmt.Fprintf(b, "%s∥ %d parallel arms %s→%s, %s→%s (%s)\n", first, len(arms), c.Short(p.Origin()), c.Short(p.Dest()),
			c.TokenName(p.TokIn()), c.TokenName(p.TokOut()), p.Rule)
		for j, arm := range arms {
			af, ar := rest+"├─ ", rest+"│  "
			if j == len(arms)-1 {
				af, ar = rest+"└─ ", rest+"   "
			}
			fmt.Fprintf(b, "%sarm %d: %s→%s via %s\n", af, j+1, c.TokenName(arm.TokIn()), c.TokenName(arm.TokOut()), c.TokenName(arm.TokMid()))
			WriteChain(c, b, arm, ar)
		}
	}
}

// pieces flattens chaining (∘) into its sequence of leaves and merges.
func pieces(c *normalform.Config, ch *normalform.Chain, dst []*normalform.Chain) []*normalform.Chain {
	if ch.Leaf != nil || ch.Merged {
		return append(dst, ch)
	}
	dst = pieces(c, ch.Left, dst)
	return pieces(c, ch.Right, dst)
}

// Arms flattens nested merges (∥) into their operand list: the canonical
// map κ's flattening.
func Arms(c *normalform.Config, ch *normalform.Chain, dst []*normalform.Chain) []*normalform.Chain {
	if ch.Leaf == nil && ch.Merged {
		dst = Arms(c, ch.Left, dst)
		return Arms(c, ch.Right, dst)
	}
	return append(dst, ch)
}

// WriteAnalysis renders an analysis for people: the verdict and why, the
// profit, each cycle as a tree, the open chains, the leftovers and, when
// steps is set, the rewrite log.
func WriteAnalysis(c *normalform.Config, b *strings.Builder, a *normalform.Analysis, steps bool) {
	c = c.ForAnalysis(a)
	fmt.Fprintf(b, "verdict %s", strings.ToUpper(a.Verdict.String()))
	if a.Tier != normalform.TierNone {
		fmt.Fprintf(b, " (%s)", a.Tier)
	}
	rs := make([]string, len(a.Reasons))
	for i, r := range a.Reasons {
		rs[i] = string(r)
	}
	if len(rs) > 0 {
		fmt.Fprintf(b, "  reasons: %s", strings.Join(rs, ", "))
	}
	b.WriteByte('\n')
	if a.Tx.Mode() == normalform.ModeReceipts {
		b.WriteString("  mode: receipts (" + normalform.ReceiptsBlind + ")\n")
	}
	for i := range a.Detections {
		det := &a.Detections[i]
		fmt.Fprintf(b, "  arbitrage at %s (%s) in %s, gain %s, path %s, %s\n", c.Short(det.Origin), a.Role(det.Origin),
			c.TokenName(det.Token), c.FormatSigned(det.Gain, det.Token), det.Path, reading(det))
		fmt.Fprintf(b, "    witness (Definition 5, independent checker): %s\n", witnessText(c, det))
	}
	fmt.Fprintf(b, "  gross at %s: %s\n", coalitionName(c, a), FormatGross(c, a.Gross))
	if a.Costs.Known {
		fmt.Fprintf(b, "  costs: %s (base fee %s, priority fee %s, builder %s)\n", c.FormatAmount(&a.Costs.Total, normalform.NativeToken),
			c.FormatAmount(&a.Costs.BaseFee, normalform.NativeToken), c.FormatAmount(&a.Costs.Priority, normalform.NativeToken), c.FormatAmount(&a.Costs.Builder, normalform.NativeToken))
		fmt.Fprintf(b, "  net (native and wrapped folded): %s\n", FormatDelta(c, a.Net))
	} else {
		b.WriteString("  net: unknown (no receipt: gas cannot be charged)")
		if !a.Costs.Builder.IsZero() {
			fmt.Fprintf(b, "; builder payments %s", c.FormatAmount(&a.Costs.Builder, normalform.NativeToken))
		}
		b.WriteByte('\n')
	}
	if len(a.Payouts) > 0 {
		parts := make([]string, len(a.Payouts))
		for i, t := range a.Payouts {
			parts[i] = fmt.Sprintf("%s to %s (#%d)", c.FormatAmount(&t.Amount, t.Token), c.Short(t.To), t.Pos)
		}
		fmt.Fprintf(b, "  payouts: %s\n", strings.Join(parts, ", "))
		if kept, err := a.Kept(c); err == nil && kept != nil {
			fmt.Fprintf(b, "  kept after payouts: %s\n", FormatDelta(c, kept))
		}
	}
	if len(a.Unexplained) > 0 && len(a.Detections) > 0 {
		fmt.Fprintf(b, "  not explained by the cycles: %s\n", FormatDelta(c, a.Unexplained))
	}
	var open []*normalform.Chain
	var cycles []*normalform.Chain
	var nf []*normalform.Node
	if a.NF != nil {
		nf = a.NF.Children
	}
	for _, n := range nf {
		if n.Chain == nil {
			continue
		}
		if n.Chain.Closed() {
			cycles = append(cycles, n.Chain)
		} else {
			open = append(open, n.Chain)
		}
	}
	fmt.Fprintf(b, "cycles: %d\n", len(cycles))
	for _, ch := range cycles {
		tags := ""
		if ch.Promoted {
			tags += " [promoted]"
		}
		if det := a.DetectionOf(ch); det != nil {
			tags += fmt.Sprintf(" [counted: %s at %s]", det.Path, c.Short(det.Origin))
		} else if ch.Label == normalform.Arbitrage {
			tags += " [not counted: no witness]"
		}
		fmt.Fprintf(b, "  C%d %s at %s  %s→%s  δ %s  (%d transfers)%s\n", ch.ID, ch.Label, c.Short(ch.Origin()),
			c.TokenName(ch.TokIn()), c.TokenName(ch.TokOut()), FormatDelta(c, ch.BalanceOf(ch.Origin())), ch.N, tags)
		WriteChain(c, b, ch, "    ")
	}
	if len(open) > 0 {
		fmt.Fprintf(b, "open chains: %d\n", len(open))
		for _, ch := range open {
			fmt.Fprintf(b, "  C%d %s %s→%s  %s→%s\n", ch.ID, ch.Label, c.Short(ch.Origin()), c.Short(ch.Dest()), c.TokenName(ch.TokIn()), c.TokenName(ch.TokOut()))
			WriteChain(c, b, ch, "    ")
		}
	}
	fmt.Fprintf(b, "leftovers: %d\n", len(a.Leftover))
	for _, t := range a.Leftover {
		fmt.Fprintf(b, "  %s\n", LeafString(c, t))
	}
	if len(a.Internal) > 0 {
		fmt.Fprintf(b, "internal (between the principals and origins): %d\n", len(a.Internal))
		for _, t := range a.Internal {
			fmt.Fprintf(b, "  %s\n", LeafString(c, t))
		}
	}
	if len(a.Builder) > 0 {
		fmt.Fprintf(b, "builder payments: %d\n", len(a.Builder))
		for _, t := range a.Builder {
			fmt.Fprintf(b, "  %s\n", LeafString(c, t))
		}
	}
	if terms := a.RenderTerms(c); len(terms) > 0 {
		b.WriteString("terms:\n")
		for _, t := range terms {
			fmt.Fprintf(b, "  %s\n", t)
		}
	}
	if alpha, conv, ok, flash := a.StarFamily(c); ok {
		fam := "G"
		if flash {
			fam = "G^F (flash loan)"
		}
		fmt.Fprintf(b, "family: star %s_{%s,%s}\n", fam, c.TokenName(alpha), c.TokenName(conv))
	}
	h := a.Hashes()
	fmt.Fprintf(b, "hashes: exact %s shape %s tokens %s family %s\n", h.Exact.Hex()[:18], h.Shape.Hex()[:18], h.Tokens.Hex()[:18], h.Family.Hex()[:18])
	if steps {
		fmt.Fprintf(b, "steps: %d (annotation passes: %d)\n", len(a.Steps), a.Passes)
		for i, s := range c.StepTexts(a) {
			fmt.Fprintf(b, "  %3d %s\n", i+1, s)
		}
	}
}

// coalitionName says whose gross is reported: "the principals", and the
// inner origins by address when there are any.
func coalitionName(c *normalform.Config, a *normalform.Analysis) string {
	s := "the principals"
	for _, o := range a.Coalition() {
		if !a.Principal(o) {
			s += " and " + c.Short(o)
		}
	}
	return s
}

// reading says how a detection reads its chains.
func reading(d *normalform.Detection) string {
	ids := make([]string, len(d.Chains))
	for i, c := range d.Chains {
		ids[i] = "C" + strconv.Itoa(int(c.ID))
	}
	s := "reading " + strings.Join(ids, " + ")
	if len(d.Legs) > 0 {
		if len(ids) == 0 {
			s = "reading"
		} else {
			s += " and"
		}
		pos := make([]string, len(d.Legs))
		for i, t := range d.Legs {
			pos[i] = "#" + strconv.Itoa(int(t.Pos))
		}
		s += " the leftovers " + strings.Join(pos, " ")
	}
	if d.Start >= 0 {
		s += " from #" + strconv.Itoa(int(d.Start))
	}
	return s
}

// witnessText renders the witness: its pieces as trace positions and its
// gain in its token.
func witnessText(cfg *normalform.Config, d *normalform.Detection) string {
	w := d.Witness
	if w == nil {
		return "none"
	}
	var b strings.Builder
	n := w.Len()
	fmt.Fprintf(&b, "%d transfer", n)
	if n != 1 {
		b.WriteByte('s')
	}
	fmt.Fprintf(&b, " in %d piece", len(w.Pieces))
	if len(w.Pieces) != 1 {
		b.WriteByte('s')
	}
	b.WriteString(",")
	for i, p := range w.Pieces {
		if i > 0 {
			b.WriteString(" |")
		}
		for _, pos := range p {
			b.WriteString(" #" + strconv.Itoa(int(pos)))
		}
	}
	b.WriteString(", δ " + cfg.FormatSigned(normalform.Signed{Neg: w.Gain.Neg, Abs: w.Gain.Abs}, w.Token))
	return b.String()
}

// --- JSON (the output contract of NOTES.md) ---------------------------------

// CycleJSON is one closed chain of the normal form.
type CycleJSON struct {
	ID        int32   `json:"id"`
	Label     string  `json:"label"`
	Origin    string  `json:"origin"`
	TokenIn   string  `json:"token_in"`
	TokenOut  string  `json:"token_out"`
	Delta     Amounts `json:"delta"` // at the origin
	Transfers []int32 `json:"transfers"`
	Counted   bool    `json:"counted"`  // some detection reads it
	Promoted  bool    `json:"promoted"` // reached by the post-fixpoint promotion path
	Inner     bool    `json:"inner"`    // its detection's origin is not a principal
	Rule      string  `json:"rule"`
}

// StepJSON is one rewrite.
type StepJSON struct {
	Rule     string   `json:"rule"`
	Frame    int32    `json:"frame"`
	Operands []string `json:"operands"`
	Result   string   `json:"result"`
	Note     string   `json:"note,omitempty"`
}

// AnalysisJSON is one line of `flowq inspect --format json` and the
// answer of `show --format json`: the contract's TxJSON, then the
// receipt and the analysis in detail.
type AnalysisJSON struct {
	TxJSON
	ReceiptJSON
	Mode       string          `json:"mode"`         // traces, or receipts (normalform.ModeReceipts)
	Closed     []CycleJSON     `json:"cycle_chains"` // closed chains; the counted ones are the cycles
	Chains     []CycleJSON     `json:"chains"`       // open chains
	Detections []DetectionJSON `json:"detections"`
	Payouts    []int32         `json:"payouts"`
	Internal   []int32         `json:"internal_transfers"`
	Leftover   []int32         `json:"leftover_transfers"`
	Builder    []int32         `json:"builder_payments"`
	Profit     ProfitJSON      `json:"profit"`
	Transfers  []TransferJSON  `json:"transfers"`
	Passes     int             `json:"passes"`
	Terms      []string        `json:"terms"`
	Star       *StarJSON       `json:"star_family,omitempty"`
	Steps      []StepJSON      `json:"steps,omitempty"`
}

// DetectionJSON is one arbitrage found: its path, origin, token, gain (in
// the token's =_τ unit), the chains it reads and the independent checker's
// Definition 5 witness.
type DetectionJSON struct {
	Path    string      `json:"path"`
	Origin  string      `json:"origin"`
	Role    string      `json:"role"` // recipient, sender, or inner
	Token   string      `json:"token"`
	Unit    string      `json:"unit"`
	Gain    string      `json:"gain"`
	Chains  []int32     `json:"chains"`
	Legs    []int32     `json:"legs"`  // trace positions of the leftovers a settled bundle reads
	Start   *int32      `json:"start"` // trace position a rotated reading starts at; null when not rotated
	Witness WitnessJSON `json:"witness"`
}

// WitnessJSON is a Definition 5 witness: its pieces (trace positions) and
// δ at the origin in its token, exactly.
type WitnessJSON struct {
	Token  string    `json:"token"`
	Pieces [][]int32 `json:"pieces"`
	Gain   string    `json:"gain"`
}

// StarJSON says the normal form is a word of the star grammar G_{α,τ'}
// (flash: of its flash-loan extension G^F).
type StarJSON struct {
	Alpha       string `json:"alpha"`
	Convergence string `json:"convergence"`
	Flash       bool   `json:"flash"`
}

// ProfitJSON carries the balances at the principals (token keys are
// lowercase addresses; net folds the wrapped native into the native asset).
type ProfitJSON struct {
	Gross       Amounts    `json:"gross"`
	GrossFolded Amounts    `json:"gross_folded"` // gross with the wrapped native folded into the native asset
	Net         Amounts    `json:"net"`          // null when costs are unknown
	Costs       *CostsJSON `json:"costs"`
	Unexplained Amounts    `json:"unexplained"` // gross the detections do not account for (folded)
	Kept        Amounts    `json:"kept"`        // net less payouts; null when costs are unknown
}

// CostsJSON are the costs, in the native asset's base units.
type CostsJSON struct {
	GasUsed  uint64 `json:"gas_used"`
	BaseFee  string `json:"base_fee"`
	Priority string `json:"priority_fee"`
	Builder  string `json:"builder_payment"`
	Total    string `json:"total"`
}

func deltaMap(d normalform.Delta) Amounts { return AmountsOf(d) }

func positions(ts []*normalform.Transfer) []int32 {
	out := make([]int32, len(ts))
	for i, t := range ts {
		out[i] = t.Pos
	}
	return out
}

// MarshalAnalysis renders an analysis as one line of JSON.
func MarshalAnalysis(c *normalform.Config, a *normalform.Analysis, steps bool) ([]byte, error) {
	j := AnalysisJSON{TxJSON: TxSummary(c, a), ReceiptJSON: ReceiptToJSON(&a.Tx.Meta), Mode: a.Tx.Mode().String(),
		Closed: []CycleJSON{}, Chains: []CycleJSON{},
		Leftover: positions(a.Leftover), Builder: positions(a.Builder), Passes: a.Passes,
		Transfers: make([]TransferJSON, 0, len(a.Tx.Transfers))}
	j.Detections = make([]DetectionJSON, len(a.Detections))
	for i := range a.Detections {
		det := &a.Detections[i]
		dj := DetectionJSON{Path: det.Path.String(), Origin: normalform.AddrKey(det.Origin), Role: a.Role(det.Origin), Token: det.Token.Key(),
			Unit: c.Unit(det.Token).Key(), Gain: det.Gain.String(), Chains: make([]int32, len(det.Chains)),
			Witness: WitnessJSON{Token: det.Witness.Token.Key(), Pieces: det.Witness.Pieces, Gain: det.Witness.Gain.String()}}
		for k, ch := range det.Chains {
			dj.Chains[k] = ch.ID
		}
		dj.Legs = positions(det.Legs)
		if det.Start >= 0 {
			st := det.Start
			dj.Start = &st
		}
		j.Detections[i] = dj
	}
	j.Payouts, j.Internal = positions(a.Payouts), positions(a.Internal)
	if a.NF != nil {
		for _, n := range a.NF.Children {
			ch := n.Chain
			if ch == nil {
				continue
			}
			cj := CycleJSON{ID: ch.ID, Label: ch.Label.String(), Origin: normalform.AddrKey(ch.Origin()), TokenIn: ch.TokIn().Key(),
				TokenOut: ch.TokOut().Key(), Delta: deltaMap(ch.BalanceOf(ch.Origin())), Transfers: positions(ch.Transfers(nil)),
				Counted: a.Counted(ch), Promoted: ch.Promoted, Rule: ch.Rule.String()}
			if det := a.DetectionOf(ch); det != nil {
				cj.Inner = !a.Principal(det.Origin)
			}
			if ch.Closed() {
				j.Closed = append(j.Closed, cj)
			} else {
				j.Chains = append(j.Chains, cj)
			}
		}
	}
	j.Profit.Gross = deltaMap(a.Gross)
	if gf, err := c.Fold(a.Gross); err == nil {
		j.Profit.GrossFolded = deltaMap(gf)
	}
	j.Profit.Unexplained = deltaMap(a.Unexplained)
	if a.Costs.Known {
		j.Profit.Net = deltaMap(a.Net)
		if kept, err := a.Kept(c); err == nil {
			j.Profit.Kept = deltaMap(kept)
		}
		j.Profit.Costs = &CostsJSON{GasUsed: a.Costs.GasUsed, BaseFee: a.Costs.BaseFee.Dec(), Priority: a.Costs.Priority.Dec(),
			Builder: a.Costs.Builder.Dec(), Total: a.Costs.Total.Dec()}
	}
	for i := range a.Tx.Transfers {
		j.Transfers = append(j.Transfers, TransferToJSON(c, &a.Tx.Transfers[i]))
	}
	j.Terms = a.RenderTerms(c)
	if j.Terms == nil {
		j.Terms = []string{}
	}
	if alpha, conv, ok, flash := a.StarFamily(c); ok {
		j.Star = &StarJSON{Alpha: alpha.Key(), Convergence: conv.Key(), Flash: flash}
	}
	if steps {
		for _, s := range a.Steps {
			j.Steps = append(j.Steps, StepJSON{Rule: s.Rule.String(), Frame: s.Frame, Operands: s.Operands, Result: s.Result, Note: s.NoteText()})
		}
	}
	return json.Marshal(j)
}
