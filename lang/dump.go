package lang

import (
	"fmt"
	"strings"
)

func short(h string) string {
	if len(h) > 12 {
		return h[:6] + "…" + h[len(h)-4:]
	}
	return h
}

// whole writes a reference whole, or marked partial, as written.
func whole(h string, p Partial) string {
	if p.IsPartial() {
		return "partial " + p.String()
	}
	return h
}

// ref writes a reference: whole (shortened for the dump) or marked
// partial, as written.
func ref(h string, p Partial) string {
	if p.IsPartial() {
		return "partial " + p.String()
	}
	return short(h)
}

// Dump renders a node compactly, for tests and error messages, in time
// linear in its size (a chain of 20,000 "or" is as deep).
func Dump(n Node) string {
	var b strings.Builder
	dump(&b, n)
	return b.String()
}

func dump(b *strings.Builder, n Node) {
	switch x := n.(type) {
	case *And:
		b.WriteString("And(")
		dump(b, x.L)
		b.WriteString(", ")
		dump(b, x.R)
		b.WriteString(")")
	case *Or:
		b.WriteString("Or(")
		dump(b, x.L)
		b.WriteString(", ")
		dump(b, x.R)
		b.WriteString(")")
	case *Not:
		b.WriteString("Not(")
		dump(b, x.X)
		b.WriteString(")")
	default:
		b.WriteString(dumpOne(n))
	}
}

// dumpOne renders a node other than And, Or and Not.
func dumpOne(n Node) string {
	switch x := n.(type) {
	case *Explain:
		return "Explain(" + Dump(x.Query) + ")"
	case *Find:
		verdict := ""
		if v, ok := x.Target.Verdict(); ok {
			verdict = v.String()
		}
		parts := []string{verdict}
		if x.Where != nil {
			parts = append(parts, Dump(x.Where))
		}
		return "Find(" + strings.Join(append(parts, tail(x.Order, x.Limit)...), "; ") + ")"
	case *Same:
		lvl := "exact"
		if x.Level != nil {
			lvl = x.Level.Name
		}
		return fmt.Sprintf("Same(%s, %s, %s)", ref(x.A.Hash, x.A.Part), ref(x.B.Hash, x.B.Part), lvl)
	case *Match:
		lvl := "shape"
		if x.Level != nil {
			lvl = x.Level.Name
		}
		parts := []string{ref(x.Ref.Hash, x.Ref.Part) + ", " + lvl}
		if x.Where != nil {
			parts = append(parts, Dump(x.Where))
		}
		return "Match(" + strings.Join(append(parts, tail(x.Order, x.Limit)...), "; ") + ")"
	case *Anomalies:
		parts := []string{ref(x.Bot.Addr, x.Bot.Part)}
		if x.Since != nil {
			parts = append(parts, "since "+x.Since.Text)
		}
		if x.Baseline != nil {
			parts = append(parts, "baseline "+x.Baseline.From.Text+".."+x.Baseline.To.Text)
		}
		return "Anomalies(" + strings.Join(append(parts, tail(nil, x.Limit)...), "; ") + ")"
	case *Count:
		parts := []string{x.What.String() + " by " + x.By.Name}
		if x.Where != nil {
			parts = append(parts, Dump(x.Where))
		}
		return "Count(" + strings.Join(append(parts, tail(nil, x.Limit)...), "; ") + ")"
	case *Findings:
		parts := []string{x.Kind.String()}
		if x.Where != nil {
			parts = append(parts, Dump(x.Where))
		}
		return "Findings(" + strings.Join(append(parts, tail(x.Order, x.Limit)...), "; ") + ")"
	case *ShowBlock:
		return "ShowBlock(" + x.Block.Text + ")"
	case *Show:
		var vs []string
		for _, v := range x.Views {
			vs = append(vs, v.Name)
		}
		return "Show(" + ref(x.Tx.Hash, x.Tx.Part) + "; " + strings.Join(vs, ", ") + ")"
	case *Compare:
		v := x.Value.Number.Text
		if x.Value.Token != nil {
			v += " " + x.Value.Token.String()
		}
		return fmt.Sprintf("Compare(%s %s %s)", x.Metric, x.Op, v)
	case *Is:
		op := "="
		if x.Neg {
			op = "!="
		}
		return fmt.Sprintf("Is(%s %s %s)", x.Field, op, x.Value.Name)
	case *HasReason:
		return "HasReason(" + x.Reason.Name + ")"
	case *InBlocks:
		r := x.Range
		if r.Op != 0 {
			return "InBlocks(" + r.Op.String() + " " + r.From.Text + ")"
		}
		return "InBlocks(" + r.From.Text + ".." + r.To.Text + ")"
	case *AddrIs:
		op := "="
		if x.Neg {
			op = "!="
		}
		return fmt.Sprintf("AddrIs(%s %s %s)", x.Field, op, whole(x.Addr.Addr, x.Addr.Part))
	case *Touches:
		return "Touches(" + x.Target.String() + ")"
	case *FlashLoan:
		return "FlashLoan"
	case *HashIs:
		return fmt.Sprintf("HashIs(%s = %s)", x.Level.Name, ref(x.Hash.Hash, x.Hash.Part))
	}
	return fmt.Sprintf("%T", n)
}

func tail(o *Order, l *Limit) []string {
	var out []string
	if o != nil {
		d := "asc"
		if o.Desc {
			d = "desc"
		}
		out = append(out, "order "+o.Metric.String()+" "+d)
	}
	if l != nil {
		out = append(out, "limit "+l.N.Text)
	}
	return out
}
