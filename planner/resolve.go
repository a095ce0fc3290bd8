package planner

import (
	"context"
	"fmt"
	"strings"

	"github.com/flowq/flowq/index/layout"
	"github.com/flowq/flowq/lang"
	"github.com/flowq/flowq/normalform"
)

// Shortened references (0x3db1…dcfa, 0x0000c…10000, a prefix 0x3db1a7)
// are resolved once per statement, when it is planned, through
// Source.Resolve: each is replaced in the statement by the one value of
// the index it names, so that the plan, and explain, read the whole
// value. None, or more than one, is an error at the reference.

// Resolution bounds: the values asked of the index for one reference
// (the count an ambiguous one reports is at most this), and the ones its
// error lists.
const (
	resolveMax    = 100
	resolveListed = 5
)

// resolveRefs resolves the shortened references of a statement in place.
// The filter is walked with its own stack (a chain of 20,000 "or" is as
// deep).
func (pl *Planner) resolveRefs(st lang.Statement) error {
	if e, ok := st.(*lang.Explain); ok {
		st = e.Query
	}
	tx := func(t *lang.TxRef) error {
		if t == nil || !t.Part.IsPartial() {
			return nil
		}
		h, err := pl.resolve(t, t.Part, layout.KindTxHash, 0, "transaction", "transactions")
		t.Hash = h
		return err
	}
	addr := func(a *lang.AddrLit) error {
		if a == nil || !a.Part.IsPartial() {
			return nil
		}
		v, err := pl.resolve(a, a.Part, layout.KindFirst, 0, "bot", "bots")
		a.Addr = v
		return err
	}
	var where lang.Expr
	switch x := st.(type) {
	case *lang.Same:
		return firstErr(tx(x.A), tx(x.B))
	case *lang.Show:
		return tx(x.Tx)
	case *lang.Match:
		if err := tx(x.Ref); err != nil {
			return err
		}
		where = x.Where
	case *lang.Anomalies:
		return addr(x.Bot)
	case *lang.Find:
		where = x.Where
	case *lang.Findings:
		where = x.Where
	case *lang.Count:
		where = x.Where
	}
	stack := []lang.Expr{where}
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		var err error
		switch x := e.(type) {
		case *lang.And:
			stack = append(stack, x.R, x.L)
		case *lang.Or:
			stack = append(stack, x.R, x.L)
		case *lang.Not:
			stack = append(stack, x.X)
		case *lang.AddrIs:
			err = addr(x.Addr)
		case *lang.Touches:
			if t := x.Target; t != nil && t.Part.IsPartial() {
				t.Address, err = pl.resolve(t, t.Part, layout.KindFirst, 0, "bot", "bots")
			}
		case *lang.HashIs:
			if h := x.Hash; h != nil && h.Part.IsPartial() {
				what := x.At.String() + " hash"
				h.Hash, err = pl.resolve(h, h.Part, layout.KindHash, x.At, what, what+"es")
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// resolve finds the one value of the index that a shortened reference
// names: one, one of many, many.
func (pl *Planner) resolve(n lang.Node, p lang.Partial, by layout.Kind, level normalform.Level, one, many string) (string, error) {
	if pl.Src == nil {
		whole := map[layout.Kind]string{layout.KindTxHash: "transaction hash", layout.KindFirst: "address", layout.KindHash: "hash"}[by]
		return "", pl.errAt(n, "%s is shortened: it is resolved through an index, and there is none here (write the whole %s)", p, whole)
	}
	got, err := pl.Src.Resolve(context.Background(), by, level, p.Prefix, p.Suffix, resolveMax)
	if err != nil {
		return "", pl.errAt(n, "%s: %v", p, err)
	}
	reads := func(s string) string { // s: "s" for one, "" for many
		if p.Suffix != "" {
			return fmt.Sprintf("read%s %s (start%s with 0x%s and end%s with %s)", s, p, s, p.Prefix, s, p.Suffix)
		}
		return "start" + s + " with " + p.String()
	}
	switch len(got) {
	case 1:
		return got[0], nil
	case 0:
		msg := fmt.Sprintf("no %s in the index %s", one, reads("s"))
		if by == layout.KindFirst {
			msg = fmt.Sprintf("no bot in the index has an address that %s: the index keeps bots' (recipients') addresses whole, and the addresses a transaction only sends from or touches by a hashed tag, which no prefix finds (write such an address whole)", reads("s"))
		}
		return "", pl.errAt(n, "%s", msg)
	}
	count := fmt.Sprint(len(got))
	if len(got) >= resolveMax {
		count = fmt.Sprintf("at least %d", resolveMax)
	}
	list := got[:min(len(got), resolveListed)]
	more := ""
	if len(got) > len(list) {
		more = ", …"
	}
	return "", pl.errAt(n, "%s is ambiguous: %s %s in the index %s: %s%s (write more of its digits)", p, count, many, reads(""), strings.Join(list, ", "), more)
}
