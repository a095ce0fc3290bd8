package planner

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/flowq/flowq/index"
	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/normalform"
	"github.com/flowq/flowq/normalform/show"
)

// slowRow is recordRow as it was before rows were built with each value
// formatted once (every amount formatted twice, fmt for numbers): the
// reference the faster rows must equal, field for field.
func slowRow(cfg *normalform.Config, r *layout.Record) Row {
	block := ""
	if r.Loc.Block != layout.UnknownBlock {
		block = fmt.Sprint(r.Loc.Block)
	}
	reasons := make([]string, len(r.Reasons))
	for i, y := range r.Reasons {
		reasons[i] = string(y)
	}
	amounts := func(as []layout.Amount, known bool) (string, string) {
		if !known {
			return "", "unknown"
		}
		var m, h []string
		for _, a := range as {
			m = append(m, a.Token.Key()+":"+a.Amount.String())
			h = append(h, cfg.FormatSigned(a.Amount, a.Token))
		}
		if len(h) == 0 {
			return "", "0"
		}
		d := make(normalform.Delta, len(as))
		for i, a := range as {
			d[i] = normalform.DeltaEntry{Token: a.Token, Amount: a.Amount}
		}
		return strings.Join(m, ";"), show.FormatGross(cfg, d)
	}
	gm, gh := amounts(r.Gross, true)
	nm, nh := amounts(r.Net, r.CostsKnown)
	c := r.Counts
	num := func(n int) string { return fmt.Sprint(n) }
	return Row{
		{"tx", r.Hash.Hex(), r.Hash.Hex()},
		{"block", block, block},
		{"verdict", r.Verdict.String(), r.Verdict.String()},
		{"tier", r.Tier.String(), r.Tier.String()},
		{"path", r.Path.String(), r.Path.String()},
		{"gross", gm, gh},
		{"net", nm, nh},
		{"cycles", num(c.Cycles), num(c.Cycles)},
		{"pools", num(c.Pools), num(c.Pools)},
		{"hops", num(c.Hops), num(c.Hops)},
		{"leftovers", num(c.Leftovers), num(c.Leftovers)},
		addrField("bot", r.Recipient),
		{"reasons", strings.Join(reasons, ","), strings.Join(reasons, ", ")},
	}
}

// TestRecordRowSame: every record's row, machine and human values, is
// the one the previous row builder gave, over the test index (mainnet
// examples, scenarios, block 11017338) and a generated index of 2,000
// transactions; among them balances in several tokens, ETH and WETH
// together (folded), unknown costs, several reasons.
func TestRecordRowSame(t *testing.T) {
	gen, _ := generatedIndex(t, 20, 100)
	cfg := normalform.DefaultConfig()
	x := &Executor{Cfg: cfg}
	var multi, folded, unknown, reasons int
	for _, ix := range []*index.Index{testIndex, gen} {
		n := 0
		err := ix.Scan(context.Background(), func(r *layout.Record) error {
			n++
			got, want := x.recordRow(r), slowRow(cfg, r)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("tx %s: row\n%q\nwant\n%q", r.Hash.Hex(), got, want)
			}
			if len(r.Gross) > 1 {
				multi++
			}
			if strings.Contains(got.human("gross"), "(") {
				folded++
			}
			if !r.CostsKnown {
				unknown++
			}
			if len(r.Reasons) > 1 {
				reasons++
			}
			return nil
		})
		if err != nil || n == 0 {
			t.Fatalf("scan: %d records, %v", n, err)
		}
	}
	if multi == 0 || folded == 0 || unknown == 0 || reasons == 0 {
		t.Errorf("cases covered: %d multi-token, %d folded, %d unknown costs, %d several reasons; want each", multi, folded, unknown, reasons)
	}
}

func (r Row) human(name string) string {
	for _, f := range r {
		if f.Name == name {
			return f.Human
		}
	}
	return ""
}
